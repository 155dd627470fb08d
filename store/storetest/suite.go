package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/quantile"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Harness is what the suite needs of a backend.
type Harness struct {
	// NewURL returns the URL of a new, empty store.
	NewURL func(t *testing.T) string
	// Exec runs SQL on the store's database directly, through the
	// backend's driver, to do what the store would not (set a newer
	// schema version).
	Exec func(t *testing.T, url, query string)
	// Files, when not nil, returns the bytes of every file the store's
	// database keeps (SQLite: the file, its WAL and spill file;
	// PostgreSQL: the server's data directory after a checkpoint), for
	// the test that deleted text is gone from them.
	Files func(t *testing.T, url string) []byte
}

// Run runs the conformance suite against a backend.
func Run(t *testing.T, h Harness) {
	harness = h
	tests := []struct {
		name string
		fn   func(t *testing.T, url string)
	}{
		{"EveryFieldRoundTrips", testEveryFieldRoundTrips},
		{"ExactlyOnceByCallID", testExactlyOnce},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ArgsWholeAndLinear", testArgsWholeAndLinear},
		{"QueryFilters", testQueryFilters},
		{"QueryPages", testQueryPages},
		{"TextSearch", testTextSearch},
		{"Aggregates", testAggregates},
		{"RollupsAgreeWithRecords", testRollupsAgree},
		{"Facets", testFacets},
		{"Traces", testTraces},
		{"Follow", testFollow},
		{"RetentionByAge", testRetentionByAge},
		{"NewerSchemaRefused", testNewerSchemaRefused},
		{"ReadOnly", testReadOnly},
		{"ThroughTheRecorder", testThroughRecorder},
		{"Records", testRecords},
		{"AnswerKeptOnce", testAnswerKeptOnce},
		{"Scores", testScores}, // scores.go
		{"Delete", testDelete}, // delete.go
		{"RetentionRules", testRetentionRules},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h.NewURL(t)) })
	}
}

var harness Harness

