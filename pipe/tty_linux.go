package pipe

import (
	"os"
	"syscall"
	"unsafe"
)

// isTTY asks the kernel whether f is a terminal (isatty(3)): only a
// terminal answers the TCGETS ioctl. SyscallConn is used rather than Fd,
// which would switch the file to blocking mode.
func isTTY(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	_ = rc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
		tty = errno == 0
	})
	return tty
}
