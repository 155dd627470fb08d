package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// encode writes records as JSONL with the record package's own encoder.
func encode(t testing.TB, recs ...record.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	sink := record.NewJSONL(&buf)
	for _, r := range recs {
		require.NoError(t, sink.Append(context.Background(), r))
	}
	require.NoError(t, sink.Close())
	return buf.Bytes()
}

func build(t testing.TB, opts report.Options, data []byte) *report.Report {
	t.Helper()
	r, err := report.Build(context.Background(), opts, report.Source{Name: "h.jsonl", R: bytes.NewReader(data)})
	require.NoError(t, err)
	return r
}

// call is a plain successful record to start from.
func call(id string, at int) record.Record {
	return record.Record{
		CallID:                id,
		Timestamp:             fmt.Sprintf("2026-03-01T10:00:%02d.000000Z", at),
		Speaker:               record.SpeakerUser,
		MethodName:            "openai.chat.completions.create",
		Model:                 "gpt-4o-mini",
		Outcome:               record.Success("chat.completion"),
		Depth:                 record.Int(0),
		TraceID:               "t1",
		DurationMS:            100,
		HistoryRecordAppended: true,
		HistoryGuidance:       true,
	}
}

// fixture is a small history with one of everything the report counts.
func fixture() []record.Record {
	a := call("c1", 0)
	a.Attempts = 1
	a.Usage = &record.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}
	a.ProgramSource = "recent = context[:conversation_history]\n  .select { |r| r[:outcome_summary][:ok] }\n  .last(3)"
	a.HistoryAccessDetected = true
	a.HistoryQueryPatterns = []string{"filter", "slice"}
	a.ConversationHistorySize = 1
	a.TimeToFirstChunkMS = 38.2 // streamed

	b := call("c2", 1)
	b.Speaker = record.SpeakerAgent
	b.ParentCallID = "c1"
	b.Depth = record.Int(1)
	b.DurationMS = 2400
	b.Attempts = 3
	b.Outcome = record.Failure(record.ErrorRateLimit)
	b.ErrorType = record.ErrorRateLimit
	b.ConversationHistorySize = 2

	c := call("c3", 2)
	c.MethodName = "gemini.models.generateContent"
	c.Model = "gemini-2.0-flash"
	c.TraceID = "t2"
	c.DurationMS = 850
	c.Usage = &record.Usage{InputTokens: 40, OutputTokens: 10, TotalTokens: 50}
	c.ProgramSource = "# conversation_history is not needed\nputs 42"
	c.HistoryGuidance = false
	c.ConversationHistorySize = 1

	d := call("c4", 3)
	d.Speaker = record.SpeakerTool
	d.Depth = nil
	d.DurationMS = 0
	d.Outcome = record.Failure(record.ErrorInvalidRequest)
	d.HistoryRecordAppended = false
	d.ConversationHistorySize = 3

	e := call("c2", 4) // the same call recorded twice
	e.Depth = record.Int(12)
	e.ProgramSource = "n = len(conversation_history)"
	e.HistoryAccessDetected = true
	e.HistoryQueryPatterns = []string{"count", "count", "x-custom"}
	e.ConversationHistorySize = 4

	// Priced as the recorder prices at record time, with the rates
	// written out so that the golden files do not move with the table:
	// gpt-4o-mini 100 × $0.15/M in + 20 × $0.60/M out; gemini-2.0-flash
	// 40 × $0.10/M + 10 × $0.40/M. The others have no usage.
	a.Cost = &record.Cost{USD: 0.000027, Table: "litellm-2026-03-03"}
	c.Cost = &record.Cost{USD: 0.000008, Table: "litellm-2026-03-03"}
	return []record.Record{a, b, c, d, e}
}

