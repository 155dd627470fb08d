package store

import (
	"context"
	"database/sql"
	"fmt"
)

func (d *sqliteDialect) textRows() string {
	return `SELECT count(*) FROM record_text WHERE rowid IN (`
}

// eraseMode: SQLite's secure_delete overwrites with zeros the content it
// deletes, in the page and in pages it frees, so that a deleted record's
// bytes are gone from the page images the WAL and then the file get.
// It is a connection's setting: on for the deletion only, as writes
// otherwise pay for it.
func (d *sqliteDialect) eraseMode(ctx context.Context, conn *sql.Conn, on bool) error {
	v := "OFF"
	if on {
		v = "ON"
	}
	_, err := conn.ExecContext(ctx, `PRAGMA secure_delete = `+v)
	return err
}

// scrub: the full-text index deletes by marking (contentless_delete),
// leaving the words in its segments until they merge: optimize merges
// them all, under secure_delete; then the WAL, which still holds page
// images from before the deletion, is checkpointed into the file and
// truncated, and the free pages given back.
func (d *sqliteDialect) scrub(ctx context.Context, w *sql.DB, tables []string) ([]string, error) {
	conn, err := w.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := d.eraseMode(ctx, conn, true); err != nil {
		return nil, err
	}
	defer d.eraseMode(context.WithoutCancel(ctx), conn, false)
	done := []string{"secure_delete: deleted rows and freed pages overwritten with zeros"}
	if _, err := conn.ExecContext(ctx, `INSERT INTO record_text(record_text) VALUES ('optimize')`); err != nil {
		return done, fmt.Errorf("merge the full-text index: %w", err)
	}
	done = append(done, "full-text index merged (optimize): deleted words gone from its segments")
	if _, err := conn.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return done, err
	}
	var busy, frames, copied int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &copied); err != nil {
		return done, err
	}
	if busy != 0 {
		return done, fmt.Errorf("the WAL could not be checkpointed and truncated: a reader holds it (%d of %d frames copied); the deleted text stays in it until the next checkpoint", copied, frames)
	}
	return append(done, "WAL checkpointed into the file and truncated to 0 bytes"), nil
}
