package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// sqliteDialect is SQLite's (store/sqlite, modernc.org/sqlite): one
// writer at a time, FTS5 for the text, record numbers kept in
// llmhistory_meta, a file whose free pages can be given back.
type sqliteDialect struct {
	cache sync.Map // query as written ($1) → as SQLite takes it
	n     atomic.Int64
}

var dollar = regexp.MustCompile(`\$([0-9]+)`)

// rewrite turns $1 into ?1, or into plain ? when the parameters come once
// each, in order: a driver may look up each numbered parameter's name in
// a list of them all, which costs the square of their number in a long
// statement. Rewritten queries are kept, up to 4,096 of them.
func (d *sqliteDialect) rewrite(query string) string {
	if v, ok := d.cache.Load(query); ok {
		return v.(string)
	}
	out := dollar.ReplaceAllString(query, "?")
	next := 1
	for _, m := range dollar.FindAllStringSubmatch(query, -1) {
		if m[1] != strconv.Itoa(next) {
			out = dollar.ReplaceAllString(query, "?$1")
			break
		}
		next++
	}
	if d.n.Add(1) <= 4096 {
		d.cache.Store(query, out)
	}
	return out
}

// tuple: "(?,?,?)": a statement built of them takes its parameters in
// order.
func (d *sqliteDialect) tuple(first, n int) string { return "(" + strings.Repeat("?,", n-1) + "?)" }

func (d *sqliteDialect) migration(m migration) []string { return m.sqlite }

func (d *sqliteDialect) metaExists() string {
	return `SELECT count(*) FROM sqlite_master WHERE name = 'llmhistory_meta'`
}

// lockMigration: a SQLite writer holds the file's lock from BEGIN
// (_txlock=immediate).
func (d *sqliteDialect) lockMigration(context.Context, *sql.Tx) error { return nil }

// migrated starts the record numbers, which SQLite keeps in the meta
// table (allocSeqs).
func (d *sqliteDialect) migrated(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO llmhistory_meta (key, value) VALUES ('next_seq', '1') ON CONFLICT (key) DO NOTHING`)
	return err
}

// allocSeqs takes n numbers from the meta table: within SQLite's one
// write transaction at a time, they are in commit order too.
func (d *sqliteDialect) allocSeqs(ctx context.Context, tx *sql.Tx, n int) ([]int64, error) {
	var first int64
	err := tx.QueryRowContext(ctx, `UPDATE llmhistory_meta SET value = CAST(value AS INTEGER) + ?1 WHERE key = 'next_seq' RETURNING CAST(value AS INTEGER) - ?1`, n).Scan(&first)
	if err != nil {
		return nil, err
	}
	seqs := make([]int64, n)
	for i := range seqs {
		seqs[i] = first + int64(i)
	}
	return seqs, nil
}

// insert: multi-row INSERTs, as many rows as SQLite's 32,766 parameters
// allow.
func (d *sqliteDialect) insert(ctx context.Context, s *Store, tx *sql.Tx, sp *insertSpec, rows [][]any, scan func(*sql.Rows) error) error {
	n := len(sp.columns)
	per := max(1, 30000/n)
	head := `INSERT INTO ` + sp.table + ` (` + sp.names() + `) VALUES `
	one := d.tuple(1, n)
	for len(rows) > 0 {
		part := rows[:min(per, len(rows))]
		rows = rows[len(part):]
		var b strings.Builder
		b.Grow(len(head) + len(part)*(len(one)+1) + len(sp.tail) + len(sp.returning) + 2)
		b.WriteString(head)
		args := make([]any, 0, n*len(part))
		for i, row := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(one)
			args = append(args, row...)
		}
		b.WriteString(sp.tail)
		if err := runInsert(ctx, tx, b.String(), sp.returning, args, scan); err != nil {
			return err
		}
	}
	return nil
}

var textInsertSQLite = &insertSpec{table: "record_text", columns: []column{{"rowid", colInt}, {"text", colText}}}

func (d *sqliteDialect) textInsert() *insertSpec { return textInsertSQLite }

func (d *sqliteDialect) greatest() string { return "max" }

// lockRollups: SQLite's writers take turns anyway.
func (d *sqliteDialect) lockRollups(context.Context, *sql.Tx) error { return nil }

func (d *sqliteDialect) valuesRow(first, n int, _ bool) string { return d.tuple(first, n) }

// retryable: a locked file past the busy timeout is a fault, not a
// deadlock to try again at once.
func (d *sqliteDialect) retryable(Fault, error) bool { return false }

// readTx: a SQLite read transaction sees one snapshot from its first
// read.
func (d *sqliteDialect) readTx() *sql.TxOptions { return &sql.TxOptions{ReadOnly: true} }

func (d *sqliteDialect) textMatch(text string, walk bool, arg func(any) string) string {
	q := ftsQuery(text)
	switch {
	case q == "":
		return ""
	case walk:
		return "EXISTS (SELECT 1 FROM record_text x WHERE x.rowid = r.seq AND record_text MATCH " + arg(q) + ")"
	}
	return "r.seq IN (SELECT rowid FROM record_text WHERE record_text MATCH " + arg(q) + ")"
}

func (d *sqliteDialect) textMatches(text string) (string, any) {
	q := ftsQuery(text)
	if q == "" {
		return "", nil
	}
	return `SELECT rowid FROM record_text WHERE record_text MATCH $1`, q
}

func (d *sqliteDialect) probeEach(query string) string { return "EXISTS (" + query + ")" }

// estimate: SQLite's planner keeps no counts of a word or a tag that
// could say it.
func (d *sqliteDialect) estimate(context.Context, *sql.DB, string, ...any) (float64, bool) {
	return 0, false
}

// textSeq: FTS5 keys a record's text by its sequence number, the rowid.
func (d *sqliteDialect) textSeq() (string, bool) { return "rowid", true }

func (d *sqliteDialect) gapsSeqs() bool { return false }

func (d *sqliteDialect) deleteText(in string) string {
	return `DELETE FROM record_text WHERE rowid IN (` + in + `)`
}

func (d *sqliteDialect) sizeRetention() bool { return true }

// vacuum gives SQLite's free pages back to the file system.
func (d *sqliteDialect) vacuum(ctx context.Context, w *sql.DB) error {
	if _, err := w.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return err
	}
	_, err := w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// size: the pages in use (the file, less its free pages).
func (d *sqliteDialect) size(ctx context.Context, r *sql.DB) (int64, error) {
	var pages, size int64
	err := r.QueryRowContext(ctx, `SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count()), (SELECT page_size FROM pragma_page_size())`).Scan(&pages, &size)
	if err != nil {
		return 0, fmt.Errorf("size: %w", err)
	}
	return pages * size, nil
}
