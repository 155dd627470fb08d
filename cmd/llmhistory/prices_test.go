package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/cost"
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
	assert.Contains(t, stdout, "Spend $5.50, every call that used tokens priced.")
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

// newerLiteLLM writes an excerpt of LiteLLM's price file, named with the
// day it was taken, that knows the demo's models: the SDK's newest Claude
// too, which the module's table does not.
func newerLiteLLM(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "litellm-2026-11-20.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
    "sample_spec": {"litellm_provider": "one of https://docs.litellm.ai/docs/providers", "mode": "one of: chat"},
    "gpt-4o-mini": {"input_cost_per_token": 1.5e-07, "output_cost_per_token": 6e-07, "cache_read_input_token_cost": 7.5e-08, "litellm_provider": "openai", "mode": "chat"},
    "gemini-2.5-flash": {"input_cost_per_token": 3e-07, "output_cost_per_token": 2.5e-06, "litellm_provider": "gemini", "mode": "chat"},
    "`+string(defaultClaude)+`": {"input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05, "litellm_provider": "anthropic", "mode": "chat"}
}`), 0o644))
	return path
}

// With -prices a newer LiteLLM file, or LLMHISTORY_PRICES naming it, the
// demo's recorder prices with it: every call with usage is priced, the
// newest Claude included, and the records carry the file's table.
func TestDemoPrices(t *testing.T) {
	dir := t.TempDir()
	prices := newerLiteLLM(t, dir)
	check := func(t *testing.T, args ...string) {
		path := filepath.Join(t.TempDir(), "history.jsonl")
		code, stdout, stderr := runCmd(t, "", append([]string{"demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "json"}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		rep := spendOf(t, stdout)
		assert.Equal(t, int64(0), rep.Spend.UnpricedRecords, "every call with usage priced: %v", rep.Spend.UnpricedModels)
		assert.Equal(t, int64(12), rep.Spend.PricedRecords, "all but the 404")
		assert.Equal(t, []report.Count{{Name: "litellm-2026-11-20", Count: 12}}, rep.Provenance.PriceTables)
	}
	t.Run("flag", func(t *testing.T) {
		t.Setenv(cost.EnvPrices, "")
		check(t, "-prices", prices)
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv(cost.EnvPrices, prices)
		check(t)
	})
	t.Run("a bad file stops the demo before it writes", func(t *testing.T) {
		bad := filepath.Join(dir, "nope.json")
		t.Setenv(cost.EnvPrices, bad)
		path := filepath.Join(t.TempDir(), "history.jsonl")
		code, stdout, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "json")
		assert.Equal(t, exitFailure, code)
		assert.Equal(t, "llmhistory demo: LLMHISTORY_PRICES="+bad+": open "+bad+": no such file or directory\n", stderr)
		assert.Empty(t, stdout)
		assert.NoFileExists(t, path)
	})
}

// llmhistory report -prices takes LiteLLM's file too: every record is
// priced again with the file's table alone, named by the file's date.
func TestReportPricesLiteLLM(t *testing.T) {
	dir := t.TempDir()
	history := pricedHistory(t, dir)
	prices := newerLiteLLM(t, dir)
	code, stdout, stderr := runCmd(t, "", "report", "-format", "json", "-prices", prices, history)
	require.Equal(t, exitOK, code, stderr)
	rep := spendOf(t, stdout)
	// gpt-4o-mini at 1.5e-07 per input token: 1,000,000 × 1.5e-07 = 0.15
	// and 2,000,000 × 1.5e-07 = 0.30; the deployment name is unknown.
	assert.InDelta(t, 0.45, rep.Spend.USD, 1e-12)
	assert.Equal(t, int64(2), rep.Spend.PricedRecords)
	assert.Equal(t, []report.Count{{Name: "my-prod-gpt4o", Count: 1}}, rep.Spend.UnpricedModels)
	assert.Equal(t, "litellm-2026-11-20", rep.Provenance.RepricedWith)
	assert.Equal(t, prices, rep.Provenance.PricesFrom)

	// A file of your own prices adds to the table LLMHISTORY_PRICES
	// names: the deployment from the file, gpt-4o-mini from LiteLLM's.
	t.Setenv(cost.EnvPrices, prices)
	ours := filepath.Join(dir, "acme.json")
	require.NoError(t, os.WriteFile(ours, []byte(`{"table": "acme-2026-11-21", "models": {"my-prod-gpt4o": {"input_per_mtok": 2.5, "output_per_mtok": 10}}}`), 0o644))
	code, stdout, stderr = runCmd(t, "", "report", "-format", "json", "-prices", ours, history)
	require.Equal(t, exitOK, code, stderr)
	rep = spendOf(t, stdout)
	assert.InDelta(t, 0.45+2.5, rep.Spend.USD, 1e-12)
	assert.Equal(t, int64(3), rep.Spend.PricedRecords)

	// A LiteLLM file whose rate is not a price stops the run.
	damaged := filepath.Join(dir, "damaged.json")
	require.NoError(t, os.WriteFile(damaged, []byte(`{"gpt-4o-mini": {"input_cost_per_token": -1, "output_cost_per_token": 6e-07, "litellm_provider": "openai", "mode": "chat"}}`), 0o644))
	t.Setenv(cost.EnvPrices, "")
	code, _, stderr = runCmd(t, "", "report", "-prices", damaged, history)
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "llmhistory report: "+damaged+`: invalid price file: model "gpt-4o-mini": input_cost_per_token is -1, not a per-token price (0 to 1 dollars)`+"\n", stderr)
}

// The report warns when the records are much newer than the table that
// priced them: here records of 2026-11-20 priced by litellm-2026-03-03.
func TestReportStalePrices(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old-prices.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	sink := record.NewJSONL(f)
	require.NoError(t, sink.Append(context.Background(), record.Record{
		CallID: "s1", Timestamp: "2026-11-20T10:00:00Z", Speaker: record.SpeakerUser,
		MethodName: "openai.chat.completions.create", Model: "gpt-4o-mini", Outcome: record.Success("chat.completion"),
		Usage: &record.Usage{InputTokens: 10, TotalTokens: 10}, Cost: &record.Cost{USD: 0.0000015, Table: "litellm-2026-03-03"},
	}))
	require.NoError(t, sink.Close())
	require.NoError(t, f.Close())
	code, stdout, stderr := runCmd(t, "", "report", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "> **Warning.** Stale prices: the price table litellm-2026-03-03 (of 2026-03-03) is 262 days older than the newest record it priced (of 2026-11-20).")
	// Priced again with a newer file, the warning is gone.
	code, stdout, stderr = runCmd(t, "", "report", "-prices", newerLiteLLM(t, dir), path)
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "Stale prices")
}