func open(t *testing.T, url string, o store.Options) *store.Store {
	t.Helper()
	s, err := store.OpenWith(context.Background(), url, o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// normalized is r as a store gives it back: normalized, Args whole.
func normalized(r record.Record) record.Record {
	r = r.Clone()
	r.Normalize()
	return r
}

func assertSame(t *testing.T, want, got record.Record) {
	t.Helper()
	want, got = normalized(want), normalized(got)
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	require.JSONEq(t, string(wj), string(gj), "record %s", want.CallID)
	assert.Equal(t, want, got, "record %s", want.CallID)
}

func testEveryFieldRoundTrips(t *testing.T, url string) {
	ctx := context.Background()
	full, unset := FullRecord("full-1")
	require.Empty(t, unset, "fields of record.Fields() FullRecord cannot set: teach fill their kind")
	s := open(t, url, store.Options{})
	_, err := s.Write(ctx, []record.Record{full})
	require.NoError(t, err)
	got, err := s.Get(ctx, "full-1")
	require.NoError(t, err)
	assertSame(t, full, got)

	// And read through every other way.
	tr, err := s.Trace(ctx, full.TraceID)
	require.NoError(t, err)
	require.Equal(t, 1, len(tr))
	assertSame(t, full, tr[0])
	p, err := s.Query(ctx, store.Query{})
	require.NoError(t, err)
	require.Equal(t, 1, len(p.Records))
	assertSame(t, full, p.Records[0])

	_, err = s.Get(ctx, "no-such-call")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func testExactlyOnce(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	recs, _ := storebench.Conversation(rand.New(rand.NewPCG(1, 2)), storebench.ConversationOptions{Trace: "once", Turns: 20})
	res, err := s.Write(ctx, recs[:12])
	require.NoError(t, err)
	assert.Equal(t, store.WriteResult{Written: 12}, res)
	// A batch retried after a lost answer, with more behind it, and a
	// record twice in one batch.
	batch := append(slices.Clone(recs[5:]), recs[19])
	res, err = s.Write(ctx, batch)
	require.NoError(t, err)
	assert.Equal(t, store.WriteResult{Written: 8, Duplicates: 8}, res)
	// Through the sink as well.
	require.NoError(t, s.AppendBatch(ctx, recs))
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, 20, n)
	got, err := s.Trace(ctx, "once")
	require.NoError(t, err)
	require.Equal(t, 20, len(got))
	for i := range recs {
		assertSame(t, recs[i], got[i])
	}
	st := s.Stats()
	assert.EqualValues(t, 20, st.Written)
	assert.EqualValues(t, 28, st.Duplicates)
}

// Several stores on one database (processes, replicas) write overlapping
// records at once: each lands once, whole.
func testConcurrentWriters(t *testing.T, url string) {
	ctx := context.Background()
	const writers, convs = 4, 12
	var all []record.Record
	for c := range convs {
		recs, _ := storebench.Conversation(rand.New(rand.NewPCG(uint64(c), 9)), storebench.ConversationOptions{Trace: fmt.Sprint("conc-", c), Turns: 15})
		all = append(all, recs...)
	}
	stores := make([]*store.Store, writers)
	for i := range stores {
		stores[i] = open(t, url, store.Options{BusyTimeout: 30 * time.Second})
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			// Every writer writes every record, in batches of its own
			// choosing, in an order of its own.
			order := rng.Perm(len(all))
			for len(order) > 0 {
				n := min(len(order), 1+rng.IntN(40))
				var batch []record.Record
				for _, i := range order[:n] {
					batch = append(batch, all[i])
				}
				order = order[n:]
				if _, err := stores[w].Write(ctx, batch); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var written, dups uint64
	for _, s := range stores {
		written += s.Stats().Written
		dups += s.Stats().Duplicates
	}
	assert.EqualValues(t, len(all), written, "each record written by exactly one writer")
	assert.EqualValues(t, (writers-1)*len(all), dups)
	n, err := stores[0].Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, len(all), n)
	for c := range convs {
		got, err := stores[c%writers].Trace(ctx, fmt.Sprint("conc-", c))
		require.NoError(t, err)
		require.Equal(t, 15, len(got))
		for i, r := range got {
			assertSame(t, all[c*15+i], r)
		}
	}
}

// A conversation's messages are stored once each, whatever order its
// records come in, and every record reads back with its args whole.
func testArgsWholeAndLinear(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	rng := rand.New(rand.NewPCG(4, 4))
	const turns = 120
	recs, _ := storebench.Conversation(rng, storebench.ConversationOptions{Trace: "long", Turns: turns})
	other, _ := storebench.Conversation(rng, storebench.ConversationOptions{Trace: "other", Turns: 30})
	// Record by record, in batches, interleaved with another trace, and
	// one record without a trace.
	loose := other[29]
	loose.CallID, loose.TraceID = "loose", ""
	var i, j int
	for i < len(recs) || j < len(other) {
		var batch []record.Record
		for range 1 + rng.IntN(7) {
			if i < len(recs) && (rng.IntN(2) == 0 || j == len(other)) {
				batch = append(batch, recs[i])
				i++
			} else if j < len(other) {
				batch = append(batch, other[j])
				j++
			}
		}
		_, err := s.Write(ctx, batch)
		require.NoError(t, err)
	}
	_, err := s.Write(ctx, []record.Record{loose})
	require.NoError(t, err)

	d, err := s.Describe(ctx)
	require.NoError(t, err)
	// The system prompt is shared; each turn adds a user message and its
	// answer, kept as the record's output and sent back by the next call
	// as one message. The loose record repeats other[29]'s.
	assert.EqualValues(t, 1+turns+turns+30+30, d.Messages, "each message stored once")

	got, err := s.Trace(ctx, "long")
	require.NoError(t, err)
	require.Equal(t, turns, len(got))
	for k := range recs {
		assertSame(t, recs[k], got[k])
	}
	for _, k := range []int{0, 1, 17, 63, turns - 1} {
		r, err := s.Get(ctx, recs[k].CallID)
		require.NoError(t, err)
		assertSame(t, recs[k], r)
	}
	r, err := s.Get(ctx, "loose")
	require.NoError(t, err)
	assertSame(t, loose, r)

	// A fresh store on the same database knows nothing of what the first
	// wrote: it lists the next records whole, and reads the same.
	s2 := open(t, url, store.Options{})
	more, _ := storebench.Conversation(rand.New(rand.NewPCG(4, 4)), storebench.ConversationOptions{Trace: "long", Turns: turns + 3})
	_, err = s2.Write(ctx, more[turns:])
	require.NoError(t, err)
	got, err = s.Trace(ctx, "long")
	require.NoError(t, err)
	require.Equal(t, turns+3, len(got))
	for k := range more {
		assertSame(t, more[k], got[k])
	}
}

// filterData writes records with known attribution and returns them.
func filterData(t *testing.T, s *store.Store) []record.Record {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	var all []record.Record
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	for c := range 6 {
		recs, _ := storebench.Conversation(rng, storebench.ConversationOptions{
			Trace: fmt.Sprint("f", c), Turns: 5, Start: start.Add(time.Duration(c) * time.Hour),
			User: fmt.Sprint("user-", c%3), Model: []string{"gpt-4o-mini", "gpt-4o"}[c%2],
			Tags: [][]string{{"checkout"}, {"checkout", "beta"}, nil}[c%3], ErrorEvery: 4,
		})
		for i := range recs {
			recs[i].Metadata = map[string]string{"tenant": []string{"acme", "globex"}[c%2]}
			if c == 5 {
				recs[i].MethodName = "gemini.generate_content"
			}
		}
		all = append(all, recs...)
	}
	_, err := s.Write(ctx, all)
	require.NoError(t, err)
	return all
}

func testQueryFilters(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	all := filterData(t, s)
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		f    store.Filter
		keep func(r record.Record) bool
	}{
		{"all", store.Filter{}, func(record.Record) bool { return true }},
		{"since", store.Filter{Since: start.Add(2 * time.Hour)}, func(r record.Record) bool { return ts(r).Compare(start.Add(2*time.Hour)) >= 0 }},
		{"until", store.Filter{Until: start.Add(2 * time.Hour)}, func(r record.Record) bool { return ts(r).Before(start.Add(2 * time.Hour)) }},
		{"user", store.Filter{UserID: "user-1"}, func(r record.Record) bool { return r.UserID == "user-1" }},
		{"tag", store.Filter{Tags: []string{"checkout"}}, func(r record.Record) bool { return slices.Contains(r.Tags, "checkout") }},
		{"tags", store.Filter{Tags: []string{"checkout", "beta"}}, func(r record.Record) bool { return slices.Contains(r.Tags, "beta") }},
		{"metadata", store.Filter{Metadata: map[string]string{"tenant": "globex"}}, func(r record.Record) bool { return r.Metadata["tenant"] == "globex" }},
		{"trace", store.Filter{TraceID: "f3"}, func(r record.Record) bool { return r.TraceID == "f3" }},
		{"model", store.Filter{Model: "gpt-4o"}, func(r record.Record) bool { return r.Model == "gpt-4o" }},
		{"provider", store.Filter{Provider: "gemini"}, func(r record.Record) bool { return r.MethodName == "gemini.generate_content" }},
		{"method", store.Filter{Method: "openai.chat.completions.create"}, func(r record.Record) bool { return r.MethodName == "openai.chat.completions.create" }},
		{"status", store.Filter{Status: "error"}, func(r record.Record) bool { return r.Outcome.Status == "error" }},
		{"error type", store.Filter{ErrorType: record.ErrorRateLimit}, func(r record.Record) bool { return r.Outcome.ErrorType == record.ErrorRateLimit }},
		{"min cost", store.Filter{MinCostUSD: 0.0005}, func(r record.Record) bool { return r.Cost != nil && r.Cost.USD >= 0.0005 }},
		{"min duration", store.Filter{MinDuration: 1500 * time.Millisecond}, func(r record.Record) bool { return r.DurationMS >= 1500 }},
		{"combined", store.Filter{UserID: "user-0", Model: "gpt-4o-mini", Status: "ok", Tags: []string{"checkout"}},
			func(r record.Record) bool {
				return r.UserID == "user-0" && r.Model == "gpt-4o-mini" && r.Outcome.OK && slices.Contains(r.Tags, "checkout")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			for _, r := range all {
				if c.keep(r) {
					want = append(want, r.CallID)
				}
			}
			require.NotEmpty(t, want, "a case that selects nothing tests little")
			p, err := s.Query(ctx, store.Query{Filter: c.f, Limit: 1000, NoArgs: true})
			require.NoError(t, err)
			var got []string
			for _, r := range p.Records {
				got = append(got, r.CallID)
				assert.JSONEq(t, "[]", string(r.Args), "NoArgs")
			}
			assert.True(t, sort.SliceIsSorted(p.Records, func(i, j int) bool { return ts(p.Records[i]).After(ts(p.Records[j])) }), "newest first")
			assert.ElementsMatch(t, want, got)
			n, err := s.Count(ctx, c.f)
			require.NoError(t, err)
			assert.EqualValues(t, len(want), n, "Count agrees")
		})
	}
}

func ts(r record.Record) time.Time {
	t, _ := record.ParseTime(r.Timestamp)
	return t
}

func testQueryPages(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	all := filterData(t, s)
	// Two records at the same instant: the cursor orders them too.
	same := all[0]
	same.CallID, same.TraceID = "same-instant", "f-same"
	_, err := s.Write(ctx, []record.Record{same})
	require.NoError(t, err)
	var got []string
	q := store.Query{Limit: 7}
	pages := 0
	for {
		p, err := s.Query(ctx, q)
		require.NoError(t, err)
		pages++
		for _, r := range p.Records {
			got = append(got, r.CallID)
		}
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	assert.Equal(t, (len(all)+1+6)/7, pages)
	assert.Len(t, got, len(all)+1)
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(got))), len(all)+1, "no record twice")
	_, err = s.Query(ctx, store.Query{Cursor: "not a cursor"})
	assert.ErrorIs(t, err, store.ErrBadCursor)
}