func TestFigures(t *testing.T) {
	r := build(t, report.Options{}, encode(t, fixture()...))

	assert.Equal(t, report.Summary{
		Records: 5, Calls: 7, OKRecords: 3, ErrorRecords: 2,
		FirstTimestamp: "2026-03-01T10:00:00.000000Z", LastTimestamp: "2026-03-01T10:00:04.000000Z", SpanSeconds: 4,
	}, r.Summary)

	h := r.History
	assert.Equal(t, int64(4), h.Appended)
	assert.Equal(t, 0.8, h.AppendRate)
	assert.Equal(t, int64(4), h.Guidance)
	assert.Equal(t, int64(2), h.Access)
	assert.Equal(t, int64(3), h.WithProgramSource)
	assert.Equal(t, int64(2), h.AccessWithProgramSource)
	assert.Equal(t, int64(3), h.ReferencesHistory)
	assert.Equal(t, int64(1), h.ReferencesWithoutAccess, "the comment in c3 mentions the history")
	assert.Equal(t, 4, h.MaxHistorySize)
	assert.Equal(t, 2.2, h.MeanHistorySize)

	assert.Equal(t, []report.Pattern{
		{Tag: "filter", Records: 1, Example: "recent = context[:conversation_history] .select { |r| r[:outcome_summary][:ok] }", ExampleCallID: "c1"},
		{Tag: "slice", Records: 1, Example: "recent = context[:conversation_history] … .last(3)", ExampleCallID: "c1"},
		{Tag: "count", Records: 1, Example: "n = len(conversation_history)", ExampleCallID: "c2"},
		{Tag: "x-custom", Records: 1},
	}, r.Patterns, "a tag counts once per record; an unknown one has no example")

	assert.Equal(t, []report.Count{{Name: "user", Count: 3}, {Name: "agent", Count: 1}, {Name: "tool", Count: 1}}, r.Speakers)
	assert.Equal(t, []report.Count{{Name: "openai.chat.completions.create", Count: 4}, {Name: "gemini.models.generateContent", Count: 1}}, r.Methods)
	assert.Equal(t, []report.ErrorType{{Type: "invalid_request", Count: 1}, {Type: "rate_limit", Count: 1, Retriable: 1}}, r.Errors)
	assert.Equal(t, report.Retries{
		Histogram:      []report.Count{{Name: "1", Count: 4}, {Name: "2"}, {Name: "3", Count: 1}, {Name: "4"}, {Name: "5+"}},
		RetriedRecords: 1, ExtraAttempts: 2,
	}, r.Retries)

	require.Len(t, r.Latency, 2)
	assert.Equal(t, "openai.chat.completions.create", r.Latency[0].Method)
	assert.Equal(t, int64(3), r.Latency[0].Records, "a record without duration is not a 0 ms call")
	assert.InDelta(t, 100, r.Latency[0].P50MS, 1)
	assert.Equal(t, 2400.0, r.Latency[0].MaxMS)
	assert.Equal(t, int64(1), r.Latency[0].FirstChunkCount, "c1 was streamed")
	assert.InEpsilon(t, 38.2, r.Latency[0].FirstChunkP50MS, 0.01)
	assert.Equal(t, 38.2, r.Latency[0].FirstChunkMaxMS)
	assert.Zero(t, r.Latency[1].FirstChunkCount, "c3 was not streamed")
	assert.Equal(t, []report.Tokens{
		{Model: "gpt-4o-mini", Records: 1, InputTokens: 100, OutputTokens: 20, TotalTokens: 120},
		{Model: "gemini-2.0-flash", Records: 1, InputTokens: 40, OutputTokens: 10, TotalTokens: 50},
	}, r.Tokens)

	depth := map[string]int64{}
	for _, c := range r.Depth {
		depth[c.Name] = c.Count
	}
	assert.Equal(t, map[string]int64{"0": 2, "1": 1, "2": 0, "3": 0, "4": 0, "5": 0, "6": 0, "7": 0, "8": 0, "9": 0, "10+": 1, "unknown": 1}, depth)

	assert.True(t, r.Traces.Exact)
	assert.Equal(t, []report.TraceCount{{TraceID: "t1", Records: 4}, {TraceID: "t2", Records: 1}}, r.Traces.Top)
	assert.Equal(t, int64(1), r.Duplicates.Duplicates)

	verdicts := map[string]string{}
	for _, c := range r.Checklist {
		verdicts[c.ID] = c.Verdict
	}
	assert.Equal(t, map[string]string{
		"append_success":    report.NotMet,
		"guidance_presence": report.NotMet,
		"access_detected":   report.NotMet,
		"no_duplicates":     report.NotMet,
		"retries_collapsed": report.NotMet,
		"evidence_stream":   report.NotMet,
	}, verdicts)
}

