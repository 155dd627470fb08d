package view_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/view"
)

// The conformance of a view.Source: one history, read from a JSONL file
// and written into a SQLite and a PostgreSQL store, gives the same pages
// from each: every page of conversations for each filter, followed by
// its cursors; each conversation's calls, whole and a page at a time;
// calls by ID; the overview's aggregates; the facets. The JSONL source is
// the reference the stores are held to.
//
// What the store source (view.Store) does not say as the JSONL source
// does today is left out of what is compared, each where a "store gap"
// comment names it, so that the suite holds the store to the rest, and
// each can go once the store closes it:
//
//   - a conversation's Last is the start of its last call, not its end;
//   - it counts no retried calls, nor, in the list, unpriced ones;
//   - records without a trace_id are not listed (each is found by its
//     call_id);
//   - Total is -1: the store does not count conversations;
//   - a filtered list is in the order of the last call the filter
//     selects, not of the conversation's last activity;
//   - outcome "ok" selects conversations with a call that did not fail,
//     not those where no call failed;
//   - the overview counts as unpriced the calls with no cost, whether
//     they used tokens or not, and no group has unpriced calls;
//   - the overview's series is by the hour (or the day), where the JSONL
//     source's buckets are finer: compared by the hour.
//
// The latency quantiles are not compared: one quantile sketch for the
// store, the viewer and the report is the store's work.
func TestSourceConformance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, writeHistory(f, genOptions{Records: 300, Turns: 5, Active: 12, Span: 30 * time.Hour, Start: start, Seed: 11}))
	require.NoError(t, f.Close())
	raw, err := os.Open(path)
	require.NoError(t, err)
	recs, err := record.ReadJSONL(raw)
	raw.Close()
	require.NoError(t, err)
	// Records without a trace, which are conversations of their own.
	var alone []string
	for i := range recs {
		if i%37 == 5 {
			recs[i].TraceID = ""
			alone = append(alone, recs[i].CallID)
		}
	}
	path = filepath.Join(dir, "history2.jsonl")
	sink, err := record.OpenJSONL(path)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, sink.Append(ctx, r))
	}
	require.NoError(t, sink.Close())

	jsonl, err := view.OpenJSONL([]string{path}, view.JSONLOptions{})
	require.NoError(t, err)
	defer jsonl.Close()
	require.NoError(t, jsonl.Wait(ctx))
	want := readAll(t, jsonl, start, alone)

	for name, url := range map[string]string{
		"sqlite":   "sqlite:" + filepath.Join(dir, "history.db"),
		"postgres": pgtest.Start(t, pgtest.Options{}).NewDatabase(t),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := store.Open(ctx, url)
			require.NoError(t, err)
			defer s.Close()
			_, err = s.Write(ctx, recs)
			require.NoError(t, err)
			got := readAll(t, view.FromStore(s, time.Hour), start, alone)
			for k, w := range want {
				g, ok := got[k]
				if !assert.True(t, ok, "%s: %s: not read", name, k) {
					continue
				}
				assert.JSONEq(t, w, g, "%s: %s", name, k)
			}
		})
	}
}

