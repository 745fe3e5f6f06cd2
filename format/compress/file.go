package compress

import (
	"errors"
	"io"
	"os"
	"sync"
)

var errNegativeOffset = errors.New("negative offset")

// plainFile is an uncompressed file: the *os.File does everything.
type plainFile struct {
	*os.File
	name   string
	size   int64  // at Open
	mapped []byte // see Map
}

// Close unmaps the file, if it was mapped, and closes it.
func (f *plainFile) Close() error {
	f.unmap()
	return f.File.Close()
}

func (f *plainFile) Name() string { return f.name }

// PlainOS returns the open file under f when f is a plain (uncompressed)
// file as Open gives it, and nil otherwise: its bytes on disk are the
// bytes f reads.
func PlainOS(f File) *os.File {
	if p, ok := f.(*plainFile); ok {
		return p.File
	}
	return nil
}

func (f *plainFile) Size() int64 {
	if fi, err := f.File.Stat(); err == nil {
		return fi.Size()
	}
	return f.size
}

// source is the random-access core of a decoded file.
type source interface {
	// readAt is io.ReaderAt's ReadAt, except that with short set it may
	// return fewer bytes than asked without an error (Read uses that to
	// avoid decoding a block it does not yet need).
	readAt(p []byte, off int64, short bool) (int, error)
	close() error
}

// file turns a source into a File.
type file struct {
	name string
	size int64
	src  source

	mu     sync.Mutex // guards pos and closed
	pos    int64
	closed bool
}

func newFile(name string, size int64, src source) *file {
	return &file{name: name, size: size, src: src}
}

func (f *file) Name() string { return f.name }
func (f *file) Size() int64  { return f.size }

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &os.PathError{Op: "readat", Path: f.name, Err: errNegativeOffset}
	}
	if off >= f.size {
		return 0, io.EOF
	}
	want := len(p)
	if rest := f.size - off; int64(want) > rest {
		p = p[:rest]
	}
	n, err := f.src.readAt(p, off, false)
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

func (f *file) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if f.pos >= f.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if rest := f.size - f.pos; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := f.src.readAt(p, f.pos, true)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = f.pos + offset
	case io.SeekEnd:
		abs = f.size + offset
	default:
		return 0, &os.PathError{Op: "seek", Path: f.name, Err: errors.New("invalid whence")}
	}
	if abs < 0 {
		return 0, &os.PathError{Op: "seek", Path: f.name, Err: errNegativeOffset}
	}
	f.pos = abs
	return abs, nil
}

func (f *file) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return os.ErrClosed
	}
	f.closed = true
	f.mu.Unlock()
	return f.src.close()
}

// readerAtSource serves bytes from an io.ReaderAt as they are.
type readerAtSource struct{ r io.ReaderAt }

func (s readerAtSource) readAt(p []byte, off int64, _ bool) (int, error) { return s.r.ReadAt(p, off) }
func (s readerAtSource) close() error                                    { return nil }

// closeBoth closes the decoded storage and then the compressed input.
func closeBoth(a error, c io.Closer) error {
	if c == nil {
		return a
	}
	if err := c.Close(); a == nil {
		a = err
	}
	return a
}

var (
	_ File   = (*file)(nil)
	_ File   = (*plainFile)(nil)
	_ Mapper = (*plainFile)(nil)
)

// Warmer is implemented by files made of independently decoded blocks
// (xz, seekable zstd): Warm starts decoding, in the background, the block
// that holds offset off, unless it is cached or under way, so that a
// reader that comes to it later finds it decoded.
type Warmer interface {
	Warm(off int64)
}

// Warm implements Warmer for a file whose source is made of segments; for
// others it does nothing.
func (f *file) Warm(off int64) {
	s, ok := f.src.(*segSource)
	if !ok || off < 0 || off >= f.size {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.prefetch(s.find(off))
	}
}
