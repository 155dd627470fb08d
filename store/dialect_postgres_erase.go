package store

import (
	"context"
	"database/sql"
	"strings"
)

func (postgresDialect) textRows() string {
	return `SELECT count(*) FROM record_text WHERE seq IN (`
}

func (postgresDialect) eraseMode(context.Context, *sql.Conn, bool) error { return nil }

// scrub: a deleted row stays in its page as a dead tuple until VACUUM
// reclaims it, and even then its bytes are not overwritten, and the GIN
// index keeps the words it held as keys: VACUUM FULL writes each table
// and its indexes anew, without them, and unlinks the old files. It holds
// each table's ACCESS EXCLUSIVE lock while it does (docs/privacy.md).
// The server's WAL (pg_wal), its archive and its replicas' copies keep
// the deleted rows until their segments are recycled: that is the
// server's, not the store's, to clear.
//
// The planner's statistics hold values too: ANALYZE (autovacuum's or
// anyone's) samples each column's most common values and histogram
// bounds into pg_statistic, a user's name and tags among them. ANALYZE
// of the same tables replaces them with what remains; the rows it
// replaced stay dead in pg_statistic's pages until VACUUM FULL rewrites
// it, which only the database's owner may do.
func (postgresDialect) scrub(ctx context.Context, w *sql.DB, tables []string) ([]string, error) {
	list := strings.Join(tables, ", ")
	if _, err := w.ExecContext(ctx, `VACUUM (FULL, ANALYZE) `+list); err != nil {
		return nil, err
	}
	done := []string{"VACUUM (FULL, ANALYZE) " + list + ": tables and indexes rewritten without the deleted rows, their statistics sampled again from what remains"}
	var owner bool
	if err := w.QueryRowContext(ctx, `SELECT pg_has_role(current_user, d.datdba, 'MEMBER') FROM pg_database d WHERE d.datname = current_database()`).Scan(&owner); err != nil {
		return done, err
	}
	if !owner {
		return append(done, "pg_statistic not rewritten: only the database's owner may; the statistics ANALYZE replaced stay in its dead rows until autovacuum reuses their space"), nil
	}
	if _, err := w.ExecContext(ctx, `VACUUM (FULL) pg_statistic`); err != nil {
		return done, err
	}
	return append(done, "VACUUM (FULL) pg_statistic: the replaced statistics' rows rewritten away"), nil
}
