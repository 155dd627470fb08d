package store

import (
	"context"
	"database/sql"
	"strconv"
)

// dialect is what differs between the databases the store speaks to, in
// one place: a SQLite implementation (dialect_sqlite.go) and a PostgreSQL
// one (dialect_postgres.go). The rest of the store writes its SQL once,
// with $1-style parameters, and asks the dialect where the two differ.
type dialect interface {
	// rewrite returns a query written with $1-style parameters as the
	// database takes it.
	rewrite(query string) string
	// tuple is a row of n parameters from the first-th, as the database
	// takes them in a statement that needs no rewriting.
	tuple(first, n int) string

	// migration returns a migration's statements for this database.
	migration(m migration) []string
	// metaExists is a query of one count: whether llmhistory_meta exists.
	metaExists() string
	// lockMigration makes tx the only migrator until it ends.
	lockMigration(ctx context.Context, tx *sql.Tx) error
	// migrated adds what a new schema needs beside its version.
	migrated(ctx context.Context, tx *sql.Tx) error

	// allocSeqs returns n new record sequence numbers, ascending.
	allocSeqs(ctx context.Context, tx *sql.Tx, n int) ([]int64, error)
	// insert inserts rows as the database takes them fastest (insert.go).
	insert(ctx context.Context, s *Store, tx *sql.Tx, sp *insertSpec, rows [][]any, scan func(*sql.Rows) error) error
	// textInsert is how a record's text goes into the full-text index.
	textInsert() *insertSpec
	// greatest is the SQL function of the greater of two values.
	greatest() string
	// lockRollups makes tx the only writer of the rollups until it ends.
	lockRollups(ctx context.Context, tx *sql.Tx) error
	// valuesRow is a row of a VALUES list of n integers (first: the
	// list's first row, whose types the database takes for the list's).
	valuesRow(first, n int, firstRow bool) string
	// retryable reports whether a write that failed with err, of the
	// given fault, is worth doing again at once.
	retryable(fault Fault, err error) bool

	// readTx is how an aggregate reads in one snapshot.
	readTx() *sql.TxOptions
	// textMatch is the condition that record r's text holds every word of
	// text (whole words, any case), arg making its parameters; walk: as
	// tested on each record a newest-first walk meets, rather than
	// gathered. "" when text has no word.
	textMatch(text string, walk bool, arg func(any) string) string
	// textMatches is a query of the records (one column, seq) whose text
	// holds every word of text, $1 its one parameter, and that
	// parameter; "" when text has no word.
	textMatches(text string) (query string, param any)
	// estimate returns how many rows the database's planner expects
	// query to return, from its statistics, without running it; ok is
	// false when the database keeps none.
	estimate(ctx context.Context, r *sql.DB, query string, args ...any) (rows float64, ok bool)
	// probeEach makes a condition of a query run for each record a walk
	// meets.
	probeEach(query string) string
	// textSeq is the column of textMatches' query that holds a record's
	// sequence number; ok when the full-text index hands out its matches
	// in that order.
	textSeq() (col string, ok bool)
	// gapsSeqs reports whether writers commit record numbers out of
	// order, so that a follower watches the gaps (follow.go).
	gapsSeqs() bool

	// deleteText deletes the text of the records seq IN (in).
	deleteText(in string) string
	// textRows is a query of one count, the full-text rows of the
	// records seq IN (, to be closed with ")".
	textRows() string
	// eraseMode makes conn overwrite what it deletes (on), or not (off).
	eraseMode(ctx context.Context, conn *sql.Conn, on bool) error
	// scrub makes what deletions in tables freed unreadable in the
	// database's files, and says what it did (delete.go).
	scrub(ctx context.Context, w *sql.DB, tables []string) ([]string, error)
	// sizeRetention reports whether a store's size says what deleting
	// frees (Retention.MaxBytes).
	sizeRetention() bool
	// vacuum gives the space of deleted rows back, where it can.
	vacuum(ctx context.Context, w *sql.DB) error
	// size returns the bytes the store's data takes.
	size(ctx context.Context, r *sql.DB) (int64, error)
}

// dialectOf is the implementation of a Dialect.
func dialectOf(d Dialect) dialect {
	if d == PostgreSQL {
		return postgresDialect{}
	}
	return &sqliteDialect{}
}

// eachRow runs query and calls fn once each row is scanned into dest; the
// rows are closed whatever happens, and their error is returned (as pgx's
// ForEachRow).
func eachRow(ctx context.Context, db querier, query string, args []any, dest []any, fn func() error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachRowIn is eachRow of head + a list of the values in + tail, for
// each part of up to 500 of them: head ends with "IN (", tail begins
// with ")".
func (s *Store) eachRowIn(ctx context.Context, db querier, head string, in []any, tail string, dest []any, fn func() error) error {
	return chunked(in, 500, func(part []any) error {
		return eachRow(ctx, db, s.q(head+placeholders(1, len(part))+tail), part, dest, fn)
	})
}

// before is the condition that record r comes after c in newest-first
// order (is older, or as old and taken before), its parameters appended
// to args. atOrNewer is the converse, c included; newer, c excluded.
func (c cursor) before(args *[]any) string { return c.cond(args, "<", "<") }

func (c cursor) atOrNewer(args *[]any) string { return c.cond(args, ">", ">=") }

func (c cursor) newer(args *[]any) string { return c.cond(args, ">", ">") }

func (c cursor) cond(args *[]any, ts, seq string) string {
	t, q := "$"+strconv.Itoa(len(*args)+1), "$"+strconv.Itoa(len(*args)+2)
	*args = append(*args, c.ts, c.seq)
	return "(r.ts " + ts + " " + t + " OR (r.ts = " + t + " AND r.seq " + seq + " " + q + "))"
}
