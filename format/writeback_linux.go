package format

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts the write-back of a range of f; errors are left
// to the sync that follows.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