func testTextSearch(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	mk := func(id, trace string, msgs []record.Message, output string) record.Record {
		r := record.Record{CallID: id, Timestamp: "2026-11-23T10:00:00.000000Z", Speaker: "user", MethodName: "openai.chat.completions.create",
			Args: record.AppendMessages(nil, msgs), Outcome: record.Success("chat.completion"), TraceID: trace}
		if output != "" {
			out := record.TextMessage(record.RoleAssistant, output)
			r.Output = &out
		}
		return r
	}
	user := func(text string) record.Message { return record.TextMessage(record.RoleUser, text) }
	recs := []record.Record{
		mk("a1", "ta", []record.Message{user("Where is my Parcel? Order 4471.")}, "It left the warehouse."),
		mk("a2", "ta", []record.Message{user("Where is my Parcel? Order 4471."), record.TextMessage(record.RoleAssistant, "It left the warehouse."), user("Thanks, and the invoice?")}, "Sent by mail."),
		mk("b1", "tb", []record.Message{{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartMedia, MIMEType: "image/png", Size: 12}, {Type: record.PartText, Content: "a refund for order 9"}}}}, ""),
		mk("c1", "", []record.Message{user("nothing here")}, ""),
	}
	recs[3].ErrorMessage = "upstream connect error: Parcel service down"
	_, err := s.Write(ctx, recs)
	require.NoError(t, err)
	search := func(text string) []string {
		p, err := s.Query(ctx, store.Query{Filter: store.Filter{Text: text}, NoArgs: true})
		require.NoError(t, err)
		var ids []string
		for _, r := range p.Records {
			ids = append(ids, r.CallID)
		}
		slices.Sort(ids)
		return ids
	}
	assert.Equal(t, []string{"a1", "c1"}, search("parcel"), "where it entered its trace, and an error message; case does not matter")
	assert.Equal(t, []string{"a1"}, search("PARCEL order 4471"), "every word")
	assert.Equal(t, []string{"a2"}, search("invoice"), "the message a record adds")
	assert.Equal(t, []string{"a1", "a2"}, search("warehouse"), "output, and the answer the next call sends back")
	assert.Equal(t, []string{"b1"}, search("refund"), "text parts")
	assert.Empty(t, search("user"), "roles are not text")
	assert.Empty(t, search("image"), "nor media types")
	assert.Empty(t, search("parcel refund"))
	assert.Empty(t, search("!!!"), "no words: no match")
	tr, err := s.Traces(ctx, store.Query{Filter: store.Filter{Text: "parcel"}})
	require.NoError(t, err)
	require.Len(t, tr.Traces, 1)
	assert.Equal(t, "ta", tr.Traces[0].TraceID)
}

