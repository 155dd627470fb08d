package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
)

// Retention bounds what a store keeps. The zero value keeps everything.
type Retention struct {
	// MaxAge deletes records whose timestamp is older than it.
	MaxAge time.Duration
	// MaxBytes deletes the oldest records while the database takes more
	// than it, down to nine tenths of it, so that pruning does not run
	// at every write. SQLite only: PostgreSQL keeps the space of deleted
	// rows for its own reuse rather than give it back, so its size says
	// nothing of what deleting would free; bound it by age.
	MaxBytes int64
}

// PruneResult says what [Store.Prune] deleted.
type PruneResult struct {
	Records  int64 // records deleted
	Messages int64 // messages no kept record used, deleted with them
	Bytes    int64 // the store's size afterwards (see [Store.Size])
}

// ErrSizeRetention: MaxBytes asked of a PostgreSQL store.
var ErrSizeRetention = errors.New("store: retention by size (MaxBytes) is for SQLite; bound PostgreSQL by age (MaxAge)")

// pruneChunk is how many records one pruning transaction deletes, so that
// writers never wait long for it.
const pruneChunk = 2000

// Prune applies a retention now: it deletes the records it bounds out,
// oldest first, and then the messages no kept record uses. Records whose
// args build on a deleted record are rewritten to stand alone first, so
// every kept record still reads whole. A store opened with MaxAge or
// MaxBytes prunes by itself when it opens and every RetentionInterval.
func (s *Store) Prune(ctx context.Context, r Retention) (PruneResult, error) {
	var res PruneResult
	if s.opts.ReadOnly {
		return res, ErrReadOnly
	}
	if r.MaxBytes > 0 && !s.d.sizeRetention() {
		return res, ErrSizeRetention
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	if r.MaxAge > 0 {
		n, err := s.deleteBefore(ctx, time.Now().Add(-r.MaxAge).UnixMicro())
		res.Records += n
		if err != nil {
			return res, err
		}
	}
	if r.MaxBytes > 0 {
		for range 4 {
			size, err := s.Size(ctx)
			if err != nil {
				return res, err
			}
			if size <= r.MaxBytes {
				break
			}
			total, err := s.Count(ctx, Filter{})
			if err != nil || total == 0 {
				return res, err
			}
			// Delete the share of records the excess is, oldest first.
			k := int64(math.Ceil(float64(total) * float64(size-r.MaxBytes*9/10) / float64(size)))
			var cut int64
			err = s.r.QueryRowContext(ctx, s.q(`SELECT ts FROM records ORDER BY ts LIMIT 1 OFFSET $1`), min(k, total)-1).Scan(&cut)
			if err != nil {
				return res, s.readErr(err)
			}
			n, err := s.deleteBefore(ctx, cut+1)
			res.Records += n
			if err != nil {
				return res, err
			}
			m, err := s.collectMessages(ctx)
			res.Messages += m
			if err != nil {
				return res, err
			}
			if err := s.vacuum(ctx); err != nil {
				return res, err
			}
		}
	}
	m, err := s.collectMessages(ctx)
	res.Messages += m
	if err != nil {
		return res, err
	}
	if res.Records > 0 {
		if err := s.sweepAttrs(ctx); err != nil {
			return res, err
		}
		if err := s.vacuum(ctx); err != nil {
			return res, err
		}
	}
	res.Bytes, err = s.Size(ctx)
	return res, err
}

// deleteBefore deletes the records whose timestamp is before ts (µs).
func (s *Store) deleteBefore(ctx context.Context, ts int64) (int64, error) {
	var total int64
	for {
		n, err := s.deleteChunk(ctx, ts)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

func (s *Store) deleteChunk(ctx context.Context, ts int64) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.pruneErr(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, s.q(`SELECT seq, trace_id, ts FROM records WHERE ts < $1 ORDER BY ts LIMIT $2`), ts, pruneChunk)
	if err != nil {
		return 0, s.pruneErr(err)
	}
	var seqs, traces []any
	doomed := map[int64]bool{}
	seenTrace := map[string]bool{}
	var first, last int64 // the hours the chunk spans
	for rows.Next() {
		var seq, at int64
		var trace sql.NullString
		if err := rows.Scan(&seq, &trace, &at); err != nil {
			rows.Close()
			return 0, s.pruneErr(err)
		}
		if len(seqs) == 0 {
			first = at / hourMicros
		}
		last = at / hourMicros
		seqs = append(seqs, seq)
		doomed[seq] = true
		if trace.Valid && !seenTrace[trace.String] {
			seenTrace[trace.String] = true
			traces = append(traces, trace.String)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.pruneErr(err)
	}
	if len(seqs) == 0 {
		return 0, nil
	}
	if err := s.standAlone(ctx, tx, traces, doomed); err != nil {
		return 0, err
	}
	in := placeholders(1, len(seqs))
	for _, stmt := range []string{
		s.d.deleteText(in),
		`DELETE FROM record_docs WHERE seq IN (` + in + `)`,
		`DELETE FROM records WHERE seq IN (` + in + `)`,
	} {
		if _, err := tx.ExecContext(ctx, s.q(stmt), seqs...); err != nil {
			return 0, s.pruneErr(err)
		}
	}
	if err := s.rebuildRollups(ctx, tx, first, last); err != nil {
		return 0, s.pruneErr(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.pruneErr(err)
	}
	return int64(len(seqs)), nil
}

// standAlone rewrites the records that build their args on a doomed
// record, and are not doomed themselves, to list their messages whole.
// A record's base is the previous record of its trace, so they are found
// among the records of the doomed records' traces.
func (s *Store) standAlone(ctx context.Context, tx querierExec, traces []any, doomed map[int64]bool) error {
	var dependents []*docRow
	err := chunked(traces, 500, func(part []any) error {
		rows, err := tx.QueryContext(ctx, s.q(`SELECT d.seq, d.base_seq, d.base_count, d.refs FROM records r JOIN record_docs d ON d.seq = r.seq
			WHERE r.trace_id IN (`+placeholders(1, len(part))+`) AND d.base_seq IS NOT NULL`), part...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d := &docRow{}
			if err := rows.Scan(&d.seq, &d.base, &d.count, &d.refs); err != nil {
				return err
			}
			if !doomed[d.seq] && doomed[d.base.Int64] {
				dependents = append(dependents, d)
			}
		}
		return rows.Err()
	})
	if err != nil || len(dependents) == 0 {
		return s.pruneErr(err)
	}
	ch := &chains{s: s, db: tx, known: map[int64]*docRow{}, memo: idMemo{}}
	for _, d := range dependents {
		ch.known[d.seq] = d
	}
	if err := ch.fetchBases(ctx); err != nil {
		return err
	}
	for _, d := range dependents {
		ids, err := ch.ids(d.seq, 0)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE record_docs SET base_seq = NULL, base_count = 0, refs = $1 WHERE seq = $2`), appendRefs([]byte{}, 0, ids), d.seq); err != nil {
			return s.pruneErr(err)
		}
	}
	return nil
}

type querierExec interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// sweepAttrs deletes the tags and metadata of deleted records. They have
// no index by record (it would cost every write), so they are swept once
// a pass rather than deleted with each chunk.
func (s *Store) sweepAttrs(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.ExecContext(ctx, `DELETE FROM record_attrs WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.seq = record_attrs.seq)`)
	return s.pruneErr(err)
}

// collectMessages deletes the messages no kept record can use: those last
// used more than touchGrain before the oldest record kept.
func (s *Store) collectMessages(ctx context.Context) (int64, error) {
	var oldest *int64
	if err := s.r.QueryRowContext(ctx, `SELECT min(ts) FROM records`).Scan(&oldest); err != nil {
		return 0, s.pruneErr(err)
	}
	// A writer may be adding a record as of now: never beyond now.
	cut := time.Now().Unix()
	if oldest != nil {
		cut = min(cut, *oldest/1e6)
	}
	cut -= touchGrain
	var total int64
	for {
		s.wmu.Lock()
		res, err := s.w.ExecContext(ctx, s.q(`DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE last_used < $1 LIMIT $2)`), cut, pruneChunk*10)
		s.wmu.Unlock()
		if err != nil {
			return total, s.pruneErr(err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < pruneChunk*10 {
			return total, nil
		}
	}
}

// vacuum gives the space of deleted rows back, where the database can
// (SQLite's free pages, to the file system).
func (s *Store) vacuum(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.pruneErr(s.d.vacuum(ctx, s.w))
}

// Size returns the bytes the store's data takes: on SQLite, the pages in
// use (the file, less free pages); on PostgreSQL, its tables, indexes and
// TOAST.
func (s *Store) Size(ctx context.Context) (int64, error) {
	n, err := s.d.size(ctx, s.r)
	if err != nil {
		return 0, s.readErr(err)
	}
	return n, nil
}

func (s *Store) pruneErr(err error) error {
	if err == nil {
		return nil
	}
	if strings.HasPrefix(err.Error(), "store:") {
		return err
	}
	return fmt.Errorf("store: prune %s: %w", s.url, err)
}

// retainLoop applies the store's retention when it opens and every
// RetentionInterval, until Close; a failure is logged once.
func (s *Store) retainLoop() {
	r := Retention{MaxAge: s.opts.MaxAge, MaxBytes: s.opts.MaxBytes}
	t := time.NewTicker(s.opts.RetentionInterval)
	defer t.Stop()
	logged := false
	for {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		_, err := s.Prune(ctx, r)
		cancel()
		if err != nil && !logged && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
			logged = true
			s.log.LogAttrs(context.Background(), slog.LevelWarn, "llmhistory store: retention failed; it is tried again every interval (logged once)",
				slog.String("store", s.url), slog.String("error", err.Error()))
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}
