package store

import (
	"context"
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
	// Rules give the records of a tag or of a user a life of their own
	// (shorter, usually: a support feature's 30 days beside a year for
	// everything). A record some rule or MaxAge says is too old goes.
	Rules []RetentionRule
}

// RetentionRule gives the records of one tag, or of one user, a life of
// their own: they are deleted once older than MaxAge. Exactly one of Tag
// and User is set.
type RetentionRule struct {
	Tag    string
	User   string
	MaxAge time.Duration
}

// filter is the filter of the records the rule says are too old at now.
func (r RetentionRule) filter(now time.Time) Filter {
	f := Filter{Until: now.Add(-r.MaxAge), UserID: r.User}
	if r.Tag != "" {
		f.Tags = []string{r.Tag}
	}
	return f
}

// IsZero reports whether the retention keeps everything.
func (r Retention) IsZero() bool { return r.MaxAge == 0 && r.MaxBytes == 0 && len(r.Rules) == 0 }

// PruneResult says what [Store.Prune] deleted.
type PruneResult struct {
	Records  int64 // records deleted
	Messages int64 // messages no kept record used, deleted with them
	Bytes    int64 // the store's size afterwards (see [Store.Size])
	// Deleted says, by kind, what went with the records, as Delete's
	// receipt does (without its checks).
	Deleted Receipt
}

// ErrSizeRetention: MaxBytes asked of a PostgreSQL store.
var ErrSizeRetention = errors.New("store: retention by size (MaxBytes) is for SQLite; bound PostgreSQL by age (MaxAge)")

// pruneChunk is how many records one pruning transaction deletes, so that
// writers never wait long for it.
const pruneChunk = 2000

// Prune applies a retention now: it deletes the records it bounds out,
// oldest first, through the machinery of [Store.Delete] (their text,
// tags, scores, the messages and filter values no kept record uses,
// their share of the rollups), a chunk of records per transaction.
// Records whose args build on a deleted record are rewritten to stand
// alone first, so every kept record still reads whole. A store opened
// with a retention prunes by itself when it opens and every
// RetentionInterval.
func (s *Store) Prune(ctx context.Context, r Retention) (res PruneResult, err error) {
	if s.opts.ReadOnly {
		return res, ErrReadOnly
	}
	if r.MaxBytes > 0 && !s.d.sizeRetention() {
		return res, ErrSizeRetention
	}
	if err := r.Validate(); err != nil {
		return res, err
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	rc := &res.Deleted
	defer func() { res.Records, res.Messages = rc.Records, rc.Messages }()
	now := time.Now()
	if r.MaxAge > 0 {
		if err := s.deleteBefore(ctx, now.Add(-r.MaxAge).UnixMicro(), rc); err != nil {
			return res, err
		}
	}
	for _, rule := range r.Rules {
		var args []any
		where := rule.filter(now).where(s, &args)
		if err := s.deleteAll(ctx, where, args, rc); err != nil {
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
			if err := s.deleteBefore(ctx, cut+1, rc); err != nil {
				return res, err
			}
			m, err := s.collectMessages(ctx)
			rc.Messages += m
			if err != nil {
				return res, err
			}
			if err := s.vacuum(ctx); err != nil {
				return res, err
			}
		}
	}
	// Messages of records written before Delete's machinery kept exact
	// account, by their age.
	m, err := s.collectMessages(ctx)
	rc.Messages += m
	if err != nil {
		return res, err
	}
	if rc.Records > 0 {
		if err := s.vacuum(ctx); err != nil {
			return res, err
		}
	}
	res.Bytes, err = s.Size(ctx)
	return res, err
}

// deleteBefore deletes the records whose timestamp is before ts (µs).
func (s *Store) deleteBefore(ctx context.Context, ts int64, rc *Receipt) error {
	return s.deleteAll(ctx, `r.ts < $1`, []any{ts}, rc)
}

// deleteAll deletes the records r that match where, the oldest first,
// pruneChunk at a time, so that writers never wait long: through the
// machinery of Delete (delete.go).
func (s *Store) deleteAll(ctx context.Context, where string, args []any, rc *Receipt) error {
	var g erased
	for {
		n := rc.Records
		if err := s.deleteChunk(ctx, where, args, pruneChunk, rc, &g); err != nil || rc.Records-n < pruneChunk {
			return err
		}
		g = erased{}
	}
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
	r := s.retention()
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