func testAggregates(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	all := filterData(t, s)
	type key struct{ day, model string }
	want := map[key]*store.Group{}
	durs := map[key][]float64{}
	for _, r := range all {
		k := key{ts(r).UTC().Truncate(24 * time.Hour).Format(time.RFC3339), r.Model}
		g := want[k]
		if g == nil {
			g = &store.Group{Key: []string{k.day, k.model}}
			want[k] = g
		}
		g.Calls++
		if !r.Outcome.OK {
			g.Errors++
		}
		if r.Usage != nil {
			g.InputTokens += int64(r.Usage.InputTokens)
			g.OutputTokens += int64(r.Usage.OutputTokens)
			g.TotalTokens += int64(r.Usage.TotalTokens)
		}
		if r.Cost != nil {
			g.CostUSD += r.Cost.USD
		}
		durs[k] = append(durs[k], r.DurationMS)
	}
	groups, err := s.Aggregate(ctx, store.AggregateQuery{By: []store.GroupBy{store.ByDay, store.ByModel}})
	require.NoError(t, err)
	require.Len(t, groups, len(want))
	for _, g := range groups {
		k := key{g.Key[0], g.Key[1]}
		w := want[k]
		require.NotNil(t, w, "group %v", g.Key)
		assert.Equal(t, w.Calls, g.Calls)
		assert.Equal(t, w.Errors, g.Errors)
		assert.Equal(t, w.TotalTokens, g.TotalTokens)
		assert.Equal(t, w.InputTokens, g.InputTokens)
		assert.InDelta(t, w.CostUSD, g.CostUSD, 1e-9)
		ds := slices.Sorted(slices.Values(durs[k]))
		// The nearest-rank values, within the latency sketch's 1%.
		assert.InEpsilon(t, nearestRank(ds, 0.5), g.LatencyP50MS, quantile.Accuracy+1e-9)
		assert.InEpsilon(t, nearestRank(ds, 0.95), g.LatencyP95MS, quantile.Accuracy+1e-9)
		assert.Equal(t, g.Key[0], g.Time.Format(time.RFC3339))
	}

	// The same asked so that the records are read (a filter no rollup
	// knows, selecting every record): the same figures.
	sameAsRecords(t, s, store.AggregateQuery{By: []store.GroupBy{store.ByDay, store.ByModel}})
	sameAsRecords(t, s, store.AggregateQuery{Filter: store.Filter{Provider: "openai", Since: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)},
		By: []store.GroupBy{store.ByHour, store.ByErrorType, store.ByMethod}})

	// By tag: a record with two tags counts in both; untagged under "".
	groups, err = s.Aggregate(ctx, store.AggregateQuery{By: []store.GroupBy{store.ByTag}})
	require.NoError(t, err)
	counts := map[string]int64{}
	for _, g := range groups {
		counts[g.Key[0]] = g.Calls
	}
	assert.Equal(t, map[string]int64{"": 10, "checkout": 20, "beta": 10}, counts)

	// A filter, and grouping by error type and user, by hour.
	groups, err = s.Aggregate(ctx, store.AggregateQuery{Filter: store.Filter{Status: "error"}, By: []store.GroupBy{store.ByErrorType, store.ByUser, store.ByHour}})
	require.NoError(t, err)
	var errs int64
	for _, g := range groups {
		assert.Equal(t, record.ErrorRateLimit, g.Key[0])
		assert.Equal(t, g.Calls, g.Errors)
		errs += g.Calls
	}
	assert.EqualValues(t, 6, errs)

	groups, err = s.Aggregate(ctx, store.AggregateQuery{})
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.EqualValues(t, len(all), groups[0].Calls)

	_, err = s.Aggregate(ctx, store.AggregateQuery{By: []store.GroupBy{"color"}})
	assert.ErrorIs(t, err, store.ErrBadGroup)
}

// sameAsRecords checks that q, answered however the store likes, gives
// what it gives when every record must be read.
func sameAsRecords(t *testing.T, s *store.Store, q store.AggregateQuery) {
	t.Helper()
	ctx := context.Background()
	got, err := s.Aggregate(ctx, q)
	require.NoError(t, err)
	q.MinDuration = time.Nanosecond // no rollup knows it; every record here has a duration
	want, err := s.Aggregate(ctx, q)
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	for i := range want {
		assert.Equal(t, want[i].Key, got[i].Key)
		assert.Equal(t, want[i].Time, got[i].Time)
		assert.Equal(t, want[i].Calls, got[i].Calls)
		assert.Equal(t, want[i].Errors, got[i].Errors)
		assert.Equal(t, want[i].TotalTokens, got[i].TotalTokens)
		assert.InDelta(t, want[i].CostUSD, got[i].CostUSD, 1e-9)
		// One sketch, merged from rollups or filled from records: the
		// same quantiles.
		assert.Equal(t, want[i].LatencyP50MS, got[i].LatencyP50MS)
		assert.Equal(t, want[i].LatencyP95MS, got[i].LatencyP95MS)
	}
}

