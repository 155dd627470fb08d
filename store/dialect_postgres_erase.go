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
func (postgresDialect) scrub(ctx context.Context, w *sql.DB, tables []string) ([]string, error) {
	if _, err := w.ExecContext(ctx, `VACUUM (FULL) `+strings.Join(tables, ", ")); err != nil {
		return nil, err
	}
	return []string{"VACUUM (FULL) " + strings.Join(tables, ", ") + ": tables and indexes rewritten without the deleted rows"}, nil
}
