package main

import (
	"io"
	"os"
	"strconv"
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
