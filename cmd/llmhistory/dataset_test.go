package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/internal/finetune"
)

// The "done when": a dataset built from the demo's store,
// exported to each fine-tuning format, and each export checked against
// the provider's documented format.
func TestDatasetFromTheDemo(t *testing.T) {
	_, url := demoStore(t)
	dir := t.TempDir()
	ds := filepath.Join(dir, "demo.jsonl")

	code, stdout, stderr := runCmd(t, "", "dataset", "build", "-o", ds, url)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "12 items", "13 calls, one failed")
	assert.Contains(t, stdout, "1 call without an answer to keep left out")

	// Built again: nothing new, the same file.
	before, err := os.ReadFile(ds)
	require.NoError(t, err)
	code, stdout, stderr = runCmd(t, "", "dataset", "build", "-o", ds, url)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "(0 new, 12 already there, 12 before)")
	after, err := os.ReadFile(ds)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	// A filter narrows it; conversations make one item each.
	code, stdout, stderr = runCmd(t, "", "dataset", "build", "-o", filepath.Join(dir, "refunds.jsonl"), "-text", "refund", "-conversations", url)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "2 items", "the refund conversation and the complaint's summary")

	code, stdout, stderr = runCmd(t, "", "dataset", "show", ds)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `dataset "demo": 12 items, version `)
	assert.Contains(t, stdout, "asked:   My order 1042 arrived damaged. Can I get a refund?")
	assert.Contains(t, stdout, "answer:  calls run_ruby(")

	d, err := eval.ReadDatasetFile(ds)
	require.NoError(t, err)
	for _, it := range d.Items {
		for _, m := range it.Input {
			assert.NotContains(t, m.Text(), "structured records in conversation_history", "the recorder's guidance is no part of an item")
		}
	}

	for _, f := range eval.ExportFormats {
		t.Run(string(f), func(t *testing.T) {
			out := filepath.Join(dir, string(f)+".jsonl")
			code, stdout, stderr := runCmd(t, "", "dataset", "export", "-format", string(f), "-o", out, ds)
			require.Equal(t, exitOK, code, stderr)
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			require.NoError(t, finetune.Check(string(f), data))
			lines := strings.Count(string(data), "\n")
			switch f {
			case eval.FormatAnthropic:
				// The three items whose conversation holds run_ruby's
				// tool call are Claude-on-Bedrock's to refuse.
				assert.Equal(t, 9, lines)
				assert.Contains(t, stdout, "9 examples in anthropic's format, 3 skipped")
				assert.Equal(t, 3, strings.Count(stderr, "skipped: tool calls"))
			default:
				assert.Equal(t, 12, lines)
			}
		})
	}
}

func TestDatasetUsage(t *testing.T) {
	code, stdout, _ := runCmd(t, "", "dataset", "-h")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(stdout, "usage: llmhistory dataset"), stdout)
	code, _, stderr := runCmd(t, "", "dataset", "frobnicate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown subcommand "frobnicate"`)
	code, _, stderr = runCmd(t, "", "dataset", "build", "x.jsonl")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "want -o FILE")
	code, _, stderr = runCmd(t, "", "dataset", "export", "-format", "mistral", "x.jsonl")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `-format "mistral"`)
	code, _, stderr = runCmd(t, "", "dataset", "show", filepath.Join(t.TempDir(), "none.jsonl"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "none.jsonl")

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"llmhistory_dataset":1,"name":"b"}`+"\n{\"input\":[]}\n"), 0o644))
	code, _, stderr = runCmd(t, "", "dataset", "show", bad)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "bad.jsonl: line 2: the item has no input messages")
}
