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

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	store.Register("sqlite", store.Backend{
		Dialect:   store.SQLite,
		Open:      open,
		Fault:     fault,
		SpillPath: func(u string) string { return sqlitedsn.Path(u) + ".spill.jsonl" },
	})
}

func open(ctx context.Context, url string, o store.OpenOptions) (w, r *sql.DB, err error) {
	file, params := sqlitedsn.Split(url)
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
		r, err := sql.Open("sqlite", extra(sqlitedsn.DSN(file, o.BusyTimeout, true)))
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
	w, err = openWriter(ctx, extra(sqlitedsn.DSN(file, o.BusyTimeout, false)))
	if err != nil && fault(err) == store.FaultReadOnly {
		// A file that refuses writes (made read-only, on a read-only
		// mount) is still opened: to read, and to spill what the store
		// is given. Its settings need no writing; it has them already.
		w, err = openWriter(ctx, extra("file:"+sqlitedsn.Escape(file)+fmt.Sprintf("?_busy_timeout=%d&_txlock=immediate", o.BusyTimeout)))
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
	return "file:" + sqlitedsn.Escape(file) + fmt.Sprintf("?_busy_timeout=%d&_pragma=query_only(1)&_pragma=foreign_keys(1)", busyTimeoutMS)
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
