package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"time"
)

// TraceSummary is one trace (a conversation) in a list of traces: the
// figures of all its records.
type TraceSummary struct {
	TraceID     string
	First, Last time.Time // timestamps of its first and last records
	Calls       int64
	Errors      int64 // calls whose outcome was not "ok"
	TotalTokens int64
	CostUSD     float64
	// Unpriced counts its calls that used tokens and carry no cost (a
	// model the price table does not know), as [Group].Unpriced does.
	Unpriced int64
	UserID   string // its user; the greatest when it has several
	Model    string // its model; the greatest when it has several
	// Models and Providers are all of them, in the order of their first
	// use; a record without a model adds none.
	Models, Providers []string
	// Messages is how many messages its longest call sent (its args'
	// elements), read from the stored references without the messages.
	Messages int
	// Tags are the tags of all its records, in the order of their first
	// use (a record's own tags in the order the store keeps its tagset).
	Tags        []string
	DurationMS  float64
	FirstCallID string // its first record (by timestamp)
	LastCallID  string // the newest record the filter selected in it
}

// TracePage is one page of traces.
type TracePage struct {
	Traces []TraceSummary
	// Next is the cursor of the following page; "" when this is the last.
	Next string
}

// Traces lists the traces that have a record the query's filter selects,
// newest first by that record, a page at a time (q.Limit traces, default
// 50; q.Cursor continues). Each comes with the figures of all its records.
// It reads the selected records newest first until the page is full, not
// all of them.
func (s *Store) Traces(ctx context.Context, q Query) (TracePage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	var start *cursor
	if q.Cursor != "" {
		c, err := parseCursor(q.Cursor)
		if err != nil {
			return TracePage{}, err
		}
		start = &c
	}
	type hit = traceHit
	var order []*hit
	byTrace := map[string]*hit{}
	listed := map[string]bool{} // on an earlier page: a newer record selected
	const chunk = 500
	p, err := s.planPage(ctx, q.Filter, chunk)
	if err != nil {
		return TracePage{}, s.readErr(err)
	}
	pos := start
	// A common word may be found newest first in the full-text index's
	// own order (walkSeqs), rather than tested record by record.
	w, bySeq := s.walkOf(q.Filter, p)
	for len(order) < limit {
		var rows *sql.Rows
		var err error
		more := true // what the chunk was taken from has more
		var last *cursor
		if bySeq {
			var found []cursor
			var ok bool
			f := q.Filter
			found, ok, err = s.walkSeqs(ctx, w, f, pos, chunk-1, p)
			if err != nil {
				return TracePage{}, s.readErr(err)
			}
			if !ok {
				bySeq = false
				continue
			}
			if len(found) == 0 {
				break
			}
			seqs := make([]any, len(found))
			for i, c := range found {
				seqs[i] = c.seq
			}
			rows, err = s.r.QueryContext(ctx, s.q(`SELECT r.trace_id, r.call_id, r.ts, r.seq FROM records r WHERE r.trace_id IS NOT NULL AND r.seq IN (`+
				placeholders(1, len(seqs))+`) ORDER BY r.ts DESC, r.seq DESC`), seqs...)
			more = len(found) == chunk
			last = &found[len(found)-1]
		} else {
			var args []any
			where := and(q.whereWith(s, &args, p), "r.trace_id IS NOT NULL")
			if pos != nil {
				where = and(where, pos.before(&args))
			}
			args = append(args, chunk)
			rows, err = s.r.QueryContext(ctx, s.q(`SELECT r.trace_id, r.call_id, r.ts, r.seq FROM records r WHERE `+where+
				` ORDER BY r.ts DESC, r.seq DESC LIMIT $`+strconv.Itoa(len(args))), args...)
		}
		if err != nil {
			return TracePage{}, s.readErr(err)
		}
		var fresh []*hit
		n := 0
		for rows.Next() {
			h := &hit{}
			if err := rows.Scan(&h.trace, &h.callID, &h.at.ts, &h.at.seq); err != nil {
				rows.Close()
				return TracePage{}, s.readErr(err)
			}
			n++
			c := h.at
			pos = &c
			if _, ok := byTrace[h.trace]; ok {
				continue
			}
			if listed[h.trace] {
				continue
			}
			byTrace[h.trace] = h
			fresh = append(fresh, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return TracePage{}, s.readErr(err)
		}
		if last != nil {
			pos = last
		} else {
			more = n == chunk
		}
		if start != nil && len(fresh) > 0 {
			// A trace with a selected record before the cursor was listed
			// on an earlier page.
			earlier, err := s.tracesSelectedAfter(ctx, q.Filter, p, *start, fresh)
			if err != nil {
				return TracePage{}, err
			}
			kept := fresh[:0]
			for _, h := range fresh {
				if earlier[h.trace] {
					listed[h.trace] = true
					delete(byTrace, h.trace)
					continue
				}
				kept = append(kept, h)
			}
			fresh = kept
		}
		order = append(order, fresh...)
		if !more {
			break
		}
	}
	var page TracePage
	if len(order) > limit {
		order = order[:limit]
	}
	if len(order) == limit {
		page.Next = order[limit-1].at.String()
	}
	if len(order) == 0 {
		return page, nil
	}
	ids := make([]any, len(order))
	for i, h := range order {
		ids[i] = h.trace
	}
	sums := map[string]*TraceSummary{}
	var t TraceSummary
	var first, last int64
	err = eachRow(ctx, s.r, s.q(`SELECT r.trace_id, min(r.ts), max(r.ts), count(*), sum(CASE WHEN r.status <> 'ok' THEN 1 ELSE 0 END),
		coalesce(sum(r.total_tokens), 0), coalesce(sum(r.cost_usd), 0),
		sum(CASE WHEN r.cost_usd IS NULL AND r.input_tokens + r.output_tokens > 0 THEN 1 ELSE 0 END), coalesce(max(r.user_id), ''), coalesce(max(r.model), ''), coalesce(sum(r.duration_ms), 0)
		FROM records r WHERE r.trace_id IN (`+placeholders(1, len(ids))+`) GROUP BY r.trace_id`), ids,
		[]any{&t.TraceID, &first, &last, &t.Calls, &t.Errors, &t.TotalTokens, &t.CostUSD, &t.Unpriced, &t.UserID, &t.Model, &t.DurationMS}, func() error {
			t.First, t.Last = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
			sum := t
			sums[t.TraceID] = &sum
			return nil
		})
	if err != nil {
		return TracePage{}, s.readErr(err)
	}
	if err := s.traceModels(ctx, ids, sums); err != nil {
		return TracePage{}, err
	}
	if err := s.traceDetails(ctx, ids, sums); err != nil {
		return TracePage{}, err
	}
	for _, h := range order {
		if t, ok := sums[h.trace]; ok {
			t.LastCallID = h.callID
			page.Traces = append(page.Traces, *t)
		}
	}
	return page, nil
}

// traceModels fills in the models and providers of the traces ids,
// read from the trace index, one row per trace, model and provider.
func (s *Store) traceModels(ctx context.Context, ids []any, sums map[string]*TraceSummary) error {
	var trace, model, provider string
	var first int64
	err := eachRow(ctx, s.r, s.q(`SELECT r.trace_id, coalesce(r.model, ''), r.provider, min(r.ts) AS first
		FROM records r WHERE r.trace_id IN (`+placeholders(1, len(ids))+`) GROUP BY r.trace_id, r.model, r.provider ORDER BY first`), ids,
		[]any{&trace, &model, &provider, &first}, func() error {
			t, ok := sums[trace]
			if !ok {
				return nil
			}
			if model != "" && !slices.Contains(t.Models, model) {
				t.Models = append(t.Models, model)
			}
			if provider != "" && !slices.Contains(t.Providers, provider) {
				t.Providers = append(t.Providers, provider)
			}
			return nil
		})
	return s.readErr(err)
}

// traceDetails fills in, for the traces ids, how many messages the
// longest call of each sent, its first record and its tags, from its
// records' rows. A record's args are base_count messages of its base and
// one reference per message in refs (refs.go), each a varint, whose last
// byte alone has the high bit clear.
func (s *Store) traceDetails(ctx context.Context, ids []any, sums map[string]*TraceSummary) error {
	type row struct {
		trace, callID string
		ts, seq       int64
		tagset        int32
	}
	var all []row
	var r row
	var base int
	var refs []byte
	// Each record's document is looked up by its key: joined, PostgreSQL
	// hashed the whole of record_docs for the page's thousand records
	// (0.3-0.6 s at 100,000 records, measured with auto_explain).
	err := eachRow(ctx, s.r, s.q(`SELECT r.trace_id, r.call_id, r.ts, r.seq, coalesce(r.tagset, 0),
		(SELECT d.base_count FROM record_docs d WHERE d.seq = r.seq), (SELECT d.refs FROM record_docs d WHERE d.seq = r.seq)
		FROM records r WHERE r.trace_id IN (`+placeholders(1, len(ids))+`)`), ids,
		[]any{&r.trace, &r.callID, &r.ts, &r.seq, &r.tagset, &base, &refs}, func() error {
			if t, ok := sums[r.trace]; ok {
				t.Messages = max(t.Messages, base+countRefs(refs))
			}
			all = append(all, r)
			return nil
		})
	if err != nil {
		return s.readErr(err)
	}
	slices.SortFunc(all, func(a, b row) int {
		if a.ts != b.ts {
			return cmpInt(a.ts, b.ts)
		}
		return cmpInt(a.seq, b.seq)
	})
	var sets, names []int32
	for _, r := range all {
		sets = append(sets, r.tagset)
	}
	if err := s.dict.lookup(ctx, s, s.r, sets); err != nil {
		return s.readErr(err)
	}
	for _, r := range all {
		names = append(names, s.dict.tagsOf(r.tagset)...)
	}
	if err := s.dict.lookup(ctx, s, s.r, names); err != nil {
		return s.readErr(err)
	}
	for _, r := range all {
		t, ok := sums[r.trace]
		if !ok {
			continue
		}
		if t.FirstCallID == "" {
			t.FirstCallID = r.callID
		}
		for _, id := range s.dict.tagsOf(r.tagset) {
			if n := s.dict.name(id); n != "" && !slices.Contains(t.Tags, n) {
				t.Tags = append(t.Tags, n)
			}
		}
	}
	return nil
}

// traceHit is a trace found by Traces: its newest selected record.
type traceHit struct {
	trace, callID string
	at            cursor
}

// tracesSelectedAfter returns which of the traces of hits have a record
// the filter selects at or before c in newest-first order, that is,
// at c or newer.
// A common term is tested on each of these traces' records (p), not
// gathered from all it matches.
func (s *Store) tracesSelectedAfter(ctx context.Context, f Filter, p *plan, c cursor, hits []*traceHit) (map[string]bool, error) {
	traces := make([]any, len(hits))
	for i, h := range hits {
		traces[i] = h.trace
	}
	var args []any
	where := and(f.whereWith(s, &args, p), c.atOrNewer(&args))
	where = and(where, "r.trace_id IN ("+placeholders(len(args)+1, len(traces))+")")
	args = append(args, traces...)
	out := map[string]bool{}
	var t string
	err := eachRow(ctx, s.r, s.q(`SELECT DISTINCT r.trace_id FROM records r WHERE `+where), args, []any{&t}, func() error {
		out[t] = true
		return nil
	})
	if err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}