// nearestRank is the exact ceil(q·n)-th smallest of sorted values.
func nearestRank(sorted []float64, q float64) float64 {
	r := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

func testTraces(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	filterData(t, s)
	var got []string
	q := store.Query{Limit: 4}
	for {
		p, err := s.Traces(ctx, q)
		require.NoError(t, err)
		for _, tr := range p.Traces {
			got = append(got, tr.TraceID)
			assert.EqualValues(t, 5, tr.Calls)
			assert.EqualValues(t, 1, tr.Errors)
			assert.True(t, tr.Last.After(tr.First))
		}
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	assert.Equal(t, []string{"f5", "f4", "f3", "f2", "f1", "f0"}, got, "newest first, each once")

	p, err := s.Traces(ctx, store.Query{Filter: store.Filter{UserID: "user-1", Model: "gpt-4o"}})
	require.NoError(t, err)
	require.Len(t, p.Traces, 1)
	assert.Equal(t, "f1", p.Traces[0].TraceID)
	assert.Equal(t, "user-1", p.Traces[0].UserID)
	assert.Equal(t, []string{"gpt-4o"}, p.Traces[0].Models)
	assert.Equal(t, []string{"openai"}, p.Traces[0].Providers)

	// A conversation that moves between models and providers lists each
	// once, in the order of first use, whichever record the filter chose.
	mix, _ := storebench.Conversation(rand.New(rand.NewPCG(9, 9)), storebench.ConversationOptions{
		Trace: "mix", Turns: 4, Start: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), Model: "gpt-4o-mini"})
	mix[1].Model = "gemini-2.5-flash"
	mix[1].MethodName = "gemini.models.generateContent"
	mix[2].Model = "claude-sonnet-4-5"
	mix[2].MethodName = "anthropic.messages.create"
	mix[3].Model = "gemini-2.5-flash"
	mix[3].MethodName = "gemini.models.generateContent"
	// Unpriced: a call that used tokens and has no cost counts, one that
	// used none does not.
	mix[2].Cost = nil
	mix[3].Cost, mix[3].Usage = nil, nil
	_, err = s.Write(ctx, mix)
	require.NoError(t, err)
	p, err = s.Traces(ctx, store.Query{Filter: store.Filter{TraceID: "mix", Model: "claude-sonnet-4-5"}})
	require.NoError(t, err)
	require.Len(t, p.Traces, 1)
	assert.Equal(t, []string{"gpt-4o-mini", "gemini-2.5-flash", "claude-sonnet-4-5"}, p.Traces[0].Models)
	assert.Equal(t, []string{"openai", "gemini", "anthropic"}, p.Traces[0].Providers)
	assert.EqualValues(t, 4, p.Traces[0].Calls)
	assert.EqualValues(t, 1, p.Traces[0].Unpriced, "the call with tokens and no cost")
	longest := 0
	for _, r := range mix {
		n := 0
		record.EachValidElement(r.Args, func([]byte) bool { n++; return true })
		longest = max(longest, n)
	}
	assert.Greater(t, longest, 4)
	assert.Equal(t, longest, p.Traces[0].Messages, "the longest call's messages")
}

func testFollow(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := open(t, url, store.Options{})
	recs, _ := storebench.Conversation(rand.New(rand.NewPCG(5, 5)), storebench.ConversationOptions{Trace: "follow", Turns: 30})
	_, err := s.Write(ctx, recs[:10])
	require.NoError(t, err)
	reader := open(t, url, store.Options{ReadOnly: true})
	fl := reader.Follow(store.Filter{TraceID: "follow"}, store.FollowOptions{Poll: 10 * time.Millisecond})
	last, err := fl.Last(ctx, 3)
	require.NoError(t, err)
	require.Equal(t, 3, len(last))
	for i, r := range last {
		assertSame(t, recs[7+i], r)
	}
	go func() {
		for i := 10; i < 30; i += 5 {
			time.Sleep(20 * time.Millisecond)
			s.Write(ctx, recs[i:i+5])
			other, _ := storebench.Conversation(rand.New(rand.NewPCG(uint64(i), 1)), storebench.ConversationOptions{Trace: fmt.Sprint("noise", i), Turns: 2})
			s.Write(ctx, other)
		}
	}()
	var got []record.Record
	for len(got) < 20 {
		rs, err := fl.Next(ctx)
		require.NoError(t, err)
		got = append(got, rs...)
	}
	require.Equal(t, 20, len(got))
	for i, r := range got {
		assertSame(t, recs[10+i], r)
	}
	short, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	rs, err := fl.Next(short)
	assert.Empty(t, rs)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func testRetentionByAge(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	now := time.Now().UTC()
	rng := rand.New(rand.NewPCG(8, 8))
	// A conversation that began 40 days ago and goes on today: its old
	// records go, the new ones build on them and must stay whole.
	long, _ := storebench.Conversation(rng, storebench.ConversationOptions{Trace: "long", Turns: 40, Start: now.Add(-40 * 24 * time.Hour)})
	for i := range long {
		long[i].Timestamp = record.FormatTime(now.Add(time.Duration(i-39)*24*time.Hour + time.Hour))
	}
	old, _ := storebench.Conversation(rng, storebench.ConversationOptions{Trace: "old", Turns: 10, Start: now.Add(-60 * 24 * time.Hour)})
	fresh, _ := storebench.Conversation(rng, storebench.ConversationOptions{Trace: "fresh", Turns: 10, Start: now.Add(-time.Hour)})
	for _, batch := range [][]record.Record{old, long, fresh} {
		_, err := s.Write(ctx, batch)
		require.NoError(t, err)
	}
	before, err := s.Describe(ctx)
	require.NoError(t, err)
	res, err := s.Prune(ctx, store.Retention{MaxAge: 30 * 24 * time.Hour})
	require.NoError(t, err)
	assert.EqualValues(t, 10+9, res.Records, "the old trace and the first 9 days of the long one")
	after, err := s.Describe(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, before.Records-19, after.Records)
	assert.Less(t, after.Messages, before.Messages, "the old trace's messages went with it")
	got, err := s.Trace(ctx, "long")
	require.NoError(t, err)
	require.Equal(t, 31, len(got))
	for i, r := range got {
		assertSame(t, long[9+i], r)
	}
	_, err = s.Trace(ctx, "fresh")
	require.NoError(t, err)
	sameAsRecords(t, s, store.AggregateQuery{By: []store.GroupBy{store.ByDay, store.ByModel}})
	tr, err := s.Trace(ctx, "old")
	require.NoError(t, err)
	assert.Empty(t, tr)
	// The store still takes the conversation's next turn on what is left.
	more, _ := storebench.Conversation(rand.New(rand.NewPCG(8, 8)), storebench.ConversationOptions{Trace: "long", Turns: 41})
	next := more[40]
	next.Timestamp = record.FormatTime(now.Add(time.Hour))
	_, err = s.Write(ctx, []record.Record{next})
	require.NoError(t, err)
	r, err := s.Get(ctx, next.CallID)
	require.NoError(t, err)
	assertSame(t, next, r)

	// A store opened with retention applies it itself.
	_, err = s.Write(ctx, old)
	require.NoError(t, err)
	s2 := open(t, url, store.Options{MaxAge: 30 * 24 * time.Hour, RetentionInterval: 10 * time.Millisecond})
	require.Eventually(t, func() bool {
		tr, err := s2.Trace(ctx, "old")
		return err == nil && len(tr) == 0
	}, 10*time.Second, 20*time.Millisecond)
}

func testNewerSchemaRefused(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	s.Close()
	harness.Exec(t, url, fmt.Sprintf("UPDATE llmhistory_meta SET value = '%d' WHERE key = 'schema_version'", store.SchemaVersion+2))
	for _, ro := range []bool{false, true} {
		_, err := store.OpenWith(ctx, url, store.Options{ReadOnly: ro})
		var se *store.SchemaError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, store.SchemaVersion+2, se.Found)
		assert.Equal(t, store.SchemaVersion, se.Known)
		assert.Contains(t, err.Error(), fmt.Sprintf("schema version %d", store.SchemaVersion+2))
		assert.Contains(t, err.Error(), fmt.Sprintf("up to %d", store.SchemaVersion))
	}
}

func testReadOnly(t *testing.T, url string) {
	ctx := context.Background()
	_, err := store.OpenWith(ctx, url, store.Options{ReadOnly: true})
	assert.Error(t, err, "nothing there to read")
	w := open(t, url, store.Options{})
	recs, _ := storebench.Conversation(rand.New(rand.NewPCG(2, 2)), storebench.ConversationOptions{Trace: "ro", Turns: 3})
	_, err = w.Write(ctx, recs)
	require.NoError(t, err)
	r := open(t, url, store.Options{ReadOnly: true})
	got, err := r.Trace(ctx, "ro")
	require.NoError(t, err)
	assert.Len(t, got, 3)
	_, err = r.Write(ctx, recs)
	assert.ErrorIs(t, err, store.ErrReadOnly)
	assert.ErrorIs(t, r.Append(ctx, recs[0]), store.ErrReadOnly)
	assert.Empty(t, r.SpillPath())
}

// Records reach the store through a recorder's sink queue, in batches:
// real calls through the recorder's client, to a chat server.
func testThroughRecorder(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	batches := &countingSink{Store: s}
	rec := middleware.NewRecorder(middleware.WithSink(batches), middleware.WithLogger(slog.New(slog.DiscardHandler)))
	const convs, turns = 8, 12
	calls := storebench.Chat(t, rec.Client(nil), convs, turns)
	require.NoError(t, rec.Close()) // closes its sinks: the store too
	st := rec.Stats()
	require.Len(t, st.Sinks, 1)
	assert.EqualValues(t, calls, st.Sinks[0].Written)
	assert.Zero(t, st.Dropped+st.SinkErrors)
	s = open(t, url, store.Options{ReadOnly: true})
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, calls, n)
	// The recorder found the conversations; the store keeps them whole.
	p, err := s.Traces(ctx, store.Query{Limit: 100})
	require.NoError(t, err)
	require.Len(t, p.Traces, convs)
	for _, tr := range p.Traces {
		assert.EqualValues(t, turns, tr.Calls)
		recs, err := s.Trace(ctx, tr.TraceID)
		require.NoError(t, err)
		for i, r := range recs {
			var msgs []json.RawMessage
			require.NoError(t, json.Unmarshal(r.Args, &msgs))
			assert.Len(t, msgs, 2+2*i, "turn %d sends the system prompt, the earlier turns and its question", i)
		}
	}
	assert.Less(t, batches.calls.Load(), int64(calls), "records arrive in batches")
}

