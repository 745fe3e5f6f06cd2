package format

import (
	"golang.org/x/sys/unix"
)

// nextData returns the offset of the first byte at or after off that is
// not in a hole of f, or -1 when only holes follow, for a plain file whose
// system can say (SEEK_DATA); ok is false when it cannot. The file
// position is left where it was.
func nextData(f any, off int64) (next int64, ok bool) {
	fd, isFile := f.(interface{ Fd() uintptr })
	if !isFile {
		return 0, false
	}
	h := int(fd.Fd())
	cur, err := unix.Seek(h, 0, unix.SEEK_CUR)
	if err != nil {
		return 0, false
	}
	defer unix.Seek(h, cur, unix.SEEK_SET)
	next, err = unix.Seek(h, off, unix.SEEK_DATA)
	switch err {
	case nil:
		return next, true
	case unix.ENXIO:
		return -1, true
	}
	return 0, false
}
