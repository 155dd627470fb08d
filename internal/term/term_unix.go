//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package term

import (
	"syscall"
	"unsafe"
)

// isTTY asks the terminal driver for fd's attributes: only a terminal has
// them.
func isTTY(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlGetTermios, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// ttyWidth asks the terminal driver for fd's window size; 0 if unknown.
func ttyWidth(fd uintptr) int {
	var ws struct{ Row, Col, X, Y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.Col)
}