// countingSink is a store that counts the calls it gets.
type countingSink struct {
	*store.Store
	calls atomic.Int64
}

func (c *countingSink) Append(ctx context.Context, r record.Record) error {
	c.calls.Add(1)
	return c.Store.Append(ctx, r)
}

func (c *countingSink) AppendBatch(ctx context.Context, rs []record.Record) error {
	c.calls.Add(1)
	return c.Store.AppendBatch(ctx, rs)
}

func testRecords(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	all := filterData(t, s)
	var got []record.Record
	for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{}) {
		require.NoError(t, err)
		got = append(got, r)
	}
	require.Equal(t, len(all), len(got))
	for i := range all {
		assertSame(t, all[i], got[i])
	}
	n := 0
	for r, err := range s.Records(ctx, store.Filter{UserID: "user-2"}, store.ReadOptions{NoArgs: true}) {
		require.NoError(t, err)
		assert.Equal(t, "user-2", r.UserID)
		n++
	}
	assert.Equal(t, 10, n)
	for range s.Records(ctx, store.Filter{}, store.ReadOptions{}) {
		break // stopping early is fine
	}
}

// rollupData writes records over ten weeks, across two month ends, with
// users, tags (none, one, two), models, methods and failures, some of
// them late (of hours sealed already), and a few of the days to come.
func rollupData(t *testing.T, s *store.Store) (start, end time.Time) {
	start = time.Date(2025, 10, 25, 7, 13, 0, 0, time.UTC)
	w := storebench.NewWorkload(11, start, 17*time.Minute+7*time.Second)
	recs := w.Batch(6000)
	for i := range recs {
		switch i % 7 {
		case 0:
			recs[i].Tags = nil
		case 1:
			recs[i].UserID = ""
		}
		if i%11 == 0 {
			recs[i].Cost = nil // unpriced, with its tokens
		}
	}
	// The first half in order, a batch at a time, as a recorder writes;
	// the rest shuffled, as an import of older files, late records among
	// them (hours already sealed into their days and months).
	for part := range slices.Chunk(recs[:3000], 500) {
		_, err := s.Write(context.Background(), part)
		require.NoError(t, err)
	}
	rest := slices.Clone(recs[3000:])
	// Hours are sealed up to now: records of the days to come stay in
	// their hours.
	soon := time.Now().UTC().Truncate(time.Hour).Add(26 * time.Hour)
	for i := range 40 {
		rest[i].Timestamp = record.FormatTime(soon.Add(time.Duration(i) * 37 * time.Minute))
	}
	rand.New(rand.NewPCG(4, 4)).Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	for part := range slices.Chunk(rest, 700) {
		_, err := s.Write(context.Background(), part)
		require.NoError(t, err)
	}
	end, err := record.ParseTime(recs[2999].Timestamp)
	require.NoError(t, err)
	return start, end
}

