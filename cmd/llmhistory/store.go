package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/postgres" // postgres:// URLs
	_ "github.com/llmhistory/llmhistory/store/sqlite"   // sqlite: URLs
)

// isStoreURL reports whether an argument names a store rather than a
// file: sqlite:FILE, postgres://... or postgresql://...
func isStoreURL(s string) bool { return store.IsURL(s) }

// openStoreTimeout bounds how long opening a store may take (a
// PostgreSQL server that does not answer).
const openStoreTimeout = 30 * time.Second

// openStoreReader opens a store for reading. A store an older llmhistory
// wrote is migrated first, once (opened for writing, then closed): the
// commands that read a store (view, query, report, tail, export) would
// otherwise refuse it until something wrote to it.
func openStoreReader(ctx context.Context, url string) (*store.Store, error) {
	opts := store.Options{ReadOnly: true, Logger: slog.New(slog.DiscardHandler)}
	openCtx, cancel := context.WithTimeout(ctx, openStoreTimeout)
	defer cancel()
	s, err := store.OpenWith(openCtx, url, opts)
	var se *store.SchemaError
	if !errors.As(err, &se) || !se.ReadOnly {
		return s, err
	}
	// A migration reads every record once: not bounded by the open's
	// timeout.
	w, err := store.OpenWith(ctx, url, store.Options{Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	openCtx, cancel = context.WithTimeout(ctx, openStoreTimeout)
	defer cancel()
	return store.OpenWith(openCtx, url, opts)
}

// storeJSONL reads a store's records as JSON Lines, in the order the store
// took them, without their args (a report reads none): report.Build reads
// a store as it reads a file, provenance and progress included.
func storeJSONL(ctx context.Context, s *store.Store) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		var buf []byte
		for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{NoArgs: true, NoOutput: true}) {
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			buf = append(r.AppendJSON(buf[:0]), '\n')
			if _, err := pw.Write(buf); err != nil {
				return // the reader stopped
			}
		}
		pw.Close()
	}()
	return pr
}

// storeTailer is what a tailer needs of a store it reads: every record
// first, then those that arrive.
type storeTailer struct {
	s  *store.Store
	fl *store.Follower
}

func (t *tailer) openStore() error {
	s, err := openStoreReader(context.Background(), t.path)
	if err != nil {
		return err
	}
	// tail starts at the newest records; export sends them all.
	t.st = &storeTailer{s: s, fl: s.Follow(store.Filter{}, store.FollowOptions{Poll: t.poll, FromStart: t.cmd != "tail"})}
	t.path = s.URL() // no password in messages
	return nil
}

// consumeStore hands every record that arrived since it last looked to
// emit, until there are none or ctx ends.
func (t *tailer) consumeStore(ctx context.Context, emit func(record.Record)) error {
	for ctx.Err() == nil {
		recs, err := t.st.fl.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(recs) == 0 {
			return nil
		}
		for _, r := range recs {
			t.records++
			emit(r)
		}
	}
	return nil
}

// printLastStore prints the store's newest n records, and leaves the
// follower after them.
func (t *tailer) printLastStore(ctx context.Context, n int) error {
	recs, err := t.st.fl.Last(ctx, n)
	if err != nil {
		return err
	}
	for _, r := range recs {
		t.records++
		t.con.print(r)
	}
	return nil
}
