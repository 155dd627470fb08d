package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Fault is what kept a batch out of the database.
type Fault string

// The faults a backend tells apart.
const (
	FaultDown     Fault = "down"      // the server cannot be reached, or is shutting down
	FaultLocked   Fault = "locked"    // another writer held the lock past the busy timeout
	FaultFull     Fault = "full"      // no room left on the disk or in the database
	FaultReadOnly Fault = "read-only" // the database or its file refuses writes
	FaultOther    Fault = "other"     // anything else: a bug, a constraint, a timeout
)

// SpillError is what [Store.AppendBatch] returns for records that did
// not reach the database: they went to the spill file instead, or, when
// that failed too, were lost. A recorder counts them as failed by its
// sink; `llmhistory import` brings spilled records back.
type SpillError struct {
	Records int    // records in the batch
	Fault   Fault  // why the database did not take them
	Path    string // the spill file
	Err     error  // the database's error (nil while a fault still holds records back)
	Lost    error  // set when the spill file failed too: the records are lost
}

func (e *SpillError) Error() string {
	what := fmt.Sprintf("store: the database is %s: %d %s written to %s", e.Fault, e.Records, plural(e.Records, "record", "records"), e.Path)
	if e.Fault == FaultOther {
		what = fmt.Sprintf("store: a write failed: %d %s written to %s", e.Records, plural(e.Records, "record", "records"), e.Path)
	}
	if e.Lost != nil {
		what = fmt.Sprintf("store: the database is %s and the spill file %s failed (%v): %d %s lost", e.Fault, e.Path, e.Lost, e.Records, plural(e.Records, "record", "records"))
	}
	if e.Err != nil {
		what += ": " + e.Err.Error()
	}
	return what
}

func (e *SpillError) Unwrap() []error {
	var errs []error
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if e.Lost != nil {
		errs = append(errs, e.Lost)
	}
	return errs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Append writes r; see [Store.AppendBatch].
func (s *Store) Append(ctx context.Context, r record.Record) error {
	return s.AppendBatch(ctx, []record.Record{r})
}

// writeTimeout bounds one batch's write, so that a database that hangs
// rather than fails sends its records to the spill file too.
const writeTimeout = 10 * time.Second

// AppendBatch writes records as [Store.Write] does, and never loses one
// in silence: when the database cannot take them (it is down, locked,
// full or read-only, or the write fails otherwise) they go to the spill
// file, a [*SpillError] says so, and the fault is logged once per kind.
// After a fault the store sends batches straight to the spill file for a
// while (a second, doubling up to 30), so that a database that is down
// costs the writer nothing, then tries it again. `llmhistory import
// SPILL --into URL` brings spilled records back, skipping those the
// database got after all.
func (s *Store) AppendBatch(ctx context.Context, rs []record.Record) error {
	if len(rs) == 0 {
		return nil
	}
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if s.closed.Load() {
		return ErrClosed
	}
	if fault, holding := s.spill.holding(); holding {
		return s.spill.take(rs, fault, nil)
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if _, err := s.Write(ctx, rs); err != nil {
		return s.spill.take(rs, s.fault(err), err)
	}
	s.spill.recovered()
	return nil
}

// fault classifies a write error.
func (s *Store) fault(err error) Fault {
	if errors.Is(err, context.DeadlineExceeded) {
		return FaultDown
	}
	if s.backend.Fault != nil {
		if f := s.backend.Fault(err); f != "" {
			return f
		}
	}
	return FaultOther
}

// spiller holds records the database could not take.
type spiller struct {
	s    *Store
	path string

	mu      sync.Mutex
	file    *record.JSONL // opened at the first spill
	until   time.Time     // batches go straight here until then
	fault   Fault         // the fault that set until
	backoff time.Duration
	logged  map[Fault]bool
	spilled uint64
	lost    uint64
	faults  map[Fault]uint64
}

const (
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
)

func newSpiller(s *Store, path string) *spiller {
	return &spiller{s: s, path: path, logged: map[Fault]bool{}, faults: map[Fault]uint64{}}
}

// holding reports whether batches go straight to the spill file now.
func (sp *spiller) holding() (Fault, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.fault, !sp.until.IsZero() && time.Now().Before(sp.until)
}

// recovered notes a batch written: the backoff starts afresh, and the next
// fault is logged again.
func (sp *spiller) recovered() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.until.IsZero() {
		return
	}
	sp.until, sp.backoff = time.Time{}, 0
	sp.s.log.LogAttrs(context.Background(), slog.LevelInfo, "llmhistory store: the database takes records again",
		slog.String("store", sp.s.url), slog.Uint64("spilled", sp.spilled),
		slog.String("import", fmt.Sprintf("llmhistory import %s --into %s", sp.path, sp.s.url)))
	clear(sp.logged)
}

// take writes rs to the spill file and returns the error that says so.
// err is the database's error, nil when the batch was held back.
func (sp *spiller) take(rs []record.Record, fault Fault, err error) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err != nil {
		sp.faults[fault]++
		sp.backoff = min(max(2*sp.backoff, firstBackoff), maxBackoff)
		sp.until = time.Now().Add(sp.backoff)
		sp.fault = fault
	}
	serr := &SpillError{Records: len(rs), Fault: fault, Path: sp.path, Err: err}
	if lost := sp.write(rs); lost != nil {
		serr.Lost = lost
		sp.lost += uint64(len(rs))
	} else {
		sp.spilled += uint64(len(rs))
	}
	if !sp.logged[fault] && (err != nil || serr.Lost != nil) {
		sp.logged[fault] = true
		attrs := []slog.Attr{slog.String("store", sp.s.url), slog.String("fault", string(fault)), slog.String("spill", sp.path)}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		msg := "llmhistory store: the database is " + string(fault) + "; records go to the spill file until it takes them again (logged once)"
		if fault == FaultOther {
			msg = "llmhistory store: a write failed; its records went to the spill file (logged once)"
		}
		if serr.Lost != nil {
			msg = "llmhistory store: the database is " + string(fault) + " and the spill file failed: records are lost (logged once)"
			attrs = append(attrs, slog.String("spill_error", serr.Lost.Error()))
		} else {
			attrs = append(attrs, slog.String("import", fmt.Sprintf("llmhistory import %s --into %s", sp.path, sp.s.url)))
		}
		sp.s.log.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
	}
	return serr
}

// write appends rs to the spill file and flushes it, so that what was
// spilled is on disk when take returns.
func (sp *spiller) write(rs []record.Record) error {
	if sp.file == nil {
		f, err := record.OpenJSONLWith(sp.path, record.JSONLOptions{FlushInterval: -1})
		if err != nil {
			return err
		}
		sp.file = f
	}
	for _, r := range rs {
		if err := sp.file.Append(context.Background(), r); err != nil {
			return err
		}
	}
	return sp.file.Flush()
}

func (sp *spiller) flush() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.file == nil {
		return nil
	}
	return sp.file.Flush()
}

func (sp *spiller) close() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.file == nil {
		return nil
	}
	err := sp.file.Close()
	sp.file = nil
	return err
}

// warnWaiting says so when the spill file holds records from before.
func (sp *spiller) warnWaiting() {
	st, err := os.Stat(sp.path)
	if err != nil || st.Size() == 0 {
		return
	}
	sp.s.log.LogAttrs(context.Background(), slog.LevelWarn, "llmhistory store: the spill file holds records the database did not take; import them",
		slog.String("store", sp.s.url), slog.String("spill", sp.path), slog.Int64("bytes", st.Size()),
		slog.String("import", fmt.Sprintf("llmhistory import %s --into %s", sp.path, sp.s.url)))
}
