package store

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Follower hands out the records a filter selects as they arrive in a
// store, each once, in the order the store took them. Make one with
// [Store.Follow]; it is not safe for concurrent use.
//
// On PostgreSQL, replicas commit out of the order their records were
// numbered in: a record numbered before one already handed out may
// become visible later. A Follower watches such gaps in the numbering for
// a while (a minute) and hands out what fills them, so that nothing a
// writer commits in that time is missed.
type Follower struct {
	s    *Store
	f    Filter
	poll time.Duration
	opts ReadOptions

	high  int64               // the highest sequence number seen
	gaps  map[int64]time.Time // numbers below high not seen yet, and since when
	memo  idMemo
	start bool // Last has not been asked for: the first Next starts at the end
}

// FollowOptions configures [Store.Follow].
type FollowOptions struct {
	// Poll is how often the store is asked for new records; default 250ms.
	Poll time.Duration
	// FromStart hands out every record the store holds first, then what
	// arrives; by default only what arrives from now on.
	FromStart bool
	ReadOptions
}

// gapWait is how long a gap in the numbering is waited for.
const gapWait = time.Minute

// Follow returns a Follower of the records f selects that arrive from
// now on; [Follower.Last] first hands out the newest few already there.
func (s *Store) Follow(f Filter, o FollowOptions) *Follower {
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	return &Follower{s: s, f: f, poll: o.Poll, opts: o.ReadOptions, gaps: map[int64]time.Time{}, memo: idMemo{}, start: !o.FromStart}
}

// Last returns the newest n records the filter selects, oldest first,
// and sets the follower to hand out what arrives after them. Call it
// before Next, or not at all.
func (fl *Follower) Last(ctx context.Context, n int) ([]record.Record, error) {
	if err := fl.begin(ctx); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	var args []any
	where := fl.f.where(fl.s, &args)
	args = append(args, fl.high)
	where = and(where, "r.seq <= $"+strconv.Itoa(len(args)))
	args = append(args, n)
	rows, err := fl.s.r.QueryContext(ctx, fl.s.q(`SELECT `+docColumns+` FROM records r JOIN record_docs d ON d.seq = r.seq WHERE `+where+
		` ORDER BY r.seq DESC LIMIT $`+strconv.Itoa(len(args))), args...)
	if err != nil {
		return nil, fl.s.readErr(err)
	}
	ds, err := scanDocs(rows)
	if err != nil {
		return nil, fl.s.readErr(err)
	}
	slices.Reverse(ds)
	return fl.s.assemble(ctx, ds, !fl.opts.NoArgs, !fl.opts.NoOutput, fl.memo)
}

// begin sets the follower at the end of the store.
func (fl *Follower) begin(ctx context.Context) error {
	if !fl.start {
		return nil
	}
	var high *int64
	if err := fl.s.r.QueryRowContext(ctx, `SELECT max(seq) FROM records`).Scan(&high); err != nil {
		return fl.s.readErr(err)
	}
	fl.start = false
	if high == nil {
		return nil
	}
	fl.high = *high
	if fl.s.d.gapsSeqs() {
		// Numbers taken by transactions still open are gaps now.
		const window = 4096
		rows, err := fl.s.r.QueryContext(ctx, `SELECT seq FROM records WHERE seq > $1`, fl.high-window)
		if err != nil {
			return fl.s.readErr(err)
		}
		defer rows.Close()
		seen := map[int64]bool{}
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				return fl.s.readErr(err)
			}
			seen[seq] = true
		}
		now := time.Now()
		for seq := max(1, fl.high-window+1); seq < fl.high; seq++ {
			if !seen[seq] {
				fl.gaps[seq] = now
			}
		}
		return rows.Err()
	}
	return nil
}

// Poll returns the records the filter selects that arrived since it, or
// Next, last looked (at most a few thousand: call it again while it
// returns some), without waiting.
func (fl *Follower) Poll(ctx context.Context) ([]record.Record, error) {
	if err := fl.begin(ctx); err != nil {
		return nil, err
	}
	return fl.poll1(ctx)
}

// Next waits until records the filter selects have arrived, and returns
// them; it returns with ctx's error when ctx ends first.
func (fl *Follower) Next(ctx context.Context) ([]record.Record, error) {
	if err := fl.begin(ctx); err != nil {
		return nil, err
	}
	for {
		recs, err := fl.poll1(ctx)
		if err != nil || len(recs) > 0 {
			return recs, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(fl.poll):
		}
	}
}

// maxGaps bounds the gaps a follower watches.
const maxGaps = 10_000

// poll1 asks once for what arrived: after the highest number seen, and
// in the gaps below it.
func (fl *Follower) poll1(ctx context.Context) ([]record.Record, error) {
	now := time.Now()
	var gaps []any
	for seq, since := range fl.gaps {
		if now.Sub(since) > gapWait {
			delete(fl.gaps, seq) // a rolled-back transaction, most likely
			continue
		}
		gaps = append(gaps, seq)
	}
	var want []any
	scan := func(cond string, extra []any, limit string) error {
		var args []any
		match := fl.f.where(fl.s, &args)
		if match == "" {
			match = "1 = 1"
		}
		cond = shift(cond, len(args))
		args = append(args, extra...)
		rows, err := fl.s.r.QueryContext(ctx, fl.s.q(`SELECT r.seq, CASE WHEN `+match+` THEN 1 ELSE 0 END FROM records r WHERE `+cond+` ORDER BY r.seq`+limit), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var selected int
			if err := rows.Scan(&seq, &selected); err != nil {
				return err
			}
			if seq <= fl.high {
				if _, gap := fl.gaps[seq]; !gap {
					continue // handed out already
				}
				delete(fl.gaps, seq)
			} else {
				for missing := fl.high + 1; missing < seq && len(fl.gaps) < maxGaps; missing++ {
					fl.gaps[missing] = now
				}
				fl.high = seq
			}
			if selected == 1 {
				want = append(want, seq)
			}
		}
		return rows.Err()
	}
	err := chunked(gaps, 500, func(part []any) error {
		return scan("r.seq IN ("+placeholders(1, len(part))+")", part, "")
	})
	if err == nil {
		err = scan("r.seq > $1", []any{fl.high}, " LIMIT 5000")
	}
	if err != nil {
		return nil, fl.s.readErr(err)
	}
	if len(want) == 0 {
		return nil, nil
	}
	slices.SortFunc(want, func(a, b any) int { return int(a.(int64) - b.(int64)) })
	if len(fl.memo) > 100_000 {
		clear(fl.memo)
	}
	var ds []*docRow
	err = chunked(want, 500, func(part []any) error {
		rows, err := fl.s.r.QueryContext(ctx, fl.s.q(`SELECT `+docColumns+` FROM record_docs d WHERE d.seq IN (`+placeholders(1, len(part))+`) ORDER BY d.seq`), part...)
		if err != nil {
			return err
		}
		part2, err := scanDocs(rows)
		ds = append(ds, part2...)
		return err
	})
	if err != nil {
		return nil, fl.s.readErr(err)
	}
	return fl.s.assemble(ctx, ds, !fl.opts.NoArgs, !fl.opts.NoOutput, fl.memo)
}

// shift renumbers the placeholders of cond ($1...) to follow n others.
func shift(cond string, n int) string {
	if n == 0 {
		return cond
	}
	return dollar.ReplaceAllStringFunc(cond, func(p string) string {
		i, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(i+n)
	})
}
