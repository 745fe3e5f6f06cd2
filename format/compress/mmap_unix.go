//go:build unix

package compress

import (
	"os"

	"golang.org/x/sys/unix"
)

// PageSize is the unit of Release.
var PageSize = os.Getpagesize()

// Release gives back the pages of b, a page-aligned part of a mapping from
// Map: they no longer count in the process's memory, and a later access
// reads them in again (from the page cache, normally).
func Release(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}

// maxMap bounds a mapping; anything larger is read as a stream.
const maxMap = 1 << 40

// Map maps the file's first n bytes. A file truncated by another process
// while mapped makes a later access to the lost pages fault (SIGBUS); the
// archive tools never truncate their inputs, and PCP's loggers only append.
func (f *plainFile) Map(n int64) ([]byte, bool) {
	if f.mapped != nil {
		return f.mapped[:min(int64(len(f.mapped)), n)], true
	}
	if n <= 0 || n > maxMap {
		return nil, false
	}
	b, err := unix.Mmap(int(f.File.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	// Read ahead aggressively: the reader walks the file from start to end.
	_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	f.mapped = b
	return b, true
}

func (f *plainFile) unmap() {
	if f.mapped != nil {
		_ = unix.Munmap(f.mapped)
		f.mapped = nil
	}
}
