package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
)

// On a terminal, export shows its progress on one line redrawn in place,
// and clears it before every other line: what stays on the screen is the
// plain lines, as off a terminal.
func TestExportOnATerminal(t *testing.T) {
	noOTLP(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "http/protobuf")
	path := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, path, line(testRecord(1, true))+"not json\n"+line(testRecord(2, true)))
	term := newTerminal(t, 100)
	code := run(context.Background(), []string{"export", path}, stdio{in: strings.NewReader(""), out: term.tty, err: term.tty})
	term.tty.Close()
	<-term.done
	term.mu.Lock()
	raw := term.out.String()
	term.mu.Unlock()
	require.Equal(t, exitOK, code, raw)

	assert.Contains(t, raw, "\rllmhistory export: "+path+": read 1, exported 0\x1b[K", "the progress line, drawn in place")
	assert.Contains(t, raw, "; exporting the rest\x1b[K")
	// What a person sees: each line as the last carriage return left it.
	var screen []string
	for _, l := range strings.Split(strings.TrimRight(raw, "\r\n"), "\n") {
		l = strings.TrimRight(l, "\r")
		if i := strings.LastIndex(l, "\r"); i >= 0 {
			l = l[i+1:]
		}
		screen = append(screen, ansi.ReplaceAllString(l, ""))
	}
	require.Len(t, screen, 4, "%q", screen)
	assert.True(t, strings.HasPrefix(screen[0], "llmhistory export: to http://"), screen[0])
	assert.Equal(t, path+":2: invalid JSON at offset 0: unexpected \"not\"", screen[1])
	assert.Equal(t, path+": 2 records read, 1 line skipped", screen[2])
	assert.True(t, strings.HasSuffix(screen[3], ": 2 exported, 0 failed, 0 dropped; 1 line skipped"), screen[3])
}
