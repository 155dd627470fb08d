package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// pricedHistory writes three records as a recorder priced them: two calls
// to gpt-4o-mini carrying their costs, and one to a deployment name no
// table knows.
func pricedHistory(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "priced.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	sink := record.NewJSONL(f)
	for i, r := range []struct {
		model string
		in    int
		cost  *record.Cost
	}{
		{"gpt-4o-mini", 1_000_000, &record.Cost{USD: 0.15, Table: "litellm-2026-03-03"}},
		{"gpt-4o-mini", 2_000_000, &record.Cost{USD: 0.30, Table: "litellm-2026-03-03"}},
		{"my-prod-gpt4o", 1_000_000, nil},
	} {
		require.NoError(t, sink.Append(context.Background(), record.Record{
			CallID: "p" + string(rune('0'+i)), Timestamp: "2026-03-01T10:00:00Z", Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create", Model: r.model, Outcome: record.Success("chat.completion"),
			TraceID: "t", Usage: &record.Usage{InputTokens: r.in, TotalTokens: r.in}, Cost: r.cost,
			HistoryRecordAppended: true,
		}))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, f.Close())
	return path
}

func spendOf(t *testing.T, stdout string) report.Report {
	t.Helper()
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	return rep
}

// Without -prices the report sums the costs the records carry; with it,
// every record is priced again with the module's table plus the file's
// prices, and the report says so.
func TestReportPrices(t *testing.T) {
	dir := t.TempDir()
	history := pricedHistory(t, dir)

	code, stdout, stderr := runCmd(t, "", "report", "-format", "json", history)
	require.Equal(t, exitOK, code, stderr)
	rep := spendOf(t, stdout)
	assert.InDelta(t, 0.45, rep.Spend.USD, 1e-12, "the records' own costs")
	assert.Equal(t, int64(2), rep.Spend.PricedRecords)
	assert.Equal(t, []report.Count{{Name: "my-prod-gpt4o", Count: 1}}, rep.Spend.UnpricedModels)
	assert.Equal(t, []report.Count{{Name: "litellm-2026-03-03", Count: 2}}, rep.Provenance.PriceTables)
	assert.Empty(t, rep.Provenance.RepricedWith)

	// The file names the deployment and overrides gpt-4o-mini: 1M input
	// tokens at $2.50 and $1.00 per million.
	prices := filepath.Join(dir, "prices.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{"version": 1, "table": "acme-2026-11", "models": {
  "my-prod-gpt4o": {"input_per_mtok": 2.5, "output_per_mtok": 10},
  "gpt-4o-mini": {"input_per_mtok": 1, "output_per_mtok": 4}}}`), 0o644))
	code, stdout, stderr = runCmd(t, "", "report", "-format", "json", "-prices", prices, history)
	require.Equal(t, exitOK, code, stderr)
	rep = spendOf(t, stdout)
	assert.InDelta(t, 1.0+2.0+2.5, rep.Spend.USD, 1e-12, "every record priced again, the carried costs ignored")
	assert.Equal(t, int64(3), rep.Spend.PricedRecords)
	assert.Empty(t, rep.Spend.UnpricedModels)
	assert.Equal(t, []report.Count{{Name: "acme-2026-11", Count: 3}}, rep.Provenance.PriceTables)
	assert.Equal(t, "acme-2026-11", rep.Provenance.RepricedWith)
	assert.Equal(t, prices, rep.Provenance.PricesFrom)

	code, stdout, stderr = runCmd(t, "", "report", "-prices", prices, history)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Costs: every record priced again for this report with the price table acme-2026-11, from "+prices+", whatever cost it carried.")
	assert.Contains(t, stdout, "Spend: $5.50, every record priced.")
	assert.Contains(t, stdout, "| my-prod-gpt4o | 1 | $2.50 | 45.5% |")
}

// A price file that is missing or wrong stops the run before anything is
// read or written, naming the file and what is wrong.
func TestReportBadPrices(t *testing.T) {
	dir := t.TempDir()
	history := pricedHistory(t, dir)
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		return path
	}
	missing := filepath.Join(dir, "nope.json")
	for _, c := range []struct {
		path, want string
	}{
		{missing, "llmhistory report: open " + missing + ": no such file or directory\n"},
		{dir, "llmhistory report: " + dir + ": is a directory, not a price file\n"},
		{write("syntax.json", "{\"models\": {\n  \"m\": {\"input_per_mtok\": 1,}\n}}"),
			"llmhistory report: " + filepath.Join(dir, "syntax.json") + ": invalid price file: invalid character '}' looking for beginning of object key string (line 2)\n"},
		{write("typo.json", `{"models": {"m": {"input_per_mtok": 1, "output_per_mtok": 2, "cache_reed_per_mtok": 0.1}}}`),
			"llmhistory report: " + filepath.Join(dir, "typo.json") + `: invalid price file: json: unknown field "cache_reed_per_mtok"` + "\n"},
		{write("missing-rate.json", `{"models": {"m": {"input_per_mtok": 1}}}`),
			"llmhistory report: " + filepath.Join(dir, "missing-rate.json") + `: invalid price file: model "m": input_per_mtok and output_per_mtok are required` + "\n"},
		{write("negative.json", `{"models": {"m": {"input_per_mtok": -1, "output_per_mtok": 2}}}`),
			"llmhistory report: " + filepath.Join(dir, "negative.json") + `: invalid price file: model "m": input_per_mtok: -1 is not a rate (finite and not negative)` + "\n"},
		{write("history.json", "not a price file at all\n"),
			"llmhistory report: " + filepath.Join(dir, "history.json") + ": invalid price file: invalid character 'o' in literal null (expecting 'u') (line 1)\n"},
	} {
		out := filepath.Join(dir, "report.md")
		code, stdout, stderr := runCmd(t, "", "report", "-prices", c.path, "-o", out, history)
		assert.Equal(t, exitFailure, code, c.path)
		assert.Equal(t, c.want, stderr, c.path)
		assert.Empty(t, stdout)
		assert.NoFileExists(t, out, "no report from a run that failed")
	}
}
