package view_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/view"
)

var bg = context.Background()

// rec is a small record of a conversation, started at minute i.
func rec(trace string, i int, user string, ok bool) record.Record {
	r := record.Record{
		CallID:     fmt.Sprintf("%s-call-%03d", trace, i),
		Timestamp:  record.FormatTime(time.Date(2026, 3, 1, 10, i, 0, 0, time.UTC)),
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       []byte(fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"question %d of %s"}]}]`, i, trace)),
		Kwargs:     []byte(`{"model":"gpt-4o-mini"}`),
		Outcome:    record.Success("chat.completion"),
		TraceID:    trace,
		UserID:     user,
		DurationMS: float64(100 * (i + 1)),
		Attempts:   1,
		Model:      "gpt-4o-mini-2024-07-18",
		Usage:      &record.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
		Cost:       &record.Cost{USD: 0.001, Table: "t"},
	}
	if !ok {
		r.Outcome = record.Failure(record.ErrorRateLimit)
		r.ErrorType, r.Usage, r.Cost = record.ErrorRateLimit, nil, nil
	}
	return r
}

func lines(rs ...record.Record) string {
	var b bytes.Buffer
	for _, r := range rs {
		b.Write(r.AppendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}

func writeFile(t testing.TB, path, s string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(s), 0o600))
}

func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func open(t testing.TB, paths ...string) *view.JSONL {
	t.Helper()
	src, err := view.OpenJSONL(paths, view.JSONLOptions{Poll: 5 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { src.Close() })
	require.NoError(t, src.Wait(bg))
	return src
}

func ids(t testing.TB, src view.Source, q view.Query) []string {
	t.Helper()
	p, err := src.Conversations(bg, q)
	require.NoError(t, err)
	var out []string
	for _, c := range p.Conversations {
		out = append(out, c.ID)
	}
	return out
}

func eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, what)
}

// A file followed as it grows: a line being written is waited for, and a
// change is told to subscribers.
func TestJSONLFollowsAGrowingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	writeFile(t, path, lines(rec("a", 0, "u1", true), rec("b", 1, "u2", true)))
	src := open(t, path)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	changes, err := src.Subscribe(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, ids(t, src, view.Query{}), "newest first")

	line := lines(rec("c", 2, "u1", true))
	appendFile(t, path, line[:40]) // half a line: not a record yet
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, []string{"b", "a"}, ids(t, src, view.Query{}))
	assert.Zero(t, src.Status().BadLines, "a line being written is not a bad line")
	appendFile(t, path, line[40:])
	eventually(t, func() bool { return slices.Equal(ids(t, src, view.Query{}), []string{"c", "b", "a"}) }, "the finished line")
	select {
	case c := <-changes:
		assert.Equal(t, 1, c.Records)
		assert.Equal(t, []string{"c"}, c.Traces)
	case <-time.After(5 * time.Second):
		t.Fatal("no change told")
	}
	cancel()
	for range changes { // closed once the context ends
	}
}

// A file truncated in place is read again from its start.
func TestJSONLTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	writeFile(t, path, lines(rec("a", 0, "", true), rec("b", 1, "", true), rec("c", 2, "", true)))
	src := open(t, path)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	changes, _ := src.Subscribe(ctx)
	writeFile(t, path, lines(rec("z", 3, "", true))) // O_TRUNC: shorter than before
	eventually(t, func() bool { return slices.Equal(ids(t, src, view.Query{}), []string{"z"}) }, "only what the file holds now")
	reset := false
	for !reset {
		select {
		case c := <-changes:
			reset = c.Reset
		case <-time.After(5 * time.Second):
			t.Fatal("no reset told")
		}
	}
	tp, err := src.Trace(bg, view.TraceQuery{ID: "z"})
	require.NoError(t, err)
	assert.Equal(t, "z-call-003", tp.Calls[0].Record.CallID)
}

// A file replaced under its name (rotation) keeps its records, and the
// new file is read from its start.
func TestJSONLRotated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	writeFile(t, path, lines(rec("old", 0, "", true)))
	src := open(t, path)
	require.NoError(t, os.Rename(path, path+".1"))
	writeFile(t, path, lines(rec("new", 1, "", true)))
	eventually(t, func() bool { return slices.Equal(ids(t, src, view.Query{}), []string{"new", "old"}) }, "both files' records")
	// The old records are read through the handle kept, even once gone.
	require.NoError(t, os.Remove(path+".1"))
	tp, err := src.Trace(bg, view.TraceQuery{ID: "old"})
	require.NoError(t, err)
	assert.Contains(t, string(tp.Calls[0].Record.Args), "question 0 of old")
	// And the new file is followed.
	appendFile(t, path, lines(rec("newer", 2, "", true)))
	eventually(t, func() bool { return len(ids(t, src, view.Query{})) == 3 }, "the new file followed")
}

// Lines that are not records are counted, the first described with their
// line number; the records around them are indexed.
func TestJSONLBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	newer := strings.Replace(lines(rec("v", 5, "", true)), `"version":1`, `"version":9`, 1)
	writeFile(t, path, lines(rec("a", 0, "", true))+"not json\n"+`{"call_id":"x"}`+"\n\n"+newer+strings.Repeat("y", 1200)+"\n"+lines(rec("b", 1, "", true)))
	src, err := view.OpenJSONL([]string{path}, view.JSONLOptions{Poll: -1, MaxLine: 1000})
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, src.Wait(bg))
	assert.Equal(t, []string{"b", "a"}, ids(t, src, view.Query{}))
	st := src.Status()
	assert.Equal(t, 4, st.BadLines)
	require.Len(t, st.Problems, 4)
	assert.Contains(t, st.Problems[0], "h.jsonl:2:")
	assert.Contains(t, st.Problems[1], "h.jsonl:3: not a record")
	assert.Contains(t, st.Problems[2], "h.jsonl:5: format version 9")
	assert.Contains(t, st.Problems[3], "h.jsonl:6: line longer than")
	assert.False(t, st.Indexing)
	assert.Equal(t, 2, st.Records)
}

// A file of many bad lines keeps a bounded list of them.
func TestJSONLManyBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	writeFile(t, path, strings.Repeat("garbage\n", 5000))
	src := open(t, path)
	st := src.Status()
	assert.Equal(t, 5000, st.BadLines)
	assert.Len(t, st.Problems, 20)
}

// Records written with args_prefix come back with their Args whole, and
// their raw record without args_prefix: the same as the file written
// whole.
func TestJSONLArgsPrefixJoined(t *testing.T) {
	dir := t.TempDir()
	paths := map[bool]string{}
	for _, prefix := range []bool{false, true} {
		paths[prefix] = filepath.Join(dir, fmt.Sprintf("h-%t.jsonl", prefix))
		f, err := os.Create(paths[prefix])
		require.NoError(t, err)
		require.NoError(t, writeHistory(f, genOptions{Records: 600, Turns: 8, ArgsPrefix: prefix, Seed: 3}))
		require.NoError(t, f.Close())
	}
	whole, joined := open(t, paths[false]), open(t, paths[true])
	a, _ := os.ReadFile(paths[false])
	b, _ := os.ReadFile(paths[true])
	require.Less(t, len(b), len(a)*3/4, "the args_prefix file is smaller")
	require.Contains(t, string(b), `"args_prefix"`)

	page, err := whole.Conversations(bg, view.Query{Limit: 500})
	require.NoError(t, err)
	require.Greater(t, len(page.Conversations), 50)
	for _, c := range page.Conversations {
		want, err := whole.Trace(bg, view.TraceQuery{ID: c.ID})
		require.NoError(t, err)
		got, err := joined.Trace(bg, view.TraceQuery{ID: c.ID})
		require.NoError(t, err)
		require.Len(t, got.Calls, len(want.Calls), c.ID)
		for i := range want.Calls {
			assert.JSONEq(t, string(want.Calls[i].Record.Args), string(got.Calls[i].Record.Args), "%s call %d", c.ID, i)
			assert.NotContains(t, string(got.Calls[i].Raw), "args_prefix")
			assert.JSONEq(t, string(want.Calls[i].Raw), string(got.Calls[i].Raw))
		}
		// One call alone, the last: its Args put together from the lines before.
		last := want.Calls[len(want.Calls)-1].Record
		call, err := joined.Call(bg, last.CallID)
		require.NoError(t, err)
		assert.JSONEq(t, string(last.Args), string(call.Record.Args))
		// A page of the calls from the middle on.
		if len(want.Calls) > 4 {
			mid, err := joined.Trace(bg, view.TraceQuery{ID: c.ID, Offset: 3, Limit: 2})
			require.NoError(t, err)
			require.Len(t, mid.Calls, 2)
			assert.Equal(t, 3, mid.Offset)
			assert.JSONEq(t, string(want.Calls[3].Record.Args), string(mid.Calls[0].Record.Args))
		}
	}
}

// Conversations are found by every filter, paged newest first without a
// conversation lost or shown twice.
func TestJSONLConversationsQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	var rs []record.Record
	for i := range 30 {
		trace := fmt.Sprintf("t%02d", i)
		user := []string{"ana", "bo", "cy"}[i%3]
		r := rec(trace, i, user, i%7 != 0)
		if i%5 == 0 {
			r.Tags = []string{"checkout", "web"}
		}
		if i%4 == 0 {
			r.MethodName, r.Model = "anthropic.messages.create", "claude-sonnet-4-5"
		}
		if i == 11 {
			r.Attempts = 3
			r.Args = []byte(`[{"role":"user","parts":[{"type":"text","content":"Où est ma Commande? \"vite\" <b>"}]}]`)
		}
		rs = append(rs, r)
	}
	writeFile(t, path, lines(rs...))
	src := open(t, path)

	all := ids(t, src, view.Query{Limit: 100})
	require.Len(t, all, 30)
	assert.Equal(t, "t29", all[0])
	assert.Equal(t, "t00", all[29])

	var paged []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		p, err := src.Conversations(bg, view.Query{Limit: 7, Cursor: cursor})
		require.NoError(t, err)
		assert.Equal(t, 30, p.Total)
		for _, c := range p.Conversations {
			paged = append(paged, c.ID)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	assert.Equal(t, all, paged)

	count := func(q view.Query) int { q.Limit = 100; return len(ids(t, src, q)) }
	assert.Equal(t, 10, count(view.Query{User: "bo"}))
	assert.Equal(t, 6, count(view.Query{Tag: "checkout"}))
	assert.Equal(t, 8, count(view.Query{Provider: "anthropic"}))
	assert.Equal(t, 8, count(view.Query{Model: "claude-sonnet-4-5"}))
	assert.Equal(t, 5, count(view.Query{Outcome: view.OutcomeError}))
	assert.Equal(t, 25, count(view.Query{Outcome: view.OutcomeOK}))
	assert.Equal(t, []string{"t11"}, ids(t, src, view.Query{Outcome: view.OutcomeRetried}))
	assert.Equal(t, 0, count(view.Query{User: "nobody"}))
	assert.Equal(t, 2, count(view.Query{User: "ana", Tag: "checkout"}), "t00 and t15")
	from := time.Date(2026, 3, 1, 10, 10, 0, 0, time.UTC)
	assert.Equal(t, 10, count(view.Query{From: from, To: from.Add(10 * time.Minute)}))

	// Text, in any case, however the JSON spells it.
	assert.Equal(t, []string{"t11"}, ids(t, src, view.Query{Text: "COMMANDE"}))
	assert.Equal(t, []string{"t11"}, ids(t, src, view.Query{Text: "où est"}), "non-ASCII as written")
	assert.Equal(t, []string{"t11"}, ids(t, src, view.Query{Text: `"vite" <b>`}), "quotes and markup, escaped in the file")
	assert.Equal(t, []string{"t12"}, ids(t, src, view.Query{Text: "question 12 of"}))
	assert.Empty(t, ids(t, src, view.Query{Text: "zebra"}))
	assert.Equal(t, []string{"t03"}, ids(t, src, view.Query{Text: "question 3 ", User: "ana"}))

	_, err := src.Conversations(bg, view.Query{Cursor: "not a cursor!"})
	assert.ErrorIs(t, err, view.ErrBadCursor)

	// The search sees what is appended later.
	appendFile(t, path, lines(rec("late", 40, "", true)))
	eventually(t, func() bool { return len(ids(t, src, view.Query{Text: "question 40"})) == 1 }, "a search of new lines")
}

// The aggregates add up to what the records say.
func TestJSONLStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, writeHistory(f, genOptions{Records: 2000, Seed: 5}))
	require.NoError(t, f.Close())
	src := open(t, path)

	data, _ := os.ReadFile(path)
	rs, err := record.ReadJSONL(bytes.NewReader(data))
	require.NoError(t, err)
	var calls, errs, unpriced int
	var in, out int64
	var usd float64
	durations := map[string][]float64{}
	users := map[string]float64{}
	for _, r := range rs {
		calls++
		if !r.Outcome.OK {
			errs++
		}
		if r.Usage != nil {
			in += int64(r.Usage.InputTokens)
			out += int64(r.Usage.OutputTokens)
		}
		if r.Cost != nil {
			usd += r.Cost.USD
			users[r.UserID] += r.Cost.USD
		} else if r.Usage != nil && r.Usage.TotalTokens > 0 {
			unpriced++
		}
		durations[r.Model] = append(durations[r.Model], r.DurationMS)
	}
	st, err := src.Stats(bg, view.Query{})
	require.NoError(t, err)
	assert.Equal(t, calls, st.Calls)
	assert.Equal(t, errs, st.Errors)
	assert.Equal(t, in, st.InputTokens)
	assert.Equal(t, out, st.OutputTokens)
	assert.InDelta(t, usd, st.CostUSD, 1e-9)
	assert.Equal(t, unpriced, st.Unpriced)
	sum := 0
	for _, b := range st.Series {
		sum += b.Calls
	}
	assert.Equal(t, calls, sum, "every call in a bucket")
	assert.LessOrEqual(t, len(st.Series), 60)
	for _, g := range st.Models {
		d := durations[g.Name]
		slices.Sort(d)
		p50, p95 := d[(len(d)+1)/2-1], d[(len(d)*95+99)/100-1]
		assert.InEpsilon(t, p50, g.P50MS, 0.02, "%s p50", g.Name)
		assert.InEpsilon(t, p95, g.P95MS, 0.02, "%s p95", g.Name)
	}
	for _, g := range st.Users {
		assert.InDelta(t, users[g.Name], g.CostUSD, 1e-9, g.Name)
	}
	bo, err := src.Stats(bg, view.Query{User: "bo"})
	require.NoError(t, err)
	assert.Less(t, bo.Calls, st.Calls)
	require.Len(t, bo.Users, 1)
	assert.Equal(t, "bo", bo.Users[0].Name)
}

// A conversation or call that is not there is ErrNotFound.
func TestJSONLNotFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	writeFile(t, path, lines(rec("a", 0, "", true)))
	src := open(t, path)
	_, err := src.Trace(bg, view.TraceQuery{ID: "nope"})
	assert.True(t, errors.Is(err, view.ErrNotFound))
	_, err = src.Call(bg, "nope")
	assert.True(t, errors.Is(err, view.ErrNotFound))
	c, err := src.Call(bg, "a-call-000")
	require.NoError(t, err)
	assert.Equal(t, "h.jsonl:1", c.Line)
}

// A record without a trace is a conversation of its own, found by its
// call_id; several files are read as one history.
func TestJSONLNoTraceAndSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	lone := rec("", 1, "", true)
	lone.CallID = "lone-call"
	writeFile(t, a, lines(rec("shared", 0, "", true), lone))
	writeFile(t, b, lines(rec("shared", 2, "", true)))
	src := open(t, a, b)
	p, err := src.Conversations(bg, view.Query{})
	require.NoError(t, err)
	require.Len(t, p.Conversations, 2)
	assert.Equal(t, "shared", p.Conversations[0].ID)
	assert.Equal(t, 2, p.Conversations[0].Calls)
	assert.Equal(t, "lone-call", p.Conversations[1].ID)
	assert.True(t, p.Conversations[1].NoTrace)
	tp, err := src.Trace(bg, view.TraceQuery{ID: "lone-call"})
	require.NoError(t, err)
	require.Len(t, tp.Calls, 1)
	assert.Equal(t, "a.jsonl, b.jsonl", src.Status().Description)
}

func TestOpenJSONLErrors(t *testing.T) {
	_, err := view.OpenJSONL(nil, view.JSONLOptions{})
	assert.Error(t, err)
	_, err = view.OpenJSONL([]string{filepath.Join(t.TempDir(), "missing")}, view.JSONLOptions{})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = view.OpenJSONL([]string{t.TempDir()}, view.JSONLOptions{})
	assert.ErrorContains(t, err, "is a directory")
}

func TestFromRecords(t *testing.T) {
	src := view.FromRecords([]record.Record{rec("a", 0, "ana", true), rec("a", 1, "ana", false)})
	defer src.Close()
	p, err := src.Conversations(bg, view.Query{})
	require.NoError(t, err)
	require.Len(t, p.Conversations, 1)
	c := p.Conversations[0]
	assert.Equal(t, 2, c.Calls)
	assert.Equal(t, 1, c.Errors)
	assert.Equal(t, []string{"ana"}, c.Users)
	assert.Equal(t, "question 0 of a", c.FirstUserMessage)
}
