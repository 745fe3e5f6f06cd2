package format

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/pcptools/pcptools/format/compress"
)

// Buffer sizes: a data volume is read 1 MiB at a time (records are framed
// in place, so the buffer is also the home of the record being decoded);
// metadata records are smaller and fewer.
const (
	dataBufSize = 1 << 20
	metaBufSize = 64 << 10
	minBufSize  = 4 << 10
	// maxWindow caps how much of a mapped volume stays resident behind
	// the reader: releasing pages is cheap, so a small window costs
	// little time and keeps a merge of many inputs small.
	maxWindow = 256 << 10
)

// recReader frames the records of one file: [len:4][payload][len:4]. A
// record is returned as a slice of the reader's buffer, valid until the
// next call. The buffer grows for a record larger than itself, but only
// when it is full of bytes the file really delivered, so a lying length
// word cannot make it allocate more than twice what the file holds.
type recReader struct {
	f      io.Reader
	name   string
	buf    []byte
	heap   []byte      // the reader's own buffer, kept while buf is a mapping
	mapped bool        // buf is the whole file, mapped
	window int         // mapped: how far behind r pages may stay resident
	kept   int         // mapped: pages before buf[kept] are released
	pf     *prefetcher // mapped, when the reader's consumer checks: see prefetcher
	r, w   int         // buf[r:w] is read but not consumed
	off    int64       // file offset of buf[r]
	eof    bool
	err    error // read error other than io.EOF
}

// reset points rr at f, whose next byte is at file offset off. size
// bounds the initial buffer (the file's size, when known). With mapOK, a
// plain file is mapped instead (see compress.Mapper): the whole file is
// then "read", the buffer is the mapping, and bufSize is how much of it
// may stay resident behind the record being read, so that memory stays
// flat in the file's length.
func (rr *recReader) reset(f io.Reader, name string, off int64, bufSize int, size int64, mapOK bool) {
	rr.f, rr.name, rr.off = f, name, off
	rr.r, rr.w = 0, 0
	rr.eof, rr.err = false, nil
	if rr.mapped {
		rr.buf, rr.heap, rr.mapped = rr.heap, nil, false
	}
	if m, ok := f.(compress.Mapper); ok && mapOK && size > off {
		if b, ok := m.Map(size); ok && int64(len(b)) == size {
			rr.heap, rr.buf, rr.mapped = rr.buf, b, true
			rr.window, rr.kept = min(max(bufSize, minBufSize), maxWindow), 0
			rr.r, rr.w = int(off), len(b)
			rr.off = off
			rr.eof = true
			return
		}
	}
	want := bufSize
	if size >= 0 && size-off < int64(want) {
		want = int(max(size-off, 0))
	}
	want = max(want, minBufSize)
	if len(rr.buf) < want {
		rr.buf = make([]byte, want)
	}
}

// fill tries to have n unconsumed bytes in the buffer. It reports false
// when the file ends (or a read fails, see rr.err) first.
func (rr *recReader) fill(n int) bool {
	stalls := 0
	for rr.w-rr.r < n {
		if rr.eof || rr.err != nil {
			return false
		}
		if rr.r > 0 && rr.r+n > len(rr.buf) {
			rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
			rr.r = 0
		}
		if rr.w == len(rr.buf) {
			// Full of real bytes and still short: at most double.
			nl := min(max(2*len(rr.buf), minBufSize), n)
			nb := make([]byte, nl)
			copy(nb, rr.buf[:rr.w])
			rr.buf = nb
		}
		m, err := rr.f.Read(rr.buf[rr.w:])
		rr.w += m
		switch {
		case err == io.EOF:
			rr.eof = true
		case err != nil:
			rr.err = err
		case m == 0:
			if stalls++; stalls > 100 {
				rr.err = io.ErrNoProgress
			}
		}
	}
	return true
}

// frameDamage is a record that cannot be framed. tail says that nothing
// valid can follow it in the file: the file ends inside it, or only zero
// bytes follow (a logger that crashed, or one still writing).
type frameDamage struct {
	off  int64
	msg  string
	tail bool
}

func (d *frameDamage) Error() string { return fmt.Sprintf("offset %d: %s", d.off, d.msg) }

// rest scans the file from buf[from] to its end, reporting whether those
// bytes are all zero and how many there are. The buffer's content is lost.
func (rr *recReader) rest(from int) (zero bool, n int64, err error) {
	if rr.mapped {
		zero, n = rr.restMapped(from)
		rr.r, rr.w = 0, 0
		return zero, n, nil
	}
	zero = true
	scan := func(b []byte) {
		n += int64(len(b))
		if zero {
			for _, c := range b {
				if c != 0 {
					zero = false
					break
				}
			}
		}
	}
	scan(rr.buf[from:rr.w])
	pos := rr.off + int64(rr.w-rr.r) // the file offset of the next read
	rr.r, rr.w = 0, 0
	stalls := 0
	for !rr.eof && rr.err == nil {
		if zero {
			// Skip the holes of a sparse file rather than read
			// them: a volume of 10 GiB of holes answers at once.
			if q, ok := rr.skipHoles(pos); ok {
				n += q - pos
				if pos = q; rr.eof {
					break
				}
			}
		}
		m, err := rr.f.Read(rr.buf)
		scan(rr.buf[:m])
		pos += int64(m)
		switch {
		case err == io.EOF:
			rr.eof = true
		case err != nil:
			rr.err = err
		case m == 0:
			if stalls++; stalls > 100 {
				rr.err = io.ErrNoProgress
			}
		}
	}
	return zero, n, rr.err
}

