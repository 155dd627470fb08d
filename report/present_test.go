package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// formats writes a report as Markdown and as HTML.
func formats(t *testing.T, r *report.Report) (md, page string) {
	t.Helper()
	var a, b bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&a))
	require.NoError(t, r.WriteHTML(&b))
	return a.String(), b.String()
}

// Lines that are objects but not records are bad lines, named with their
// file and line: they do not become records of "(none)" that skew rates.
func TestBuildCountsNonRecordsAsBadLines(t *testing.T) {
	data := "{}\n" + `{"call_id":"x"}` + "\n" + string(encode(t, call("c1", 0)))
	var bad []string
	r, err := report.Build(context.Background(), report.Options{OnBadLine: func(src string, line int, err error) {
		bad = append(bad, fmt.Sprintf("%s:%d: %v", src, line, err))
	}}, report.Source{Name: "h.jsonl", R: strings.NewReader(data)})
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Summary.Records)
	assert.Equal(t, []report.Count{{Name: "user", Count: 1}}, r.Speakers, "no (none) speaker")
	assert.Equal(t, 1.0, r.History.AppendRate)
	require.Len(t, bad, 2)
	assert.True(t, strings.HasPrefix(bad[0], "h.jsonl:1: not a record: no call_id, timestamp,"), bad[0])
	assert.True(t, strings.HasPrefix(bad[1], "h.jsonl:2: not a record: no timestamp,"), bad[1])
	assert.Equal(t, int64(2), r.BadInput.GarbledLines)
}

// The provenance says which files, when, by what, and how many lines were
// read and bad, in every format.
func TestProvenance(t *testing.T) {
	a := encode(t, call("a1", 0), call("a2", 1))
	b := append(encode(t, call("b1", 2)), "oops\n"+`{"call_id":"torn`...)
	opts := fixed
	r, err := report.Build(context.Background(), opts,
		report.Source{Name: "a.jsonl", R: bytes.NewReader(a)}, report.Source{Name: "b.jsonl", R: bytes.NewReader(b)})
	require.NoError(t, err)
	assert.Equal(t, report.Provenance{
		GeneratedAt: "2026-03-02T08:30:00.000000Z",
		Tool:        "llmhistory v1.2.3 (go1.26.0)",
		Inputs: []report.Input{
			{Name: "a.jsonl", Lines: 2, Records: 2},
			{Name: "b.jsonl", Lines: 3, Records: 1, BadLines: 1, Torn: true},
		},
		Lines: 5, BadLines: 1,
		PriceTables: []report.Count{}, // no record carries a cost
	}, r.Provenance)

	md, page := formats(t, r)
	assert.Contains(t, md, "Made 2026-03-02 08:30:00 UTC by llmhistory v1.2.3 (go1.26.0) from 2 inputs: 5 lines read, 3 records, 1 bad line.")
	assert.Contains(t, md, "| b.jsonl | 3 | 1 | 1 | yes |")
	assert.Contains(t, page, `Made <span class="ts">2026-03-02 08:30:00 UTC</span> by llmhistory v1.2.3 (go1.26.0) from 2 inputs`)
	assert.Contains(t, page, `<td>b.jsonl</td><td class="n">3</td><td class="n">1</td><td class="n">1</td><td>yes</td>`)

	one, err := report.Build(context.Background(), opts, report.Source{Name: "a.jsonl", R: bytes.NewReader(a)})
	require.NoError(t, err)
	md, _ = formats(t, one)
	assert.Contains(t, md, "\n\nMade 2026-03-02 08:30:00 UTC by llmhistory v1.2.3 (go1.26.0) from a.jsonl: 2 lines read, 2 records, 0 bad lines.\n\n")

	var js bytes.Buffer
	require.NoError(t, one.WriteJSON(&js))
	var top struct{ Provenance map[string]any }
	require.NoError(t, json.Unmarshal(js.Bytes(), &top))
	for _, key := range []string{"generated_at", "tool", "inputs", "lines", "bad_lines"} {
		assert.Contains(t, top.Provenance, key)
	}

	// Without Options.Tool, the report names this module and Go.
	r, err = report.Build(context.Background(), report.Options{}, report.Source{Name: "a.jsonl", R: bytes.NewReader(a)})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(r.Provenance.Tool, "llmhistory "), r.Provenance.Tool)
	assert.Contains(t, r.Provenance.Tool, "(go1.")
	at, err := time.Parse(time.RFC3339, r.Provenance.GeneratedAt)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), at, time.Hour)
}

