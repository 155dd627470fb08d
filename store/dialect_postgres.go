package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// postgresDialect is PostgreSQL's (store/postgres, pgx): many writers at
// once (replicas), taking turns where they must through advisory locks;
// a stripped tsvector with a GIN index for the text; record numbers from
// a sequence, which writers commit out of order.
type postgresDialect struct{}

// Advisory locks: one migrator at a time; one writer of the rollups at a
// time.
const (
	migrationLock = 7301150529
	rollupLock    = 7301150530
)

func (postgresDialect) rewrite(query string) string { return query }

func (postgresDialect) tuple(first, n int) string { return tuple(first, n) }

func (postgresDialect) migration(m migration) []string { return m.postgres }

func (postgresDialect) metaExists() string {
	return `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'llmhistory_meta'`
}

func (postgresDialect) lockMigration(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(migrationLock)+`)`)
	return err
}

func (postgresDialect) migrated(context.Context, *sql.Tx) error { return nil }

// allocSeqs takes n numbers from the sequence records_seq: ascending,
// but not in commit order across replicas, which Follow allows for.
func (postgresDialect) allocSeqs(ctx context.Context, tx *sql.Tx, n int) ([]int64, error) {
	seqs := make([]int64, 0, n)
	var v int64
	err := eachRow(ctx, tx, `SELECT nextval('records_seq') FROM generate_series(1, $1)`, []any{n}, []any{&v}, func() error {
		seqs = append(seqs, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(seqs) != n {
		return nil, fmt.Errorf("store: asked for %d sequence numbers, got %d", n, len(seqs))
	}
	slices.Sort(seqs)
	return seqs, nil
}

// insert: one INSERT of column arrays (unnest), whose text does not change
// with the number of rows, so that it is parsed and planned once per
// connection, and whose parameters pgx encodes as a few arrays rather
// than a value each.
func (postgresDialect) insert(ctx context.Context, s *Store, tx *sql.Tx, sp *insertSpec, rows [][]any, scan func(*sql.Rows) error) error {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + sp.table + ` (` + sp.names() + `) SELECT `)
	if sp.pgSelect != "" {
		b.WriteString(sp.pgSelect)
	} else {
		b.WriteString("*")
	}
	b.WriteString(` FROM unnest(`)
	args := make([]any, len(sp.columns))
	for i, c := range sp.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i+1))
		var err error
		switch c.typ {
		case colInt:
			b.WriteString("::bigint[]")
			args[i], err = intColumn(rows, i)
		case colText:
			b.WriteString("::text[]")
			args[i], err = textColumn(rows, i)
		case colBytes:
			b.WriteString("::bytea[]")
			args[i], err = bytesColumn(rows, i)
		case colFloat:
			b.WriteString("::float8[]")
			args[i], err = floatColumn(rows, i)
		}
		if err != nil {
			return fmt.Errorf("store: %s.%s: %w", sp.table, c.name, err)
		}
	}
	b.WriteString(`) AS x (` + sp.names() + `)`)
	b.WriteString(sp.tail)
	return runInsert(ctx, tx, b.String(), sp.returning, args, scan)
}

// The text, made a stripped tsvector by the server.
var textInsertPostgres = &insertSpec{table: "record_text", columns: []column{{"seq", colInt}, {"tsv", colText}},
	pgSelect: `x.seq, strip(to_tsvector('simple', x.tsv))`}

func (postgresDialect) textInsert() *insertSpec { return textInsertPostgres }

func (postgresDialect) greatest() string { return "greatest" }

func (postgresDialect) lockRollups(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(rollupLock)+`)`)
	return err
}

// valuesRow types the list's first row: PostgreSQL takes parameters of a
// VALUES list for text otherwise.
func (postgresDialect) valuesRow(first, n int, firstRow bool) string {
	row := tuple(first, n)
	if firstRow {
		row = strings.ReplaceAll(row, ",", "::bigint,")
		row = strings.Replace(row, ")", "::bigint)", 1)
	}
	return row
}

// retryable: deadlocked with another writer (PostgreSQL chose this one to
// fail): what the other wrote is held now, and skipped.
func (postgresDialect) retryable(f Fault, err error) bool { return f == FaultLocked && ctxAlive(err) }

func (postgresDialect) readTx() *sql.TxOptions {
	return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
}

func (d postgresDialect) textMatch(text string, walk bool, arg func(any) string) string {
	q := strings.Join(words(text), " ")
	switch {
	case q == "":
		return ""
	case walk:
		return d.probeEach("SELECT 1 FROM record_text x WHERE x.seq = r.seq AND x.tsv @@ plainto_tsquery('simple', " + arg(q) + ")")
	}
	return "r.seq IN (SELECT seq FROM record_text WHERE tsv @@ plainto_tsquery('simple', " + arg(q) + "))"
}

func (postgresDialect) textMatches(text string) (string, any) {
	q := strings.Join(words(text), " ")
	if q == "" {
		return "", nil
	}
	return `SELECT seq FROM record_text WHERE tsv @@ plainto_tsquery('simple', $1)`, q
}

// estimate: the rows of the plan's top node, as EXPLAIN gives them. For
// a word, PostgreSQL's statistics of a tsvector column keep its most
// common words and their frequencies (a word not among them is estimated
// rare); for a tag, the most common values of each column, the two
// multiplied, which underestimates a tag but never overestimates one.
// Any error says only that there is no estimate.
func (postgresDialect) estimate(ctx context.Context, r *sql.DB, query string, args ...any) (float64, bool) {
	var plan []byte
	if err := r.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+query, args...).Scan(&plan); err != nil {
		return 0, false
	}
	var out []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	if err := json.Unmarshal(plan, &out); err != nil || len(out) != 1 {
		return 0, false
	}
	return out[0].Plan.Rows, true
}

// probeEach: a subquery with LIMIT, which PostgreSQL's planner does not
// fold into a join that gathers every match.
func (postgresDialect) probeEach(query string) string { return "(" + query + " LIMIT 1) IS NOT NULL" }

// textSeq: a GIN index has no order.
func (postgresDialect) textSeq() (string, bool) { return "seq", false }

func (postgresDialect) gapsSeqs() bool { return true }

func (postgresDialect) deleteText(in string) string {
	return `DELETE FROM record_text WHERE seq IN (` + in + `)`
}

// sizeRetention: PostgreSQL keeps the space of deleted rows for reuse
// rather than give it back, so its size says nothing of what deleting
// frees.
func (postgresDialect) sizeRetention() bool { return false }

func (postgresDialect) vacuum(context.Context, *sql.DB) error { return nil }

// size: the store's tables, their indexes and TOAST.
func (postgresDialect) size(ctx context.Context, r *sql.DB) (int64, error) {
	var n int64
	err := r.QueryRowContext(ctx, `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname IN ('records', 'record_docs', 'messages', 'record_attrs', 'record_text', 'llmhistory_meta', 'names', 'rollups')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("size: %w", err)
	}
	return n, nil
}
