package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// isTerminal reports whether f is a terminal: a file whose terminal
// attributes can be read (not merely a character device: /dev/null is one
// too, and is no terminal).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok || file == nil {
		return false
	}
	return isTTY(file.Fd())
}

// termWidth is the width in columns of the terminal w writes to, or 0
// when w is not a terminal or its size is unknown. COLUMNS, when set,
// wins, as shells and tools agree.
func termWidth(w io.Writer) int {
	if !isTerminal(w) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return ttyWidth(w.(*os.File).Fd())
}

// statusEvery bounds how often the status line is redrawn.
const statusEvery = 250 * time.Millisecond

// statusLine is a line of progress on a terminal, redrawn in place; off a
// terminal it shows nothing. What else is written to the same stream goes
// through it (or clears it first), so that it starts on a clean line.
type statusLine struct {
	w     io.Writer
	live  bool
	shown bool
	last  time.Time
}

func newStatusLine(w io.Writer) *statusLine {
	return &statusLine{w: w, live: isTerminal(w)}
}

func (s *statusLine) Write(p []byte) (int, error) {
	s.clear()
	return s.w.Write(p)
}

// due says whether the line should be drawn now.
func (s *statusLine) due(force bool) bool {
	if !s.live {
		return false
	}
	now := time.Now()
	if !force && now.Sub(s.last) < statusEvery {
		return false
	}
	s.last = now
	return true
}

// show draws line in place of the last one.
func (s *statusLine) show(line string) {
	fmt.Fprintf(s.w, "\r%s\x1b[K", line)
	s.shown = true
}

// clear removes the line, if it is shown.
func (s *statusLine) clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}