// One figure, one name: Markdown and HTML call the same rows the same.
func TestFormatsAgreeOnWords(t *testing.T) {
	recs := fixture()
	recs[0].Outcome = record.Failure(record.ErrorCanceled)
	md, page := formats(t, build(t, report.Options{}, encode(t, recs...)))
	for _, row := range []struct {
		label string
		n     int
	}{
		{"records (logical calls)", 5}, {"HTTP calls (attempts)", 7}, {"ok", 2},
		{"error (canceled included)", 3}, {"… of which canceled", 1},
	} {
		assert.Contains(t, md, fmt.Sprintf("| %s | %d |", row.label, row.n))
		assert.Contains(t, page, fmt.Sprintf(`<td>%s</td><td class="n">%d</td>`, row.label, row.n))
	}
	assert.Contains(t, md, "5 calls, 3 in error (60.0%).")
	assert.Contains(t, page, "5 calls, 3 in error (60.0%).")
	assert.NotContains(t, page, "not ok")
}

// Counts of one take the singular.
func TestPlurals(t *testing.T) {
	r := call("c1", 0)
	r.Attempts = 2
	md, page := formats(t, build(t, report.Options{}, encode(t, r)))
	one := regexp.MustCompile(`\b1 (records|attempts|traces|lines|calls|inputs|HTTP calls)\b`)
	assert.Empty(t, one.FindAllString(md, -1), md)
	assert.Empty(t, one.FindAllString(page, -1))
	assert.Contains(t, md, "with 1 attempt beyond the first")
	assert.Contains(t, md, "1 record in 1 trace; 0 records without a trace.")
}

// Durations read in the unit a person would use, in both formats; the JSON
// keeps milliseconds.
func TestHumanDurations(t *testing.T) {
	r := call("c1", 0)
	r.DurationMS = 5598.409
	rep := build(t, report.Options{}, encode(t, r))
	md, page := formats(t, rep)
	assert.Contains(t, md, "| openai.chat.completions.create | 1 | 5.6 s | 5.6 s | 5.6 s | 5.6 s |")
	assert.Contains(t, page, `<td class="n">5.6 s</td>`)
	assert.NotContains(t, md+page, "5598")
	assert.InDelta(t, 5598.409, rep.Latency[0].P50MS, 56)
}

// Each tag's example shows the code that earned the tag, even when the
// chain that holds it is longer than an example may be.
func TestExamplesShowTheOperation(t *testing.T) {
	r := call("c1", 0)
	r.ProgramSource = "asked = conversation_history\n  .select { |r| r[:speaker] == \"user\" }\n  .map { |r| r[:args].first }\n  .last(3)\nasked.count"
	r.HistoryAccessDetected = true
	r.HistoryQueryPatterns = []string{"filter", "map", "slice", "count"}
	got := map[string]string{}
	for _, p := range build(t, report.Options{}, encode(t, r)).Patterns {
		got[p.Tag] = p.Example
		assert.LessOrEqual(t, len([]rune(p.Example)), 80, p.Tag)
	}
	assert.Equal(t, map[string]string{
		"filter": `asked = conversation_history .select { |r| r[:speaker] == "user" }`,
		"map":    `asked = conversation_history … .map { |r| r[:args].first }`,
		"slice":  `asked = conversation_history … .last(3)`,
		"count":  `asked.count`,
	}, got)
}

// Calls, errors and tokens per provider, from the method's name, in every
// format.
func TestProviders(t *testing.T) {
	oa := call("c1", 0)
	oa.Usage = &record.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}
	oa.Attempts = 2
	an := call("c2", 1)
	an.MethodName = "anthropic.messages.create"
	an.Usage = &record.Usage{InputTokens: 20, OutputTokens: 7, TotalTokens: 27}
	an2 := call("c3", 2)
	an2.MethodName = "anthropic.messages.create"
	an2.Outcome = record.Failure(record.ErrorOverloaded)
	gm := call("c4", 3)
	gm.MethodName = "gemini.models.generateContent"
	web := call("c5", 4)
	web.MethodName = "http.POST /v1/rerank"
	rep := build(t, report.Options{}, encode(t, oa, an, an2, gm, web))
	assert.Equal(t, []report.Provider{
		{Name: "anthropic", Records: 2, Calls: 2, Errors: 1, InputTokens: 20, OutputTokens: 7, TotalTokens: 27},
		{Name: "gemini", Records: 1, Calls: 1},
		{Name: "http", Records: 1, Calls: 1},
		{Name: "openai", Records: 1, Calls: 2, InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
	}, rep.Providers)

	md, page := formats(t, rep)
	assert.Contains(t, md, "| anthropic | 2 | 2 | 1 | 20 | 7 | 27 |")
	assert.Contains(t, page, `<td>anthropic</td><td class="n">2</td><td class="n">2</td><td class="n">1</td><td class="n">20</td><td class="n">7</td><td class="n">27</td>`)
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	assert.Contains(t, js.String(), `"providers": [`)
	assert.Contains(t, js.String(), `"name": "http",`)
}