// Whatever an aggregate's filter, grouping and time range, the rollups
// answer what reading every record it selects answers: the same groups,
// figures, and quantiles.
func testRollupsAgree(t *testing.T, url string) {
	s := open(t, url, store.Options{})
	start, end := rollupData(t, s)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	mid := start.Add(end.Sub(start) / 2)
	ranges := []struct {
		name         string
		since, until time.Time
	}{
		{"all", time.Time{}, time.Time{}},
		{"since mid-hour", at(37*24*time.Hour + 17*time.Minute), time.Time{}},
		{"until mid-hour", time.Time{}, mid.Add(23 * time.Minute)},
		{"within an hour", at(50*time.Hour + 5*time.Minute), at(50*time.Hour + 55*time.Minute)},
		{"whole hours", at(46*time.Hour + 47*time.Minute), at(70*time.Hour + 47*time.Minute)},
		{"across months", time.Date(2025, 10, 30, 13, 31, 0, 0, time.UTC), time.Date(2025, 12, 2, 2, 2, 0, 0, time.UTC)},
		{"a whole month", time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"from a month on", time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), time.Time{}},
	}
	filters := []struct {
		name string
		f    store.Filter
	}{
		{"none", store.Filter{}},
		{"user", store.Filter{UserID: "user-7"}},
		{"tag", store.Filter{Tags: []string{"checkout"}}},
		{"two tags", store.Filter{Tags: []string{"support", "beta"}}},
		{"model", store.Filter{Model: "gpt-4o"}},
		{"provider", store.Filter{Provider: "anthropic"}},
		{"status", store.Filter{Status: "error"}},
		{"error type", store.Filter{ErrorType: record.ErrorRateLimit}},
		{"method", store.Filter{Method: "gemini.generate_content"}},
		{"tag and user", store.Filter{Tags: []string{"search"}, UserID: "user-3"}},
		{"unknown user", store.Filter{UserID: "nobody"}},
	}
	var groupings []store.Grouping
	for _, by := range [][]store.GroupBy{
		nil, {store.ByHour}, {store.ByDay}, {store.ByUser}, {store.ByTag}, {store.ByModel}, {store.ByProvider},
		{store.ByMethod}, {store.ByErrorType}, {store.ByDay, store.ByModel}, {store.ByUser, store.ByTag}, {store.ByTag, store.ByDay},
	} {
		// With latency (the rows read, their sketches merged), and
		// without (the sums added up by the database).
		groupings = append(groupings, store.Grouping{By: by}, store.Grouping{By: by, NoLatency: true})
	}
	ctx := context.Background()
	for _, r := range ranges {
		for _, f := range filters {
			f.f.Since, f.f.Until = r.since, r.until
			got, err := s.Aggregates(ctx, f.f, groupings...)
			require.NoError(t, err)
			slow := f.f
			slow.MinDuration = time.Nanosecond // no rollup knows it; every record here has a duration
			want, err := s.Aggregates(ctx, slow, groupings...)
			require.NoError(t, err)
			for i, by := range groupings {
				name := fmt.Sprintf("%s, %s, by %+v", r.name, f.name, by)
				require.Equal(t, len(want[i]), len(got[i]), name)
				for j := range want[i] {
					w, g := want[i][j], got[i][j]
					assert.Equal(t, w.Key, g.Key, name)
					assert.Equal(t, w.Time, g.Time, name)
					assert.Equal(t, [7]int64{w.Calls, w.Errors, w.InputTokens, w.OutputTokens, w.TotalTokens, w.Unpriced, w.UnpricedTokens},
						[7]int64{g.Calls, g.Errors, g.InputTokens, g.OutputTokens, g.TotalTokens, g.Unpriced, g.UnpricedTokens}, "%s %v", name, w.Key)
					assert.InDelta(t, w.CostUSD, g.CostUSD, 1e-9, name)
					assert.Equal(t, w.LatencyP50MS, g.LatencyP50MS, "%s %v", name, w.Key)
					assert.Equal(t, w.LatencyP95MS, g.LatencyP95MS, "%s %v", name, w.Key)
					if by.NoLatency {
						assert.Zero(t, g.LatencyP95MS, name)
					}
				}
			}
		}
	}
	// And the records say what the rollups sum: every call once.
	all, err := s.Aggregate(ctx, store.AggregateQuery{})
	require.NoError(t, err)
	assert.EqualValues(t, 6000, all[0].Calls)
}