// readAll reads what the viewer's pages show of src, each answer as
// JSON under a name that says what was asked.
func readAll(t *testing.T, src view.Source, start time.Time, alone []string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	put := func(name string, v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out[name] = string(b)
	}
	queries := map[string]view.Query{
		"all":                 {},
		"user":                {User: "ana"},
		"tag":                 {Tag: "checkout"},
		"model":               {Model: "gemini-2.5-flash"},
		"provider":            {Provider: "anthropic"},
		"outcome ok":          {Outcome: view.OutcomeOK},
		"outcome error":       {Outcome: view.OutcomeError},
		"a time range":        {From: start.Add(6 * time.Hour), To: start.Add(18 * time.Hour)},
		"a user and a tag":    {User: "bo", Tag: "support"},
		"a small page":        {Limit: 7},
		"provider, one page":  {Provider: "openai", Limit: 10},
		"text":                {Text: "Lisbon"},
		"text and a provider": {Text: "order", Provider: "openai"},
	}
	traced := map[string]bool{}
	for name, q := range queries {
		var listed []view.Conversation
		pages := 0
		for {
			p, err := src.Conversations(ctx, q)
			require.NoError(t, err, name)
			pages++
			if q.Limit > 0 {
				require.LessOrEqual(t, len(p.Conversations), q.Limit, name)
			}
			_ = p.Total // a store gap
			listed = append(listed, p.Conversations...)
			if p.Next == "" || pages > 100 {
				break
			}
			q.Cursor = p.Next
		}
		// Newest last activity first, each once, whatever the pages.
		seen := map[string]bool{}
		for i, c := range listed {
			require.False(t, seen[c.ID], "%s: %s listed twice", name, c.ID)
			seen[c.ID] = true
			if i > 0 && (q == view.Query{Limit: q.Limit, Cursor: q.Cursor}) { // a store gap: filtered lists
				assert.False(t, c.Last.After(listed[i-1].Last), "%s: not newest first at %s", name, c.ID)
			}
		}
		byID := map[string]view.Conversation{}
		for _, c := range listed {
			if !c.NoTrace { // a store gap
				byID[c.ID] = summaryOf(c)
			}
		}
		if q.Outcome != view.OutcomeOK { // a store gap: "ok"
			put("conversations "+name, byID)
		}
		for _, c := range listed {
			if traced[c.ID] || c.NoTrace { // a store gap: not listed (traced below by their IDs)
				continue
			}
			traced[c.ID] = true
			whole, err := src.Trace(ctx, view.TraceQuery{ID: c.ID})
			require.NoError(t, err, c.ID)
			put("trace "+c.ID, calls(whole))
			page, err := src.Trace(ctx, view.TraceQuery{ID: c.ID, Offset: 1, Limit: 2})
			require.NoError(t, err, c.ID)
			put("trace "+c.ID+" from 1, 2", calls(page))
			timings, err := src.Trace(ctx, view.TraceQuery{ID: c.ID, SkipArgs: true})
			require.NoError(t, err, c.ID)
			for _, call := range timings.Calls {
				require.Empty(t, call.Record.Args, "SkipArgs")
			}
			if len(whole.Calls) > 0 {
				id := whole.Calls[len(whole.Calls)-1].Record.CallID
				one, err := src.Call(ctx, id)
				require.NoError(t, err, id)
				put("call "+id, recordOf(one))
			}
		}
		if q.Text == "" && q.Limit == 0 {
			st, err := src.Stats(ctx, q)
			require.NoError(t, err, name)
			put("stats "+name, statsOf(st))
		}
	}
	for _, id := range alone {
		tp, err := src.Trace(ctx, view.TraceQuery{ID: id})
		require.NoError(t, err, id)
		require.Len(t, tp.Calls, 1, id)
		put("alone "+id, calls(tp))
	}
	_, err := src.Trace(ctx, view.TraceQuery{ID: "no such conversation"})
	put("a conversation not found", errorIs(err, view.ErrNotFound))
	_, err = src.Call(ctx, "no such call")
	put("a call not found", errorIs(err, view.ErrNotFound))
	for _, limit := range []int{0, 3} {
		fs, err := src.Facets(ctx, limit)
		require.NoError(t, err)
		put("facets "+string(rune('0'+limit)), fs)
	}
	return out
}

// calls is a trace page as compared: its conversation and its calls'
// records, each as its JSON.
func calls(p view.TracePage) any {
	var rs []string
	for _, c := range p.Calls {
		rs = append(rs, recordOf(c))
	}
	return map[string]any{"conversation": p.Conversation, "offset": p.Offset, "calls": rs}
}

// recordOf is a call's record as its JSON: what a reader of either source
// gets (Raw and Line say where it was read, which sources differ in).
func recordOf(c view.Call) string { return string(c.Record.AppendJSON(nil)) }

// statsOf is the aggregates as compared: costs to a billionth of a
// dollar, no latency quantiles, and without the store's gaps.
func statsOf(s view.Stats) view.Stats {
	s.CostUSD = usd(s.CostUSD)
	s.Unpriced, s.UnpricedTokens, s.Retried = 0, 0, 0 // a store gap
	if s.Bucket > 0 && s.Bucket <= time.Hour {        // a store gap: the series by the hour
		var hours []view.Bucket
		for _, b := range s.Series {
			h := b.Start.Truncate(time.Hour)
			if n := len(hours); n == 0 || !hours[n-1].Start.Equal(h) {
				hours = append(hours, view.Bucket{Start: h})
			}
			last := &hours[len(hours)-1]
			last.Calls, last.Errors, last.Tokens, last.CostUSD = last.Calls+b.Calls, last.Errors+b.Errors, last.Tokens+b.Tokens, last.CostUSD+b.CostUSD
		}
		s.Series, s.Bucket = hours, time.Hour
	}
	for i := range s.Series {
		s.Series[i].CostUSD = usd(s.Series[i].CostUSD)
	}
	for _, gs := range [][]view.Group{s.Models, s.Users, s.Tags, s.Providers} {
		for i := range gs {
			gs[i].P50MS, gs[i].P95MS, gs[i].FirstChunkP50MS = 0, 0, 0
			gs[i].CostUSD, gs[i].Unpriced = usd(gs[i].CostUSD), 0 // a store gap: unpriced
		}
	}
	return s
}

// usd is a cost to a billionth of a dollar: sums taken in another order
// differ in their last bits.
func usd(v float64) float64 { return math.Round(v*1e9) / 1e9 }

func errorIs(err, target error) string {
	if err == nil {
		return "no error"
	}
	if errors.Is(err, target) {
		return target.Error()
	}
	return "another error: " + err.Error()
}

// summaryOf is a conversation's summary as compared: its cost to a
// billionth of a dollar (sums taken in another order), and without what
// the store source does not say (its gaps).
func summaryOf(c view.Conversation) view.Conversation {
	c.CostUSD = usd(c.CostUSD)
	c.Last, c.Retried = time.Time{}, 0 // a store gap
	// A store keeps a record's tags as a set (its tagset, names.go), not
	// in the order the record gave them: the same tags, in its order.
	c.Tags = slices.Sorted(slices.Values(c.Tags))
	return c
}