// skipHoles moves the read position of a plain file from pos to the next
// byte that is not in a hole, and returns its offset; when only holes
// follow, it returns the file's size and sets rr.eof. ok is false when
// the file cannot say (not a plain file, or a system without SEEK_DATA).
func (rr *recReader) skipHoles(pos int64) (next int64, ok bool) {
	sf, isFile := rr.f.(interface {
		io.Seeker
		Size() int64
	})
	if !isFile {
		return 0, false
	}
	q, ok := nextData(rr.f, pos)
	switch {
	case !ok || q == pos:
		return pos, ok
	case q < 0:
		rr.eof = true
		return max(sf.Size(), pos), true
	}
	if _, err := sf.Seek(q, io.SeekStart); err != nil {
		return 0, false
	}
	return q, true
}

// restMapped is rest for a mapped file, whose length is known: it looks
// at the bytes a window at a time, releasing each window behind it, stops
// at the first byte that is not zero, and skips the holes of a sparse
// file, so that a volume of 10 GiB of zeros after a damaged length word
// is neither paged in nor held (it was, whole: TestRestSparseZeros).
func (rr *recReader) restMapped(from int) (zero bool, n int64) {
	b := rr.buf
	n = int64(len(b) - from)
	for p := from; p < len(b); {
		if q, ok := nextData(rr.f, int64(p)); ok {
			if q < 0 || q >= int64(len(b)) {
				return true, n
			}
			p = max(p, int(q))
		}
		end := min(p+dataBufSize, len(b))
		for _, c := range b[p:end] {
			if c != 0 {
				return false, n
			}
		}
		if lo, hi := p&^(compress.PageSize-1), end&^(compress.PageSize-1); hi > lo {
			compress.Release(b[lo:hi])
		}
		p = end
	}
	return true, n
}

func (rr *recReader) readErr() error {
	return &FormatError{File: rr.name, Offset: rr.off + int64(rr.w-rr.r), Msg: "read failed", Err: rr.err}
}

// frame returns the next record, with both length words, and its file
// offset; io.EOF at a clean end of file. Damage is a *frameDamage; read
// failures are a *FormatError.
func (rr *recReader) frame(minLen int) (rec []byte, off int64, err error) {
	off = rr.off
	if !rr.fill(4) {
		if rr.err != nil {
			return nil, off, rr.readErr()
		}
		if rr.w == rr.r {
			return nil, off, io.EOF
		}
		return nil, off, &frameDamage{off, fmt.Sprintf("%d stray bytes at the end of the file, too few for a length word", rr.w-rr.r), true}
	}
	n := binary.BigEndian.Uint32(rr.buf[rr.r:])
	if n < uint32(minLen) || n > MaxRecord {
		zero, left, err := rr.rest(rr.r)
		if err != nil {
			return nil, off, rr.readErr()
		}
		tail := zero || left < int64(minLen) || (n > MaxRecord && int64(n) > left)
		return nil, off, &frameDamage{off, fmt.Sprintf("impossible record length %d (%d bytes left in the file)", n, left), tail}
	}
	if !rr.fill(int(n)) {
		if rr.err != nil {
			return nil, off, rr.readErr()
		}
		return nil, off, &frameDamage{off, fmt.Sprintf("record of %d bytes runs past the end of the file (%d bytes left)", n, rr.w-rr.r), true}
	}
	if t := binary.BigEndian.Uint32(rr.buf[rr.r+int(n)-4:]); t != n {
		zero, _, err := rr.rest(rr.r + int(n))
		if err != nil {
			return nil, off, rr.readErr()
		}
		return nil, off, &frameDamage{off, fmt.Sprintf("header length %d does not match trailer length %d", n, t), zero}
	}
	if rr.pf != nil {
		// The prefetcher reads ahead and releases behind.
		if rr.r-rr.kept >= rr.window/4 {
			rr.pf.tell(rr.r)
			rr.kept = rr.r
		}
	} else if rr.mapped && rr.r-rr.kept >= rr.window {
		// Let go of the pages behind this record (they stay in the
		// page cache; only this process's hold on them goes).
		rr.kept = releaseBefore(rr.buf, rr.kept, rr.r)
	}
	rec = rr.buf[rr.r : rr.r+int(n)]
	rr.r += int(n)
	rr.off += int64(n)
	return rec, off, nil
}

// releaseBefore releases the pages of the mapping b from offset kept (a
// page boundary) up to the page that holds offset to, and returns where
// the released pages now end.
func releaseBefore(b []byte, kept, to int) int {
	to &^= compress.PageSize - 1
	if to <= kept {
		return kept
	}
	compress.Release(b[kept:to])
	return to
}
