package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/store"
)

// demoDataset builds a dataset of the demo's calls.
func demoDataset(t *testing.T) (dataset, url string) {
	t.Helper()
	_, url = demoStore(t)
	dataset = filepath.Join(t.TempDir(), "demo.jsonl")
	code, _, stderr := runCmd(t, "", "dataset", "build", "-o", dataset, url)
	require.Equal(t, exitOK, code, stderr)
	return dataset, url
}

// The "done when": an experiment with two variants on the
// embedded fakes gives the same comparison twice, in every format.
func TestExperimentOnTheFakesTwice(t *testing.T) {
	ds, _ := demoDataset(t)
	for _, format := range []string{"md", "json", "html"} {
		t.Run(format, func(t *testing.T) {
			run := func() string {
				code, stdout, stderr := runCmd(t, "", "experiment", "run", "-variant", "mini=gpt-4o-mini", "-variant", "nano=gpt-4.1-nano",
					"-latency=false", "-format", format, ds)
				require.Equal(t, exitOK, code, stderr)
				return stdout
			}
			first, second := run(), run()
			assert.Equal(t, first, second)
			switch format {
			case "md":
				assert.Contains(t, first, "Baseline: **mini**; compared: **nano**. 12 items.")
				assert.Contains(t, first, "| exact_match | nano | 0.167 | 0 | 4 | 8 |")
				assert.Contains(t, first, "-For Lisbon in May: light layers, a light jacket for the evenings, and shoes that grip on cobbles.\n+For Lisbon in May.\n")
				assert.NotContains(t, first, "latency")
			case "html":
				assert.True(t, strings.HasPrefix(first, "<!doctype html>"))
				assert.NotContains(t, first, "<script")
			}
		})
	}
}

// Kept with -o, a result resumes (nothing runs again, the comparison is
// the same) and compares with another; the calls are recorded, tagged,
// into the store given.
func TestExperimentResultKeptAndCompared(t *testing.T) {
	ds, url := demoDataset(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "swap.json")
	args := []string{"experiment", "run", "-variant", "mini=gpt-4o-mini", "-variant", "nano=gpt-4.1-nano", "-latency=false",
		"-format", "json", "-o", res, "-into", url, ds}
	code, first, stderr := runCmd(t, "", args...)
	require.Equal(t, exitOK, code, stderr)
	code, again, stderr := runCmd(t, "", args...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, first, again)

	st, err := store.Open(t.Context(), url)
	require.NoError(t, err)
	n, err := st.Count(t.Context(), store.Filter{Tags: []string{eval.ExperimentTag}, Metadata: map[string]string{eval.MetaVariant: "nano"}})
	st.Close()
	require.NoError(t, err)
	assert.Equal(t, int64(12), n, "each nano trial recorded once: the second run resumed")

	other := filepath.Join(dir, "shout.json")
	code, _, stderr = runCmd(t, "", "experiment", "run", "-name", "shout", "-variant", "mini=gpt-4o-mini", "-system", "mini=Shout.", "-o", other, ds)
	require.Equal(t, exitOK, code, stderr)
	report := filepath.Join(dir, "cmp.html")
	code, _, stderr = runCmd(t, "", "experiment", "compare", "-format", "html", "-report", report, res, other)
	require.Equal(t, exitOK, code, stderr)
	html, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Contains(t, string(html), "shout/mini")
}

func TestExperimentUsage(t *testing.T) {
	code, stdout, _ := runCmd(t, "", "experiment", "-h")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(stdout, "usage: llmhistory experiment"), stdout)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "run", "x.jsonl"}, "at least one -variant"},
		{[]string{"experiment", "run", "-variant", "nomodel", "x.jsonl"}, "NAME=MODEL"},
		{[]string{"experiment", "run", "-variant", "a=m", "-format", "pdf", "x.jsonl"}, `-format "pdf"`},
		{[]string{"experiment", "run", "-variant", "a=m", "-score", "bleu", "x.jsonl"}, `-score "bleu"`},
		{[]string{"experiment", "run", "-variant", "a=m", "-system", "b=hi", "x.jsonl"}, "-system wants"},
		{[]string{"experiment", "compare"}, "RESULT"},
		{[]string{"experiment", "bogus"}, "unknown subcommand"},
	} {
		code, _, stderr := runCmd(t, "", tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}