func TestChecklistMet(t *testing.T) {
	var recs []record.Record
	for i := range 120 {
		r := call(fmt.Sprintf("c%d", i), i%60)
		r.ProgramSource = "conversation_history.count"
		r.HistoryAccessDetected = true
		r.HistoryQueryPatterns = []string{"count"}
		if i%10 == 0 {
			r.Attempts = 2
		}
		recs = append(recs, r)
	}
	r := build(t, report.Options{}, encode(t, recs...))
	for _, c := range r.Checklist {
		assert.Equal(t, report.Met, c.Verdict, "%s: %s", c.ID, c.Figure)
	}
	assert.Equal(t, "100% (120 of 120 records)", r.Checklist[0].Figure)
}

func TestEmpty(t *testing.T) {
	r := build(t, report.Options{}, nil)
	assert.Equal(t, int64(0), r.Summary.Records)
	for _, c := range r.Checklist {
		assert.Equal(t, report.NoData, c.Verdict, c.ID)
	}
	var md bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "The input holds no records")

	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	assert.NotContains(t, js.String(), "null", "lists are never null")
}

func TestBadInput(t *testing.T) {
	good := encode(t, call("c1", 0), call("c2", 1))
	data := slices.Concat([]byte(`{"call_id":"c0","times`+"\n"), []byte("\nnot json\n{\"call_id\": 7}\n"), good, []byte(`{"call_id":"c9","times`))
	var seen []int
	r, err := report.Build(context.Background(), report.Options{
		MaxBadLines: 2,
		OnBadLine:   func(src string, line int, err error) { seen = append(seen, line) },
	}, report.Source{Name: "x.jsonl", R: bytes.NewReader(data)})
	require.NoError(t, err)
	assert.Equal(t, int64(2), r.Summary.Records)
	assert.Equal(t, int64(3), r.BadInput.GarbledLines)
	assert.Equal(t, []int{1, 3, 4}, seen)
	require.Len(t, r.BadInput.FirstGarbled, 2, "only the first MaxBadLines are kept")
	assert.Equal(t, "x.jsonl", r.BadInput.FirstGarbled[0].Source)
	assert.Equal(t, 1, r.BadInput.FirstGarbled[0].Line)
	assert.Equal(t, int64(1), r.BadInput.TornTails)
	assert.Equal(t, []string{"x.jsonl"}, r.BadInput.TornSources)

	var md bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "| x.jsonl:3 |")
	assert.Contains(t, md.String(), "torn last line: x.jsonl")
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestBuildErrors(t *testing.T) {
	_, err := report.Build(context.Background(), report.Options{},
		report.Source{Name: "a", R: bytes.NewReader(encode(t, call("c1", 0)))},
		report.Source{Name: "b", R: failingReader{}})
	assert.EqualError(t, err, "b: disk on fire")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = report.Build(ctx, report.Options{}, report.Source{Name: "a", R: bytes.NewReader(nil)})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestCaps(t *testing.T) {
	b := report.NewBuilder(report.Options{MaxKeys: 2, MaxLatencyMethods: 1, TraceCapacity: 4, TopTraces: 3, MaxCallIDs: 5})
	rng := rand.New(rand.NewPCG(7, 7))
	truth := map[string]int64{}
	for i := range 2000 {
		r := call(fmt.Sprintf("c%d", i), 0)
		r.MethodName = fmt.Sprintf("m%d", i%3)
		r.Model = fmt.Sprintf("model%d", i%5)
		r.Usage = &record.Usage{TotalTokens: 1}
		// A few heavy traces among many light ones.
		r.TraceID = fmt.Sprintf("light%d", rng.IntN(500))
		if i%4 != 0 {
			r.TraceID = fmt.Sprintf("heavy%d", i%3)
		}
		truth[r.TraceID]++
		b.Add(r)
	}
	r := b.Report()
	assert.Len(t, r.Methods, 3)
	assert.Equal(t, report.Count{Name: "(other)", Count: 666}, r.Methods[2])
	assert.Equal(t, "(other)", r.Latency[len(r.Latency)-1].Method)
	assert.Equal(t, "(other)", r.Tokens[len(r.Tokens)-1].Model)
	assert.False(t, r.Traces.Exact)
	assert.LessOrEqual(t, r.Traces.MaxOvercount, int64(2000/4))
	require.Len(t, r.Traces.Top, 3)
	for _, tc := range r.Traces.Top {
		assert.True(t, strings.HasPrefix(tc.TraceID, "heavy"), tc.TraceID)
		assert.GreaterOrEqual(t, tc.Records, truth[tc.TraceID], "an upper bound")
		assert.LessOrEqual(t, tc.Records-tc.MaxOvercount, truth[tc.TraceID], "too high by at most its overcount")
	}
	assert.Equal(t, int64(1995), r.Duplicates.Unchecked)
	assert.Equal(t, report.NotChecked, r.Checklist[3].Verdict)
	assert.Contains(t, r.Checklist[3].Figure, "not checked past 5 distinct ids")
	notes := strings.Join(r.Notes, "\n")
	assert.Contains(t, notes, "More than 2 distinct methods")
	assert.Contains(t, notes, "trace counts are upper bounds")
	assert.Contains(t, notes, "first 5 distinct ids only")
}

// The latency quantiles stay within 1% of the exact nearest-rank quantile.
func TestLatencyError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dist := range []struct {
		name string
		gen  func() float64
	}{
		{"lognormal", func() float64 { return math.Exp(rng.NormFloat64()*1.5 + 5) }},
		{"uniform", func() float64 { return rng.Float64() * 30000 }},
		{"tiny", func() float64 { return 0.002 + rng.Float64()*0.01 }},
	} {
		l, all := latencySamples(dist.gen, func(r *record.Record, v float64) { r.DurationMS = v })
		for _, q := range []struct {
			p   float64
			got float64
		}{{0.5, l.P50MS}, {0.9, l.P90MS}, {0.99, l.P99MS}} {
			want := all[int(math.Ceil(q.p*float64(len(all))))-1]
			assert.InEpsilon(t, want, q.got, 0.01+1e-3, "%s p%v", dist.name, q.p*100) // +rounding to 0.001 ms
		}
		assert.InDelta(t, all[len(all)-1], l.MaxMS, 0.001)
	}
}

