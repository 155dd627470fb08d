package store

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
)

// seqWalk is a term of a filter whose matches an index hands out newest
// first by the store's sequence number: a common word (the full-text
// index is keyed by it) or a common tag or metadata value (record_attrs'
// key ends with it).
type seqWalk struct {
	query string // of the matches' sequence numbers, col, parameters args
	col   string
	args  []any
	rest  Filter // the filter without the term
}

// walkOf returns the term of f whose matches a newest-first page is
// found among in their index's order, when p walks one: a word first,
// then a tag, then a metadata value. Testing each record met walking
// newest first by time costs an index probe a record (0.5 ms for a word
// on SQLite at a million records, 25-70 ms a chunk of 500 for a tag on
// PostgreSQL); reading a term's matches from its index newest first
// costs little, and records arrive in time order but for imports, which
// walkSeqs checks for.
func (s *Store) walkOf(f Filter, p *plan) (seqWalk, bool) {
	if k := textKey(f.Text); k != "" && p.walk("text", k) {
		if q, arg := s.d.textMatches(f.Text); q != "" {
			rest := f
			rest.Text = ""
			return seqWalk{query: q, col: s.d.textSeq(), args: []any{arg}, rest: rest}, true
		}
	}
	const attrs = `SELECT seq FROM record_attrs WHERE name = $1 AND value = $2`
	for i, t := range f.Tags {
		if p.walk(attrTag, t) {
			rest := f
			rest.Tags = slices.Delete(slices.Clone(f.Tags), i, i+1)
			return seqWalk{query: attrs, col: "seq", args: []any{attrTag, t}, rest: rest}, true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
		if v := f.Metadata[k]; p.walk(attrMeta+k, v) {
			rest := f
			rest.Metadata = maps.Clone(f.Metadata)
			delete(rest.Metadata, k)
			return seqWalk{query: attrs, col: "seq", args: []any{attrMeta + k, v}, rest: rest}, true
		}
	}
	return seqWalk{}, false
}

// walkSeqs finds a newest-first page (up to limit+1 records after at) of
// the records f selects, among w's matches taken from their index a
// chunk at a time by sequence number, keeping those the rest of f
// selects. It stops when no record older by sequence is newer by time
// than the page's last, which it asks (normally none; an import of old
// records makes it go on). ok is false when it gave up: the caller walks
// by time.
func (s *Store) walkSeqs(ctx context.Context, w seqWalk, f Filter, at *cursor, limit int, p *plan) (found []cursor, ok bool, err error) {
	upper := int64(math.MaxInt64)
	chunk := 4 * (limit + 1) // common terms: most of a chunk matches the rest
	n := len(w.args)
	src := s.q(w.query + ` AND ` + w.col + ` < $` + strconv.Itoa(n+1) + ` ORDER BY ` + w.col + ` DESC LIMIT $` + strconv.Itoa(n+2))
	for range 64 {
		rows, err := s.r.QueryContext(ctx, src, append(slices.Clone(w.args), upper, chunk)...)
		if err != nil {
			return nil, false, err
		}
		var seqs []any
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				rows.Close()
				return nil, false, err
			}
			seqs = append(seqs, seq)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, false, err
		}
		if len(seqs) > 0 {
			upper = seqs[len(seqs)-1].(int64)
			var args []any
			where := w.rest.whereWith(s, &args, p)
			if at != nil {
				where = and(where, at.before(&args))
			}
			where = and(where, "r.seq IN ("+placeholders(len(args)+1, len(seqs))+")")
			args = append(args, seqs...)
			var c cursor
			if err := eachRow(ctx, s.r, s.q(`SELECT r.ts, r.seq FROM records r WHERE `+where), args, []any{&c.ts, &c.seq}, func() error {
				found = append(found, c)
				return nil
			}); err != nil {
				return nil, false, err
			}
		}
		slices.SortFunc(found, func(a, b cursor) int {
			if a.ts != b.ts {
				return cmpInt(b.ts, a.ts)
			}
			return cmpInt(b.seq, a.seq)
		})
		if len(seqs) < chunk {
			return found[:min(len(found), limit+1)], true, nil // every match seen
		}
		if len(found) <= limit {
			continue
		}
		// Is any match older by sequence newer by time than the page's
		// end (its limit+1-th)? The whole filter, the term tested on
		// each record.
		found = found[:limit+1]
		var args []any
		where := f.whereWith(s, &args, p)
		if at != nil {
			where = and(where, at.before(&args))
		}
		where = and(where, found[limit].newer(&args))
		args = append(args, upper)
		where = and(where, "r.seq < $"+strconv.Itoa(len(args)))
		var one int
		err = s.r.QueryRowContext(ctx, s.q(`SELECT 1 FROM records r WHERE `+where+` LIMIT 1`), args...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return found, true, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	return nil, false, nil
}
