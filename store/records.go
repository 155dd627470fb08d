package store

import (
	"context"
	"iter"
	"strconv"

	"github.com/llmhistory/llmhistory/record"
)

// ReadOptions says how records are read.
type ReadOptions struct {
	// NoArgs leaves Args empty ("[]"), saving the work of putting them
	// back together: for readers that need no transcripts, as a report.
	NoArgs bool
	// NoOutput leaves Output nil, saving the reading of each record's
	// answer (a message kept apart from the record): for readers that
	// need none, as a report.
	NoOutput bool
}

// scanPage is how many records Records reads at once.
const scanPage = 1000

// Records returns every record the filter selects, in the order the store
// took them (the oldest first), reading them a page at a time, so that
// memory stays bounded whatever the store holds. Iteration stops at the
// first error, which it yields.
func (s *Store) Records(ctx context.Context, f Filter, o ReadOptions) iter.Seq2[record.Record, error] {
	return func(yield func(record.Record, error) bool) {
		var after int64 = -1 << 62
		memo := idMemo{}
		for {
			var args []any
			where := f.where(s, &args)
			args = append(args, after)
			where = and(where, "r.seq > $"+strconv.Itoa(len(args)))
			args = append(args, scanPage)
			rows, err := s.r.QueryContext(ctx, s.q(`SELECT `+docColumns+` FROM records r JOIN record_docs d ON d.seq = r.seq WHERE `+where+
				` ORDER BY r.seq LIMIT $`+strconv.Itoa(len(args))), args...)
			if err != nil {
				yield(record.Record{}, s.readErr(err))
				return
			}
			ds, err := scanDocs(rows)
			if err != nil {
				yield(record.Record{}, s.readErr(err))
				return
			}
			if len(ds) == 0 {
				return
			}
			if len(memo) > 100_000 {
				clear(memo) // bounded; bases are fetched again when needed
			}
			recs, err := s.assemble(ctx, ds, !o.NoArgs, !o.NoOutput, memo)
			if err != nil {
				yield(record.Record{}, err)
				return
			}
			for _, r := range recs {
				if !yield(r, nil) {
					return
				}
			}
			after = ds[len(ds)-1].seq
			if len(ds) < scanPage {
				return
			}
		}
	}
}

// Count returns how many records the filter selects.
func (s *Store) Count(ctx context.Context, f Filter) (int64, error) {
	var args []any
	where := f.where(s, &args)
	if where != "" {
		where = " WHERE " + where
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, s.q(`SELECT count(*) FROM records r`+where), args...).Scan(&n); err != nil {
		return 0, s.readErr(err)
	}
	return n, nil
}