// latencySamples builds a report of 50,000 records of one method, each
// with a value drawn from gen (rounded to the nanosecond, as JSON keeps
// it) put in place by set, and returns the method's latency row and the
// values sorted, for exact nearest-rank quantiles.
func latencySamples(gen func() float64, set func(*record.Record, float64)) (report.Latency, []float64) {
	b := report.NewBuilder(report.Options{})
	all := make([]float64, 0, 50000)
	for i := range 50000 {
		v := math.Round(gen()*1e6) / 1e6
		all = append(all, v)
		r := call(fmt.Sprint(i), 0)
		set(&r, v)
		b.Add(r)
	}
	slices.Sort(all)
	return b.Report().Latency[0], all
}

func TestLongKeysAreCut(t *testing.T) {
	r := call("c1", 0)
	r.MethodName = strings.Repeat("é", 10000)
	r.TraceID = strings.Repeat("t", 10000)
	rep := build(t, report.Options{}, encode(t, r, r))
	assert.LessOrEqual(t, len(rep.Methods[0].Name), 260)
	assert.Equal(t, int64(2), rep.Methods[0].Count, "cut keys still count together")
	assert.Equal(t, int64(2), rep.Traces.Top[0].Records)
}

func TestMarkdownEscapes(t *testing.T) {
	r := call("c1", 0)
	r.MethodName = "a|b <b>bold</b> `x` [link](http://x) _em_ rate_limit\nsecond line"
	rep := build(t, report.Options{}, encode(t, r))
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "| a\\|b \\<b\\>bold\\</b\\> \\`x\\` \\[link\\](http://x) \\_em\\_ rate_limit second line | 1 | 100% |")
}

