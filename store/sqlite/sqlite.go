// Package sqlite registers the SQLite backend of package store for URLs
// "sqlite:FILE". Import it for its side effect:
//
//	import _ "github.com/llmhistory/llmhistory/store/sqlite"
//
//	s, err := store.Open(ctx, "sqlite:history.db")
//
// The driver is modernc.org/sqlite, SQLite compiled to Go: no cgo, full-text
// search (FTS5) built in. docs/store.md says why it was chosen over
// github.com/ncruces/go-sqlite3, with the figures.
//
// # The file
//
// FILE is a path, relative to the working directory or absolute
// ("sqlite:/var/lib/app/history.db"; "sqlite:///var/lib/..." also works).
// What follows a "?" goes to the driver as parameters after the store's
// own, "sqlite:history.db?_pragma=cache_size(-200000)" for instance.
// A new file is created with mode 0600: history holds prompts. The store
// opens it with write-ahead logging (WAL), so that readers never wait for
// the writer; synchronous=NORMAL, which in WAL mode loses no committed
// transaction to a process crash, only the last ones to a power cut;
// foreign keys on; and incremental auto-vacuum, so that retention gives
// deleted pages back to the file system. Several processes may write one
// file: each write waits for the file lock up to the busy timeout
// (store.Options.BusyTimeout, default 5 s), and its batch goes to the spill
// file FILE.spill.jsonl after that.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/llmhistory/llmhistory/store"
)

func init() {
	store.Register("sqlite", store.Backend{
		Dialect:   store.SQLite,
		Open:      open,
		Fault:     fault,
		SpillPath: func(u string) string { return Path(u) + ".spill.jsonl" },
	})
}

// Path returns the file a "sqlite:" URL names: what follows "sqlite:",
// less the "//" of the URL form "sqlite:///abs/path", up to a "?".
func Path(url string) string {
	p, _ := split(url)
	return p
}

// split cuts a sqlite: URL into its file and its driver parameters (what
// follows "?": "_pragma=cache_size(-200000)&_pragma=...", passed on to
// modernc.org/sqlite after the store's own).
func split(url string) (file, params string) {
	p := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	file, params, _ = strings.Cut(p, "?")
	return file, params
}

// DSN is the modernc.org/sqlite data source name for file: WAL, the busy
// timeout (ms), foreign keys, and BEGIN IMMEDIATE for transactions, so
// that a writer takes the lock when it begins rather than failing at its
// first write. readOnly opens a connection that cannot write.
func DSN(file string, busyTimeoutMS int, readOnly bool) string {
	var q []string
	if readOnly {
		q = append(q, "mode=ro", "_pragma=query_only(1)")
	} else {
		// A writer's cache holds the indexes' hot pages across batches.
		q = append(q, "_auto_vacuum=INCREMENTAL", "_pragma=journal_mode(WAL)", "_txlock=immediate", "_pragma=cache_size(-65536)")
	}
	q = append(q, fmt.Sprintf("_busy_timeout=%d", busyTimeoutMS), "_pragma=synchronous(NORMAL)", "_pragma=foreign_keys(1)")
	return "file:" + escape(file) + "?" + strings.Join(q, "&")
}

// escape makes a path safe in a file: URI.
func escape(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

func open(ctx context.Context, url string, o store.OpenOptions) (w, r *sql.DB, err error) {
	file, params := split(url)
	extra := func(dsn string) string {
		if params == "" {
			return dsn
		}
		return dsn + "&" + params
	}
	if file == "" {
		return nil, nil, errors.New("no file: want sqlite:FILE")
	}
	if o.ReadOnly {
		if _, err := os.Stat(file); err != nil {
			return nil, nil, err
		}
		r, err := sql.Open("sqlite", extra(DSN(file, o.BusyTimeout, true)))
		if err != nil {
			return nil, nil, err
		}
		if err := r.PingContext(ctx); err != nil {
			r.Close()
			return nil, nil, err
		}
		return r, r, nil
	}
	// Created here, so that it is 0600: SQLite would make it 0644, and
	// its -wal and -shm files take the mode of the database file.
	if f, err := os.OpenFile(file, os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrPermission) {
		return nil, nil, err
	}
	w, err = openWriter(ctx, extra(DSN(file, o.BusyTimeout, false)))
	if err != nil && fault(err) == store.FaultReadOnly {
		// A file that refuses writes (made read-only, on a read-only
		// mount) is still opened: to read, and to spill what the store
		// is given. Its settings need no writing; it has them already.
		w, err = openWriter(ctx, extra("file:"+escape(file)+fmt.Sprintf("?_busy_timeout=%d&_txlock=immediate", o.BusyTimeout)))
	}
	if err != nil {
		return nil, nil, err
	}
	r, err = sql.Open("sqlite", extra(readerDSN(file, o.BusyTimeout)))
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	r.SetMaxOpenConns(4)
	return w, r, nil
}

// openWriter opens the pool the store writes through: one connection, so
// that the process's writes queue in Go, not on the file lock.
func openWriter(ctx context.Context, dsn string) (*sql.DB, error) {
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// readerDSN opens the readers of a store open for writing: read-write at
// the file level (a WAL reader writes the shared-memory index) but query
// only.
func readerDSN(file string, busyTimeoutMS int) string {
	return "file:" + escape(file) + fmt.Sprintf("?_busy_timeout=%d&_pragma=query_only(1)&_pragma=foreign_keys(1)", busyTimeoutMS)
}

// fault says what a SQLite error means for a write.
func fault(err error) store.Fault {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		if errors.Is(err, os.ErrPermission) {
			return store.FaultReadOnly
		}
		return ""
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return store.FaultLocked
	case sqlite3.SQLITE_FULL:
		return store.FaultFull
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return store.FaultReadOnly
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return store.FaultDown
	case sqlite3.SQLITE_IOERR:
		return store.FaultDown
	}
	return ""
}
