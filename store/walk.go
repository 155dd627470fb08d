package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strconv"
)

// seqWalk is a term of a filter whose matches an index hands out newest
// first by the store's sequence number: a common word, on SQLite, whose
// full-text index is keyed by it.
type seqWalk struct {
	query string // of the matches' sequence numbers, col, parameters args
	col   string
	args  []any
	rest  Filter // the filter without the term
}

// walkOf returns the term of f whose matches a newest-first page is
// found among in their index's order, when p walks one. Testing each
// record met walking newest first by time costs a full-text probe per
// record on SQLite (half a millisecond at a million records); FTS5 hands
// out its matches newest first by sequence number instead, cheaply, and
// records arrive in time order but for imports, which walkSeqs checks
// for. PostgreSQL's GIN index has no order: there, each record met is
// tested, which costs it little (a tsvector read by its record's key).
//
// Tried and measured: the same walk for a common tag in record_attrs'
// key order, on both backends, and for a word through record_text's key
// on PostgreSQL. At a million records (BenchmarkStorePages) PostgreSQL's
// conversations page by a tag took 597 ms and by a word 376 ms, against
// 44 and 16 ms walking by time (not the same run: loads 10-12 and 4-6);
// not kept.
func (s *Store) walkOf(f Filter, p *plan) (seqWalk, bool) {
	k := textKey(f.Text)
	col, ordered := s.d.textSeq()
	if k == "" || !ordered || !p.walk("text", k) {
		return seqWalk{}, false
	}
	q, arg := s.d.textMatches(f.Text)
	if q == "" {
		return seqWalk{}, false
	}
	rest := f
	rest.Text = ""
	return seqWalk{query: q, col: col, args: []any{arg}, rest: rest}, true
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
