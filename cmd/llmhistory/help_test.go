package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every subcommand's help reads in an 80-column terminal: no line is
// wider than helpWidth, but for a line that is one word (a URL), which
// cannot be broken.
func TestHelpFitsATerminal(t *testing.T) {
	for name := range commands {
		code, stdout, _ := runCmd(t, "", name, "-h")
		require.Equal(t, exitOK, code, name)
		for i, line := range strings.Split(stdout, "\n") {
			if len(strings.Fields(line)) <= 1 {
				continue
			}
			assert.LessOrEqual(t, utf8.RuneCountInString(strings.ReplaceAll(line, "\t", "        ")), helpWidth,
				"llmhistory %s -h, line %d is too wide:\n%s", name, i+1, line)
		}
	}
}

// Wrapping the flags loses none of what flag.PrintDefaults says: each
// flag, the name of its value, its description and its default.
func TestHelpListsEveryFlag(t *testing.T) {
	_, stdout, _ := runCmd(t, "", "demo", "-h")
	for _, want := range []string{
		"\n  -o file\n        the JSONL file the records go to (replaced only if the demo wrote it)\n        (default \"history.jsonl\")\n",
		"\n  -provider string\n        auto, fake or real (see above) (default \"auto\")\n",
	} {
		assert.Contains(t, stdout, want)
	}
	_, stdout, _ = runCmd(t, "", "tail", "-h")
	assert.Contains(t, stdout, "\n  -f\n        keep following the file; -f=false prints and exits (default true)\n")
	assert.Contains(t, stdout, "\n  -n N\n        print the last N records first (0: none) (default 10)\n")
	_, stdout, _ = runCmd(t, "", "export", "-h")
	assert.Contains(t, stdout, "\n  -metrics\n        send the GenAI client metrics too\n", "a false bool has no default said")
	_, stdout, _ = runCmd(t, "", "scan", "-h")
	assert.Contains(t, stdout, "\n  -name value\n", "a flag.Value of our own")
	assert.NotContains(t, stdout, "(default [])")
}

func TestWrap(t *testing.T) {
	text := "price the records with FILE: LiteLLM's price file, or your own prices added to the module's table https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json end"
	lines := wrap(text, 30)
	assert.Equal(t, strings.Fields(text), strings.Fields(strings.Join(lines, " ")), "every word, in order")
	for _, l := range lines {
		if strings.Contains(l, " ") {
			assert.LessOrEqual(t, len(l), 30, l)
		}
	}
	assert.Contains(t, lines, "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json")
	assert.Empty(t, wrap("   ", 10))
}
