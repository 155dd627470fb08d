package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Errors of the store. Match them with errors.Is.
var (
	// ErrUnknownScheme: no backend is registered for the URL's scheme
	// (its package is not imported), or the string is not a store URL.
	ErrUnknownScheme = errors.New("store: no backend for scheme")
	// ErrNotFound: no record has the call ID asked for.
	ErrNotFound = errors.New("store: no such record")
	// ErrNoHistory: a store opened for reading holds no llmhistory schema.
	ErrNoHistory = errors.New("store: the database holds no llmhistory history")
	// ErrReadOnly: a write to a store opened with Options.ReadOnly.
	ErrReadOnly = errors.New("store: opened read-only")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// Options configures [OpenWith]. The zero value is the defaults.
type Options struct {
	// Logger receives what goes wrong, once per kind: a fault and where
	// its records went, a retention pass that failed. Default
	// slog.Default().
	Logger *slog.Logger
	// ReadOnly opens the store for reading only: no schema is created or
	// migrated, and writes fail with [ErrReadOnly].
	ReadOnly bool
	// SpillPath is the JSONL file records go to while the database cannot
	// take them (see [Store.AppendBatch]). Default: beside a SQLite file,
	// FILE.spill.jsonl; for PostgreSQL, llmhistory-DBNAME.spill.jsonl in
	// the working directory.
	SpillPath string
	// MaxAge deletes records older than it; 0 keeps them.
	MaxAge time.Duration
	// MaxBytes deletes the oldest records while the store takes more
	// bytes than it; 0 sets no bound.
	MaxBytes int64
	// RetentionRules give the records of a tag or a user a life of their
	// own ([RetentionRule]), applied with MaxAge and MaxBytes.
	RetentionRules []RetentionRule
	// RetentionInterval is how often MaxAge and MaxBytes are applied while
	// the store is open for writing; default 10 minutes. They are also
	// applied when it opens, and by [Store.Prune] on demand.
	RetentionInterval time.Duration
	// BusyTimeout is how long a SQLite write waits for another process's
	// lock before the batch goes to the spill file; default 5 seconds.
	BusyTimeout time.Duration
}

// Store is a history in a database: a [record.Sink] (and
// [record.BatchSink]) that writes records exactly once by call ID, and a
// reader of them. It is safe for concurrent use. Open one with [Open].
type Store struct {
	url     string // redacted, for messages
	backend Backend
	dialect Dialect
	d       dialect // where the databases differ (dialect.go)
	w, r    *sql.DB
	opts    Options
	log     *slog.Logger

	// wmu serializes this Store's writes: the trace cache assumes one
	// writer at a time, and SQLite takes one anyway.
	wmu    sync.Mutex
	traces *traceCache
	dict   *dict // the names and tagsets (names.go)

	spill *spiller

	closed  atomic.Bool
	stop    chan struct{} // closed by Close: stops retention
	bg      sync.WaitGroup
	pruneMu sync.Mutex

	written, duplicates atomic.Uint64
	walkBound           int64 // tests: the matches past which a page walks (planPage)
}

var _ record.BatchSink = (*Store)(nil)

// Open opens the store the URL names, creating or migrating its schema:
//
//	sqlite:FILE              a SQLite file (import store/sqlite)
//	postgres://USER@HOST/DB  a PostgreSQL database (import store/postgres)
//
// A store written by a newer llmhistory is refused with a [*SchemaError].
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is [Open] with options.
func OpenWith(ctx context.Context, url string, opts Options) (*Store, error) {
	_, b, err := backendFor(url)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RetentionInterval <= 0 {
		opts.RetentionInterval = 10 * time.Minute
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	shown := redactURL(url)
	if b.Redact != nil {
		shown = b.Redact(url)
	}
	w, r, err := b.Open(ctx, url, OpenOptions{ReadOnly: opts.ReadOnly, BusyTimeout: int(opts.BusyTimeout / time.Millisecond)})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", shown, err)
	}
	s := &Store{
		url: shown, backend: b, dialect: b.Dialect, d: dialectOf(b.Dialect), w: w, r: r, opts: opts,
		log:    opts.Logger,
		traces: newTraceCache(defaultCacheTraces, defaultCacheIDs),
		dict:   newDict(),
		stop:   make(chan struct{}),
	}
	if opts.MaxBytes > 0 && !s.d.sizeRetention() {
		s.closeDBs()
		return nil, ErrSizeRetention
	}
	if err := s.retention().Validate(); err != nil {
		s.closeDBs()
		return nil, err
	}
	if err := s.prepareSchema(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if err := s.settleRetention(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if !opts.ReadOnly {
		path := opts.SpillPath
		if path == "" {
			path = s.defaultSpillPath(url)
		}
		s.spill = newSpiller(s, path)
		s.spill.warnWaiting()
		if !s.retention().IsZero() {
			s.bg.Go(s.retainLoop)
		}
	}
	return s, nil
}

func (s *Store) defaultSpillPath(url string) string {
	if s.backend.SpillPath != nil {
		return s.backend.SpillPath(url)
	}
	return "llmhistory.spill.jsonl"
}

// URL is the store's URL as it may be shown: without a password.
func (s *Store) URL() string { return s.url }

// Dialect is the SQL the store's database speaks.
func (s *Store) Dialect() Dialect { return s.dialect }

// SpillPath is the file records go to while the database cannot take
// them; "" for a store opened read-only.
func (s *Store) SpillPath() string {
	if s.spill == nil {
		return ""
	}
	return s.spill.path
}

// Flush makes what the store has taken durable: records are committed as
// they are appended, so only the spill file has anything to flush.
func (s *Store) Flush() error {
	if s.spill != nil {
		return s.spill.flush()
	}
	return nil
}

// Close stops retention, flushes the spill file and closes the database.
// It is safe to call more than once.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(s.stop)
	s.bg.Wait()
	var errs []error
	if s.spill != nil {
		errs = append(errs, s.spill.close())
	}
	s.wmu.Lock() // a write in progress ends first
	errs = append(errs, s.closeDBs())
	s.wmu.Unlock()
	return errors.Join(errs...)
}

func (s *Store) closeDBs() error {
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}

// Stats counts what a store did since it was opened.
type Stats struct {
	Written    uint64 // records written to the database
	Duplicates uint64 // records not written again: their call ID was there
	Spilled    uint64 // records written to the spill file instead
	Lost       uint64 // records neither the database nor the spill file took
	// Faults counts the batches that failed, by kind.
	Faults map[Fault]uint64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	st := Stats{Written: s.written.Load(), Duplicates: s.duplicates.Load(), Faults: map[Fault]uint64{}}
	if s.spill != nil {
		s.spill.mu.Lock()
		st.Spilled, st.Lost = s.spill.spilled, s.spill.lost
		for k, v := range s.spill.faults {
			st.Faults[k] = v
		}
		s.spill.mu.Unlock()
	}
	return st
}

// q returns query, written with $1-style placeholders, as the database
// takes it.
func (s *Store) q(query string) string { return s.d.rewrite(query) }

// redactURL hides the password of a URL shaped scheme://user:pass@host.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return u
	}
	cred := rest[:at]
	if user, _, hasPass := strings.Cut(cred, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + rest[at+1:]
	}
	return u
}
