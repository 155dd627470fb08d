package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a terminal the demo keeps the conversation and a short summary on
// the screen, every line within the terminal's width, and writes the
// report to a file it names: nothing scrolls the conversation away, and
// no Markdown reaches the screen.
func TestDemoOnATerminal(t *testing.T) {
	t.Setenv("COLUMNS", "")
	term := newTerminal(t, 100)
	dir := t.TempDir()
	t.Chdir(dir) // as a newcomer runs it: files in the working directory
	history := "history.jsonl"
	code := run(context.Background(), []string{"demo", "-provider", "fake", "-o", history},
		stdio{in: strings.NewReader(""), out: term.tty, err: term.tty})
	screen := term.Screen()
	require.Equal(t, exitOK, code, strings.Join(screen, "\n"))

	text := strings.Join(screen, "\n")
	// 66: four conversations (the agent's 38 lines, the others' 20), the
	// banner's 5 and the summary's 6 lines, the last of which says how to
	// view the history.
	assert.LessOrEqual(t, len(screen), 66, "the whole run fits a screen or so:\n%s", text)
	assert.Contains(t, text, "Query them: ")
	assert.Contains(t, text, "See it in a browser: ")
	for _, l := range screen {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 100, "a line wider than the terminal: %q", l)
	}
	assert.NotRegexp(t, `(?m)^(\||#+ |- )|\\_|\*\*`, text, "Markdown on the screen")
	assert.Contains(t, text, "user ▸ I'm going to Lisbon in May.")
	assert.Contains(t, text, "claude ▸ ")
	reportFile := filepath.Join(dir, "history-report.md")
	assert.Contains(t, text, "the report is in history-report.md")
	assert.Contains(t, text, "checklist 5 of 6 met")
	md, err := os.ReadFile(reportFile)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(md), "# LLM call history: evidence report\n"))
	assert.Contains(t, string(md), "from "+history+": 13 lines read, 13 records, 0 bad lines")

	// The next run replaces both: the demo wrote them.
	term = newTerminal(t, 100)
	code = run(context.Background(), []string{"demo", "-provider", "fake", "-o", history},
		stdio{in: strings.NewReader(""), out: term.tty, err: term.tty})
	screen = term.Screen()
	require.Equal(t, exitOK, code, strings.Join(screen, "\n"))
}

// A person who types "llmhistory report" and nothing else is told what
// the command wants, instead of a silent wait on the keyboard; a /dev/null
// (a character device, no terminal) is read as the empty input it is.
func TestReportWithoutFilesOnATerminal(t *testing.T) {
	term := newTerminal(t, 80)
	var out, errb strings.Builder
	code := run(context.Background(), []string{"report"}, stdio{in: term.tty, out: &out, err: &errb})
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errb.String(), "no FILE given, and standard input is a terminal")
	assert.Empty(t, out.String())

	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"report"}, stdio{in: null, out: &out, err: &errb})
	assert.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, out.String(), "The input holds no records")
}

// tail on a narrow terminal leaves out what does not fit rather than
// wrap, keeping the error and the retries.
func TestTailFitsTheTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	r := testRecord(1, false)
	r.ErrorMessage = strings.Repeat("the provider said no; ", 10)
	appendFile(t, path, line(testRecord(0, true))+line(r))
	t.Setenv("COLUMNS", "")
	term := newTerminal(t, 120)
	code := run(context.Background(), []string{"tail", "-f=false", path}, stdio{in: strings.NewReader(""), out: term.tty, err: term.tty})
	screen := term.Screen()
	require.Equal(t, exitOK, code, screen)
	require.Len(t, screen, 2)
	for _, l := range screen {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 120, "%q", l)
	}
	assert.Contains(t, screen[1], "error=rate_limit")
	assert.Contains(t, screen[1], "attempts=3")
	assert.Contains(t, screen[1], `message="the provider said no`, "the message shortened, not dropped")
}
