//go:build linux

package pipe

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spliceBuf is the Writer's buffer when the stream goes into a pipe: full
// buffers are handed to the pipe with vmsplice(2), which puts the
// buffer's pages in the pipe instead of copying them into pages of its
// own, so the only copy left is the reader's. BenchmarkFrameBufPipe, 256
// MiB through a pipe to a reader: 2.1-2.3 GB/s and 0.68-0.75 s of system
// time a GiB (both sides) with write(2), 7.0-9.6 GB/s and 0.13-0.16 s
// with vmsplice (AMD EPYC family 25; docs/benchmarks.md).
//
// A page handed over must not change until the reader has read it. Two
// buffers, each the size of the pipe, take turns: a buffer is spliced only
// when full, so once one has gone in whole, the pipe (which holds at most
// its size in pages, in order) can no longer hold any page of the other,
// and that one is filled again. A Flush of a part-full buffer (a sample
// a recorder wants seen now, the END frame) writes those bytes with
// write(2), a copy, and leaves the buffer free. If the pipe grows past
// the buffers' size (its reader may resize it), they are not reused: new
// ones of the new size are made. Unmapping a buffer (then, or when the
// Writer ends) is safe even while the pipe holds its pages: the pipe keeps
// its own references to them, and unmapping changes no byte.
type spliceBuf struct {
	f    *os.File
	fd   int
	bufs [2][]byte
	cur  int // the buffer being filled
	n    int // bytes in it
	err  error
}

// newFrameBuf returns a spliceBuf when w is a pipe whose size the kernel
// tells, and a bufio.Writer of size bytes otherwise.
func newFrameBuf(w io.Writer, size int) frameBuf {
	f, ok := w.(*os.File)
	if !ok || noSplice {
		return newBufio(w, size)
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return newBufio(w, size)
	}
	psz, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil || psz <= 0 {
		return newBufio(w, size)
	}
	s := &spliceBuf{f: f, fd: int(f.Fd())}
	if !s.alloc(psz) {
		return newBufio(w, size)
	}
	return s
}

// noSplice makes every Writer buffer with bufio (tests comparing).
var noSplice = false

// alloc maps two buffers of at least size bytes, whole pages, in place of
// any it had.
func (s *spliceBuf) alloc(size int) bool {
	s.release()
	page := os.Getpagesize()
	size = (size + page - 1) / page * page
	for i := range s.bufs {
		b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return false
		}
		s.bufs[i] = b
	}
	s.cur, s.n = 0, 0
	return true
}

// release unmaps the buffers; the spliceBuf is not used after.
func (s *spliceBuf) release() {
	for i, b := range s.bufs {
		if b != nil {
			unix.Munmap(b)
			s.bufs[i] = nil
		}
	}
}

func (s *spliceBuf) Available() int { return len(s.bufs[s.cur]) - s.n }

func (s *spliceBuf) AvailableBuffer() []byte { return s.bufs[s.cur][s.n:s.n] }

func (s *spliceBuf) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	buf := s.bufs[s.cur]
	if len(p) > 0 && s.n < len(buf) && unsafe.SliceData(p) == &buf[s.n] && len(p) <= len(buf)-s.n {
		s.n += len(p) // built in AvailableBuffer's room
		if s.n == len(buf) {
			s.splice()
		}
		return len(p), s.err
	}
	written := 0
	for len(p) > 0 && s.err == nil {
		k := copy(s.bufs[s.cur][s.n:], p)
		s.n += k
		p = p[k:]
		written += k
		if s.n == len(s.bufs[s.cur]) {
			s.splice()
		}
	}
	return written, s.err
}

// splice hands the full buffer to the pipe and turns to the other.
func (s *spliceBuf) splice() {
	b := s.bufs[s.cur][:s.n]
	for len(b) > 0 {
		iov := []unix.Iovec{{Base: &b[0]}}
		iov[0].SetLen(len(b))
		m, err := unix.Vmsplice(s.fd, iov, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// Written as a copy instead, the bytes left meet the same
			// error, and a standard output whose reader has gone
			// takes the same SIGPIPE as from any other write.
			_, s.err = s.f.Write(b)
			if s.err == nil {
				break
			}
			return
		}
		b = b[m:]
	}
	s.cur ^= 1
	s.n = 0
	if psz, err := unix.FcntlInt(uintptr(s.fd), unix.F_GETPIPE_SZ, 0); err == nil && psz > len(s.bufs[s.cur]) {
		// the pipe grew: the other buffer's pages may still be in it
		if !s.alloc(psz) {
			s.err = &os.PathError{Op: "mmap", Path: s.f.Name(), Err: unix.ENOMEM}
		}
	}
}

// Flush writes the bytes of the buffer being filled with write(2).
func (s *spliceBuf) Flush() error {
	if s.err != nil || s.n == 0 {
		return s.err
	}
	_, err := s.f.Write(s.bufs[s.cur][:s.n])
	s.n = 0
	if err != nil {
		s.err = err
	}
	return s.err
}

// spliceFile is splice(2) (tests stand in one that fails).
var spliceFile = unix.Splice

// spliceFrom writes what is buffered, then moves n bytes of f at off into
// the pipe with splice(2): the pipe takes references to f's cached pages.
// Where the kernel will not (or the reader has gone), the bytes left are
// read and written instead, and meet the same error, SIGPIPE included,
// as any other write.
func (s *spliceBuf) spliceFrom(f *os.File, off int64, n int) error {
	if err := s.Flush(); err != nil {
		return err
	}
	for n > 0 {
		k, err := spliceFile(int(f.Fd()), &off, s.fd, nil, n, unix.SPLICE_F_MOVE|unix.SPLICE_F_MORE)
		if err == unix.EINTR {
			continue
		}
		if err != nil || k <= 0 {
			break
		}
		n -= int(k) // (the kernel moved off on)
	}
	if n == 0 {
		return nil
	}
	buf := make([]byte, min(n, 1<<20))
	for n > 0 && s.err == nil {
		k, err := f.ReadAt(buf[:min(n, len(buf))], off)
		if k > 0 {
			_, s.err = s.f.Write(buf[:k])
		}
		if err != nil && s.err == nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the file shrank
			}
			s.err = &os.PathError{Op: "read", Path: f.Name(), Err: err}
		}
		off += int64(k)
		n -= k
	}
	return s.err
}
