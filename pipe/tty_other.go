//go:build !linux

package pipe

import "os"

// isTTY is called for character devices only. Without a portable isatty
// in the standard library, every character device but the null device
// counts as a terminal: refusing to write a stream to /dev/zero is no loss.
func isTTY(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