func TestHTMLEscapes(t *testing.T) {
	r := call("c1", 0)
	r.MethodName = `<script>alert(1)</script>`
	r.Outcome = record.Failure(`"><img src=x onerror=alert(2)>`)
	r.TraceID = `</title><script>alert(3)</script>`
	rep := build(t, report.Options{}, encode(t, r))
	var page bytes.Buffer
	require.NoError(t, rep.WriteHTML(&page))
	s := page.String()
	assert.NotContains(t, s, "<script")
	assert.NotContains(t, s, "<img")
	assert.Contains(t, s, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.NotContains(t, s, "http://", "no external resource")
	assert.Contains(t, s, `Content-Security-Policy`)
}

func TestHTMLCharts(t *testing.T) {
	rep := build(t, report.Options{}, encode(t, fixture()...))
	var page bytes.Buffer
	require.NoError(t, rep.WriteHTML(&page))
	charts := svgCharts(page.String())
	// Latency: 3 legend squares and 3 bars per method; patterns and errors:
	// one bar per row; spend: one column per bucket with a cost (c1 at
	// 10:00:00 and c3 at 10:00:02, in 100 ms buckets).
	assert.Equal(t, map[string]int{"chart-latency": 3 + 3*2, "chart-patterns": 4, "chart-errors": 2, "chart-spend": 2}, charts)
}

// svgCharts counts the <rect elements of each chart by its id.
func svgCharts(page string) map[string]int {
	out := map[string]int{}
	for _, id := range []string{"chart-latency", "chart-patterns", "chart-errors", "chart-spend"} {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			continue
		}
		end := strings.Index(page[i:], "</svg>")
		if end < 0 {
			continue
		}
		out[id] = strings.Count(page[i:i+end], "<rect")
	}
	return out
}

// fixed makes a report's provenance the same on every machine and run.
var fixed = report.Options{
	Now:  func() time.Time { return time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC) },
	Tool: "llmhistory v1.2.3 (go1.26.0)",
}

func TestGolden(t *testing.T) {
	opts := fixed
	opts.MinEvidence = 2
	rep := build(t, opts, encode(t, fixture()...))
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"fixture.json", func(b *bytes.Buffer) error { return rep.WriteJSON(b) }},
		{"fixture.md", func(b *bytes.Buffer) error { return rep.WriteMarkdown(b) }},
	} {
		var got bytes.Buffer
		require.NoError(t, f.write(&got))
		path := filepath.Join("testdata", f.name)
		if *update {
			require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -update to create it")
		assert.Equal(t, string(want), got.String(), "%s differs; run go test -update if the change is meant", path)
	}

	// The JSON keeps its documented shape when decoded generically.
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	var top map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &top))
	assert.Equal(t, 1.0, top["version"])
	for _, key := range []string{"summary", "history", "patterns", "speakers", "methods", "models", "errors", "retries", "latency", "tokens", "depth", "traces", "duplicates", "bad_input", "checklist", "notes"} {
		assert.Contains(t, top, key)
	}
}
