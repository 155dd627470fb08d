package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// terminal is a pseudo-terminal for tests: tty is what the command gets
// as its standard streams, a real terminal to it; Screen is what it wrote
// there, as a person would see it.
type terminal struct {
	tty    *os.File
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan struct{}
}

func ioctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// newTerminal opens a pseudo-terminal of cols columns.
func newTerminal(t *testing.T, cols int) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminal here: ", err)
	}
	var unlock int32
	require.NoError(t, ioctl(master.Fd(), syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)))
	var n uint32
	require.NoError(t, ioctl(master.Fd(), syscall.TIOCGPTN, unsafe.Pointer(&n)))
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	ws := struct{ Row, Col, X, Y uint16 }{Row: 50, Col: uint16(cols)}
	require.NoError(t, ioctl(tty.Fd(), syscall.TIOCSWINSZ, unsafe.Pointer(&ws)))
	term := &terminal{tty: tty, master: master, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); master.Close() })
	return term
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// Screen closes the terminal and returns what was written to it, without
// colour codes and carriage returns, as lines.
func (term *terminal) Screen() []string {
	term.tty.Close()
	<-term.done
	term.mu.Lock()
	defer term.mu.Unlock()
	s := ansi.ReplaceAllString(term.out.String(), "")
	s = strings.ReplaceAll(s, "\r", "")
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

var _ io.Reader = (*os.File)(nil)
