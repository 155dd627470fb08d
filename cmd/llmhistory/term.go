package main

import (
	"io"

	"github.com/llmhistory/llmhistory/internal/term"
)

// isTerminal reports whether f is a terminal (see term.IsTerminal).
func isTerminal(f any) bool { return term.IsTerminal(f) }

// termWidth is the width of the terminal w writes to, 0 off one.
func termWidth(w io.Writer) int { return term.Width(w) }

// statusLine is a line of progress redrawn in place on a terminal.
type statusLine = term.StatusLine

func newStatusLine(w io.Writer) *statusLine { return term.NewStatusLine(w) }
