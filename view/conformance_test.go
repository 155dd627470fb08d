package view_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
	for i := range recs {
		if i%37 == 5 {
			recs[i].TraceID = ""
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
	want := readAll(t, jsonl, start)

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
			got := readAll(t, view.FromStore(s, time.Hour), start)
			for k, w := range want {
				assert.JSONEq(t, w, got[k], "%s: %s", name, k)
			}
		})
	}
}

// readAll reads what the viewer's pages show of src, each answer as
// JSON under a name that says what was asked.
func readAll(t *testing.T, src view.Source, start time.Time) map[string]string {
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
	for name, q := range queries {
		var pages [][]view.Conversation
		for {
			p, err := src.Conversations(ctx, q)
			require.NoError(t, err, name)
			pages = append(pages, p.Conversations)
			if q.Text == "" {
				put("conversations "+name+" total", p.Total)
			}
			if p.Next == "" || len(pages) > 100 {
				break
			}
			q.Cursor = p.Next
		}
		put("conversations "+name, pages)
		if name == "all" {
			for i, c := range flatten(pages) {
				if i%5 != 0 {
					continue
				}
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
		}
		if q.Text == "" && q.Cursor == "" && q.Limit == 0 {
			st, err := src.Stats(ctx, q)
			require.NoError(t, err, name)
			put("stats "+name, statsOf(st))
		}
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

func flatten(pages [][]view.Conversation) []view.Conversation {
	var all []view.Conversation
	for _, p := range pages {
		all = append(all, p...)
	}
	return all
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

// statsOf is the aggregates as compared. The latency quantiles are left
// out: the sources estimate them each their own way today (one quantile
// sketch for the store, the viewer and the report is the store's work).
func statsOf(s view.Stats) view.Stats {
	for _, gs := range [][]view.Group{s.Models, s.Users, s.Tags, s.Providers} {
		for i := range gs {
			gs[i].P50MS, gs[i].P95MS, gs[i].FirstChunkP50MS = 0, 0, 0
		}
	}
	return s
}

func errorIs(err, target error) string {
	if err == nil {
		return "no error"
	}
	if errors.Is(err, target) {
		return target.Error()
	}
	return "another error: " + err.Error()
}