// The values a filter offers are every user, tag, model, provider,
// method and error type written, sorted.
func testFacets(t *testing.T, url string) {
	s := open(t, url, store.Options{})
	filterData(t, s)
	f, err := s.Facets(context.Background())
	require.NoError(t, err)
	assert.Equal(t, store.Facets{
		Users:      []string{"user-0", "user-1", "user-2"},
		Tags:       []string{"beta", "checkout"},
		Models:     []string{"gpt-4o", "gpt-4o-mini"},
		Providers:  []string{"gemini", "openai"},
		Methods:    []string{"gemini.generate_content", "openai.chat.completions.create"},
		ErrorTypes: []string{record.ErrorRateLimit},
	}, f)
}

// A record's answer is kept as a message, the one the next call of its
// conversation sends back: both records read back whole, and the store
// holds the answer once; a list without args leaves it out.
func testAnswerKeptOnce(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	q := record.TextMessage(record.RoleUser, "Where is order 7?")
	a := record.Message{Role: record.RoleAssistant, Parts: []record.Part{
		{Type: record.PartReasoning, Content: "Look it up."},
		{Type: record.PartToolCall, ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"id":7}`)}}}
	result := record.Message{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartToolResult, ID: "call_1", Content: "shipped"}}}
	done := record.TextMessage(record.RoleAssistant, "It has shipped.")
	mk := func(id string, out *record.Message, msgs ...record.Message) record.Record {
		return record.Record{CallID: id, Timestamp: "2026-11-23T10:00:00.000000Z", Speaker: record.SpeakerUser, MethodName: "openai.chat.completions.create",
			Args: record.AppendMessages(nil, msgs), Outcome: record.Success("chat.completion"), TraceID: "t-answer", Output: out}
	}
	recs := []record.Record{mk("ans-1", &a, q), mk("ans-2", &done, q, a, result)}
	_, err := s.Write(ctx, recs[:1])
	require.NoError(t, err)
	_, err = s.Write(ctx, recs[1:]) // another batch: the answer is found in the database
	require.NoError(t, err)
	for _, want := range recs {
		got, err := s.Get(ctx, want.CallID)
		require.NoError(t, err)
		assertSame(t, want, got)
	}
	d, err := s.Describe(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(4), d.Messages, "the question, the answer (kept once), the tool's result, the last answer")
	page, err := s.Query(ctx, store.Query{Filter: store.Filter{TraceID: "t-answer"}, NoArgs: true})
	require.NoError(t, err)
	require.Len(t, page.Records, 2)
	for _, r := range page.Records {
		assert.Nil(t, r.Output, "NoArgs: no transcripts")
	}
	for _, o := range []store.ReadOptions{{NoArgs: true}, {NoOutput: true}, {NoArgs: true, NoOutput: true}} {
		n := 0
		for r, err := range s.Records(ctx, store.Filter{TraceID: "t-answer"}, o) {
			require.NoError(t, err)
			want := recs[n]
			n++
			if o.NoArgs {
				assert.JSONEq(t, `[]`, string(r.Args), "%+v", o)
			} else {
				assert.JSONEq(t, string(want.Args), string(r.Args), "%+v", o)
			}
			if o.NoOutput {
				assert.Nil(t, r.Output, "%+v", o)
			} else if assert.NotNil(t, r.Output, "%+v: the answer read without the args (an evaluator's)", o) {
				assert.Equal(t, *want.Output, *r.Output)
			}
		}
		assert.Equal(t, 2, n)
	}
}
