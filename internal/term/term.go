// Package term is what the command and eval's test helper know of a
// terminal: whether a stream is one, its width, and a line of progress
// redrawn in place on it (nothing off a terminal). The team measured
// schollz/progressbar (+2.54 MB) and mpb (+0.76 MB) and kept this one.
package term

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// IsTerminal reports whether f is a terminal: a file whose terminal
// attributes can be read (not merely a character device: /dev/null is one
// too, and is no terminal).
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok || file == nil {
		return false
	}
	return isTTY(file.Fd())
}

// Width is the width in columns of the terminal w writes to, or 0 when w
// is not a terminal or its size is unknown. COLUMNS, when set, wins, as
// shells and tools agree.
func Width(w io.Writer) int {
	if !IsTerminal(w) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return ttyWidth(w.(*os.File).Fd())
}

// statusEvery bounds how often the status line is redrawn.
const statusEvery = 250 * time.Millisecond

// StatusLine is a line of progress on a terminal, redrawn in place; off a
// terminal it shows nothing. What else is written to the same stream goes
// through it (or clears it first), so that it starts on a clean line.
type StatusLine struct {
	w     io.Writer
	live  bool
	shown bool
	last  time.Time
}

// NewStatusLine returns a status line on w, live when w is a terminal.
func NewStatusLine(w io.Writer) *StatusLine {
	return &StatusLine{w: w, live: IsTerminal(w)}
}

// NewLiveStatusLine returns a status line that draws on w as on a
// terminal, whatever w is: for tests, and for a stream known to reach
// one.
func NewLiveStatusLine(w io.Writer) *StatusLine { return &StatusLine{w: w, live: true} }

// Live says the line is on a terminal: off one it shows nothing.
func (s *StatusLine) Live() bool { return s.live }

func (s *StatusLine) Write(p []byte) (int, error) {
	s.Clear()
	return s.w.Write(p)
}

// Due says whether the line should be drawn now: on a terminal, at most
// every 250 ms, or when forced.
func (s *StatusLine) Due(force bool) bool {
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

// Show draws line in place of the last one.
func (s *StatusLine) Show(line string) {
	fmt.Fprintf(s.w, "\r%s\x1b[K", line)
	s.shown = true
}

// Clear removes the line, if it is shown.
func (s *StatusLine) Clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// Progress is a line of progress: a bar when the total is known, the
// count, the rate and the time left ("eval [====    ] 120/300 calls
// 40 calls/s  5s left").
func Progress(label, unit string, done, total int64, took time.Duration) string {
	rate := ""
	if s := took.Seconds(); s > 0 {
		rate = fmt.Sprintf("  %s %s/s", Group(int64(float64(done)/s)), unit)
	}
	if total <= 0 {
		return fmt.Sprintf("%s: %s done%s", label, Group(done), rate)
	}
	const width = 24
	filled := int(int64(width) * min(done, total) / total)
	eta := ""
	if done > 0 && done < total {
		eta = "  " + (time.Duration(float64(took) * float64(total-done) / float64(done))).Round(time.Second).String() + " left"
	}
	return fmt.Sprintf("%s [%s%s] %s/%s %s%s%s", label, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		Group(done), Group(total), unit, rate, eta)
}

// Group writes n with thousands separators.
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
