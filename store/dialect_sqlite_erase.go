package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

func (d *sqliteDialect) textRows() string {
	return `SELECT count(*) FROM record_text WHERE rowid IN (`
}

// eraseMode: a writer's connections zero what they free (secure_delete,
// set for every one: internal/sqlitedsn), so a deleted record's bytes,
// and the stale copies earlier writes left of them, are gone from the
// page images the WAL and then the file get. The full-text index deletes
// by marking (contentless_delete), its words staying in its segments
// until they merge; its secure-delete option takes them out at once.
func (d *sqliteDialect) eraseMode(ctx context.Context, conn *sql.Conn, on bool) error {
	_, err := conn.ExecContext(ctx, `INSERT INTO record_text(record_text, rank) VALUES ('secure-delete', `+map[bool]string{true: "1", false: "0"}[on]+`)`)
	return err
}

// scrub: the deletion zeroed what it deleted (eraseMode); the WAL, which
// still holds page images from before it, is checkpointed into the file
// and truncated, and the free pages given back.
//
// If anyone ran ANALYZE on the file, sqlite_stat4 holds sampled index
// keys (this SQLite is built with STAT4): a user's name and tags among
// them. ANALYZE of the tables the deletion touched samples them again
// from what remains, its freed rows zeroed like the rest.
func (d *sqliteDialect) scrub(ctx context.Context, w *sql.DB, tables []string) ([]string, error) {
	conn, err := w.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	done := []string{"secure_delete: deleted rows and freed pages overwritten with zeros",
		"full-text index in secure-delete mode: deleted words taken out of its segments"}
	var analyzed bool
	if err := conn.QueryRowContext(ctx, `SELECT count(*) > 0 FROM sqlite_schema WHERE name = 'sqlite_stat1'`).Scan(&analyzed); err != nil {
		return done, err
	}
	if analyzed {
		for _, t := range tables {
			if _, err := conn.ExecContext(ctx, `ANALYZE `+t); err != nil {
				return done, err
			}
		}
		done = append(done, "ANALYZE "+strings.Join(tables, ", ")+": the planner's sampled keys taken again from what remains")
	}
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
