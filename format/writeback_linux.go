package format

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts the write-back of a range of f; errors are left
// to the sync that follows.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// copyRange copies n bytes of src at off to f at its file position, in
// the kernel (copy_file_range(2)); ok false, nothing copied, where the
// kernel cannot (file systems it cannot copy between, an old kernel).
func copyRange(f, src *os.File, off, n int64) (copied int64, ok bool, err error) {
	for copied < n {
		o := off + copied
		k, err := unix.CopyFileRange(int(src.Fd()), &o, int(f.Fd()), nil, int(min(n-copied, 1<<30)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if copied == 0 && (err == unix.EXDEV || err == unix.EINVAL || err == unix.ENOSYS || err == unix.EOPNOTSUPP) {
				return 0, false, nil
			}
			return copied, true, err
		}
		if k == 0 {
			return copied, true, io.ErrUnexpectedEOF // the source shrank
		}
		copied += int64(k)
	}
	return copied, true, nil
}

// dupFile returns a file of its own on what f has open.
func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: err}
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
