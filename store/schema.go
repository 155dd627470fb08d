package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion is the version of the schema this package writes. A
// store is migrated up to it when opened for writing; a store of a newer
// version is refused.
const SchemaVersion = 4

// SchemaError is returned by [Open] for a store whose schema this version
// cannot use: one written by a newer llmhistory, or, opened read-only, one
// that needs a migration first.
type SchemaError struct {
	Found, Known int
	ReadOnly     bool // the store is older and could not be migrated: opened read-only
}

func (e *SchemaError) Error() string {
	if e.Found > e.Known {
		return fmt.Sprintf("store: schema version %d was written by a newer llmhistory; this one knows versions up to %d: upgrade llmhistory to read it", e.Found, e.Known)
	}
	return fmt.Sprintf("store: schema version %d is older than this llmhistory's %d and needs a migration: open it once for writing", e.Found, e.Known)
}

// A migration takes a schema from version-1 to version. Released
// migrations are never edited (TestMigrationsAreAppendOnly pins them):
// a change to the schema is a new migration at the end.
type migration struct {
	version          int
	sqlite, postgres []string
	// then, when not nil, moves the data into the new shape, in the
	// migration's transaction, after its statements.
	then func(ctx context.Context, s *Store, tx *sql.Tx) error
}

// migrations, in order. The first creates the schema; every released
// version has its step up.
var migrations = []migration{
	{
		version: 1,
		sqlite: []string{
			// Messages (elements of args) once each, addressed by content.
			// last_used is the newest timestamp (Unix seconds, less up to
			// touchGrain) of a record that uses the message: retention
			// deletes the messages no kept record can use.
			`CREATE TABLE messages (
				id INTEGER PRIMARY KEY,
				hash BLOB NOT NULL UNIQUE,
				last_used INTEGER NOT NULL,
				body TEXT NOT NULL
			)`,
			`CREATE INDEX messages_last_used ON messages(last_used)`,
			// The columns queries filter, group and order on; narrow, so
			// that an aggregate reads little.
			`CREATE TABLE records (
				seq INTEGER PRIMARY KEY,
				call_id TEXT NOT NULL UNIQUE,
				ts INTEGER NOT NULL,
				trace_id TEXT,
				user_id TEXT,
				method TEXT NOT NULL,
				provider TEXT NOT NULL,
				model TEXT,
				status TEXT NOT NULL,
				error_type TEXT,
				duration_ms REAL,
				cost_usd REAL,
				input_tokens INTEGER NOT NULL,
				output_tokens INTEGER NOT NULL,
				total_tokens INTEGER NOT NULL
			)`,
			// Each index costs every write: these serve the filters that
			// select few records (a trace, a user, an error type); a
			// model or a provider selects many, found soon enough newest
			// first by time.
			`CREATE INDEX records_ts ON records(ts)`,
			`CREATE INDEX records_trace ON records(trace_id, ts) WHERE trace_id IS NOT NULL`,
			`CREATE INDEX records_user ON records(user_id, ts) WHERE user_id IS NOT NULL`,
			`CREATE INDEX records_error ON records(error_type, ts) WHERE error_type IS NOT NULL`,
			// The record itself: its JSON without args (doc), and args as
			// message references: the first base_count of record base_seq,
			// then refs (see refs.go). SQLite writers take turns, so no
			// foreign key (and the index it would need) guards base_seq
			// here: the writer checks its base in its transaction, and
			// retention rewrites a record before deleting its base.
			`CREATE TABLE record_docs (
				seq INTEGER PRIMARY KEY,
				base_seq INTEGER,
				base_count INTEGER NOT NULL,
				refs BLOB NOT NULL,
				doc BLOB NOT NULL
			)`,
			// Tags (name '#') and metadata (name 'm:' and the key).
			`CREATE TABLE record_attrs (
				name TEXT NOT NULL,
				value TEXT NOT NULL,
				seq INTEGER NOT NULL,
				PRIMARY KEY (name, value, seq)
			) WITHOUT ROWID`,
			// The text a record brought into its trace, and its output:
			// an index only (contentless), by seq.
			`CREATE VIRTUAL TABLE record_text USING fts5(text, content='', contentless_delete=1, detail=none, tokenize='unicode61 remove_diacritics 0')`,
			// Hourly figures, for aggregates that need not read every
			// record (rollup.go).
			`CREATE TABLE rollups (
				hour INTEGER NOT NULL,
				model TEXT NOT NULL,
				provider TEXT NOT NULL,
				method TEXT NOT NULL,
				error_type TEXT NOT NULL,
				status TEXT NOT NULL,
				calls INTEGER NOT NULL,
				errors INTEGER NOT NULL,
				input_tokens INTEGER NOT NULL,
				output_tokens INTEGER NOT NULL,
				total_tokens INTEGER NOT NULL,
				cost_usd REAL NOT NULL,
				latency BLOB NOT NULL,
				PRIMARY KEY (hour, model, provider, method, error_type, status)
			) WITHOUT ROWID`,
		},
		postgres: []string{
			`CREATE TABLE messages (
				id BIGSERIAL PRIMARY KEY,
				hash BYTEA NOT NULL UNIQUE,
				last_used BIGINT NOT NULL,
				body TEXT NOT NULL
			)`,
			`CREATE INDEX messages_last_used ON messages(last_used)`,
			`CREATE SEQUENCE records_seq`,
			`CREATE TABLE records (
				seq BIGINT PRIMARY KEY,
				call_id TEXT NOT NULL UNIQUE,
				ts BIGINT NOT NULL,
				trace_id TEXT,
				user_id TEXT,
				method TEXT NOT NULL,
				provider TEXT NOT NULL,
				model TEXT,
				status TEXT NOT NULL,
				error_type TEXT,
				duration_ms DOUBLE PRECISION,
				cost_usd DOUBLE PRECISION,
				input_tokens BIGINT NOT NULL,
				output_tokens BIGINT NOT NULL,
				total_tokens BIGINT NOT NULL
			)`,
			`CREATE INDEX records_ts ON records(ts, seq)`,
			`CREATE INDEX records_trace ON records(trace_id, ts, seq) WHERE trace_id IS NOT NULL`,
			`CREATE INDEX records_user ON records(user_id, ts, seq) WHERE user_id IS NOT NULL`,
			`CREATE INDEX records_error ON records(error_type, ts, seq) WHERE error_type IS NOT NULL`,
			`CREATE TABLE record_docs (
				seq BIGINT PRIMARY KEY,
				base_seq BIGINT REFERENCES record_docs(seq),
				base_count INTEGER NOT NULL,
				refs BYTEA NOT NULL,
				doc BYTEA NOT NULL
			)`,
			// Replicas write at once: a foreign key keeps a record's base
			// from being deleted under it (retention rewrites it first).
			`CREATE INDEX record_docs_base ON record_docs(base_seq) WHERE base_seq IS NOT NULL`,
			`CREATE TABLE record_attrs (
				name TEXT NOT NULL,
				value TEXT NOT NULL,
				seq BIGINT NOT NULL,
				PRIMARY KEY (name, value, seq)
			)`,
			// Positions stripped: words are matched, not phrases, as the
			// SQLite index (detail=none) does. No pending list
			// (fastupdate): it holds entries uncompressed until a vacuum,
			// doubling the index (a 1,000-turn conversation: 4.1 MB
			// stored, 3.0 MB without).
			`CREATE TABLE record_text (
				seq BIGINT PRIMARY KEY,
				tsv TSVECTOR NOT NULL
			)`,
			`CREATE INDEX record_text_tsv ON record_text USING GIN (tsv) WITH (fastupdate = off)`,
		},
	},
	scoresMigration, // score_store.go (version 2)
	{
		// Names (names.go), tagsets among them, and rollups on both backends, per
		// hour, day and month, by user and by tag too (rollup.go).
		version: 3,
		sqlite: []string{
			`DROP TABLE rollups`,
			`CREATE TABLE names (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				kind INTEGER NOT NULL,
				name TEXT NOT NULL,
				UNIQUE (kind, name)
			)`,
			`ALTER TABLE records ADD COLUMN tagset INTEGER`,
			`CREATE TABLE rollups (
				cube INTEGER NOT NULL,
				span INTEGER NOT NULL,
				bucket INTEGER NOT NULL,
				user_id INTEGER NOT NULL,
				tagset INTEGER NOT NULL,
				model INTEGER NOT NULL,
				provider INTEGER NOT NULL,
				method INTEGER NOT NULL,
				status INTEGER NOT NULL,
				error_type INTEGER NOT NULL,
				calls INTEGER NOT NULL,
				errors INTEGER NOT NULL,
				input_tokens INTEGER NOT NULL,
				output_tokens INTEGER NOT NULL,
				total_tokens INTEGER NOT NULL,
				cost_usd REAL NOT NULL,
				unpriced INTEGER NOT NULL,
				unpriced_tokens INTEGER NOT NULL,
				latency BLOB NOT NULL,
				PRIMARY KEY (cube, span, bucket, user_id, tagset, model, provider, method, status, error_type)
			) WITHOUT ROWID`,
			// A user's rows, for an aggregate of one user's calls: without
			// it, every user's rows of the time covered are read.
			`CREATE INDEX rollups_user ON rollups(user_id, span, bucket) WHERE cube = 1`,
		},
		postgres: []string{
			`CREATE TABLE names (
				id SERIAL PRIMARY KEY,
				kind SMALLINT NOT NULL,
				name TEXT NOT NULL,
				UNIQUE (kind, name)
			)`,
			`ALTER TABLE records ADD COLUMN tagset INTEGER`,
			`ALTER INDEX record_text_tsv SET (fastupdate = on, gin_pending_list_limit = 64)`,
			`CREATE TABLE rollups (
				cube SMALLINT NOT NULL,
				span SMALLINT NOT NULL,
				bucket INTEGER NOT NULL,
				user_id INTEGER NOT NULL,
				tagset INTEGER NOT NULL,
				model INTEGER NOT NULL,
				provider INTEGER NOT NULL,
				method INTEGER NOT NULL,
				status INTEGER NOT NULL,
				error_type INTEGER NOT NULL,
				calls BIGINT NOT NULL,
				errors BIGINT NOT NULL,
				input_tokens BIGINT NOT NULL,
				output_tokens BIGINT NOT NULL,
				total_tokens BIGINT NOT NULL,
				cost_usd DOUBLE PRECISION NOT NULL,
				unpriced BIGINT NOT NULL,
				unpriced_tokens BIGINT NOT NULL,
				latency BYTEA NOT NULL,
				PRIMARY KEY (cube, span, bucket, user_id, tagset, model, provider, method, status, error_type)
			)`,
			`CREATE INDEX rollups_user ON rollups(user_id, span, bucket) WHERE cube = 1`,
		},
		then: fillNamesAndRollups,
	},
	{
		// SQLite: the index of a user's rollups holds every column, so that
		// an aggregate of one user's calls reads the index alone. Before,
		// each of the user's rows was a lookup into the table, most of
		// them a page of its own: a user's overview at 10,000,000 records
		// read 290 MB from a cold page cache and took 0.9 s, and 1 MB and
		// 0.07 s after (docs/performance.md). PostgreSQL finds a user's
		// rows by the same index at every size already (3.4 ms at
		// 1,000,000 records a week), and an index-only scan there waits on
		// the visibility map, which upserted rows keep stale.
		version: 4,
		sqlite: []string{
			`DROP INDEX rollups_user`,
			`CREATE INDEX rollups_user ON rollups(user_id, span, bucket, tagset, model, provider, method, status, error_type,
				calls, errors, input_tokens, output_tokens, total_tokens, cost_usd, unpriced, unpriced_tokens, latency) WHERE cube = 1`,
		},
	},
}

// metaTable holds the schema version and the SQLite record sequence.
const metaTable = `CREATE TABLE IF NOT EXISTS llmhistory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`

// prepareSchema checks the schema version and, for a store opened for
// writing, migrates it up to SchemaVersion.
func (s *Store) prepareSchema(ctx context.Context) error {
	if s.opts.ReadOnly {
		v, err := s.schemaVersion(ctx, s.r)
		if err != nil {
			return err
		}
		switch {
		case v == 0:
			return fmt.Errorf("%w: %s", ErrNoHistory, s.url)
		case v != SchemaVersion:
			return &SchemaError{Found: v, Known: SchemaVersion, ReadOnly: true}
		}
		return nil
	}
	// Current already: no write transaction, so that a store whose
	// database refuses writes (a read-only file, a standby) still opens,
	// to read, and to spill what it is given.
	if v, err := s.schemaVersion(ctx, s.r); err == nil && v == migrations[len(migrations)-1].version {
		return nil
	} else if err == nil && v > migrations[len(migrations)-1].version {
		return &SchemaError{Found: v, Known: migrations[len(migrations)-1].version}
	}
	return s.migrate(ctx, migrations)
}

// schemaVersion reads the version of the schema; 0 when there is none.
func (s *Store) schemaVersion(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var exists int
	if err := db.QueryRowContext(ctx, s.d.metaExists()).Scan(&exists); err != nil {
		return 0, fmt.Errorf("store: read schema version of %s: %w", s.url, err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM llmhistory_meta WHERE key = 'schema_version'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read schema version of %s: %w", s.url, err)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version of %s is %q, not a number", s.url, v)
	}
	return n, nil
}

// migrate brings the schema up to the last of steps, in one transaction,
// so that several processes opening one new store at once create it once.
func (s *Store) migrate(ctx context.Context, steps []migration) error {
	known := steps[len(steps)-1].version
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.url, err)
	}
	defer tx.Rollback()
	// One migrator at a time, whichever process or replica.
	if err := s.d.lockMigration(ctx, tx); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.url, err)
	}
	if _, err := tx.ExecContext(ctx, metaTable); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.url, err)
	}
	v, err := s.schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if v > known {
		return &SchemaError{Found: v, Known: known}
	}
	if v == known {
		return tx.Commit()
	}
	for _, m := range steps {
		if m.version <= v {
			continue
		}
		for _, stmt := range s.d.migration(m) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("store: migrate %s to version %d: %w\n%s", s.url, m.version, err, strings.TrimSpace(stmt))
			}
		}
		if m.then != nil {
			if err := m.then(ctx, s, tx); err != nil {
				return fmt.Errorf("store: migrate %s to version %d: %w", s.url, m.version, err)
			}
		}
	}
	upsert := `INSERT INTO llmhistory_meta (key, value) VALUES ('schema_version', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	if _, err := tx.ExecContext(ctx, s.q(upsert), strconv.Itoa(known)); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.url, err)
	}
	if err := s.d.migrated(ctx, tx); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.url, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.url, err)
	}
	return nil
}

// fillNamesAndRollups moves a version 1 store's data into version 2: the
// names of its records, each record's tagset, and the rollups, computed
// from the records. A new store has none, and this costs nothing.
func fillNamesAndRollups(ctx context.Context, s *Store, tx *sql.Tx) error {
	for _, n := range []struct {
		k   kind
		col string
	}{{kindUser, "user_id"}, {kindModel, "model"}, {kindProvider, "provider"}, {kindMethod, "method"}, {kindStatus, "status"}, {kindErrorType, "error_type"}} {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO names (kind, name) SELECT DISTINCT CAST($1 AS INTEGER), `+n.col+` FROM records
			WHERE `+n.col+` IS NOT NULL AND `+n.col+` <> '' ON CONFLICT (kind, name) DO NOTHING`), int(n.k))
		if err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO names (kind, name) SELECT DISTINCT CAST($1 AS INTEGER), value FROM record_attrs
		WHERE name = $2 AND value <> '' ON CONFLICT (kind, name) DO NOTHING`), int(kindTag), attrTag); err != nil {
		return err
	}
	if err := s.dict.refresh(ctx, s, tx); err != nil {
		return err
	}
	// Each record's tagset, from its tags.
	rows, err := tx.QueryContext(ctx, s.q(`SELECT seq, value FROM record_attrs WHERE name = $1 AND value <> '' ORDER BY seq`), attrTag)
	if err != nil {
		return err
	}
	bySet := map[string][]any{}
	var seq, cur int64 = 0, -1
	var tags []int32
	flush := func() {
		if len(tags) > 0 {
			k := tagsetKey(tags)
			bySet[k] = append(bySet[k], cur)
		}
		tags = tags[:0]
	}
	for rows.Next() {
		var tag string
		if err := rows.Scan(&seq, &tag); err != nil {
			rows.Close()
			return err
		}
		if seq != cur {
			flush()
			cur = seq
		}
		id, _ := s.dict.id(kindTag, tag)
		tags = append(tags, id)
	}
	flush()
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	want := map[nameKey]bool{}
	for k := range bySet {
		want[nameKey{kindTagset, k}] = true
	}
	if err := s.dict.ensure(ctx, s, tx, want); err != nil {
		return err
	}
	for k, seqs := range bySet {
		id, _ := s.dict.id(kindTagset, k)
		err := chunked(seqs, 500, func(part []any) error {
			_, err := tx.ExecContext(ctx, s.q(`UPDATE records SET tagset = $1 WHERE seq IN (`+placeholders(2, len(part))+`)`), append([]any{id}, part...)...)
			return err
		})
		if err != nil {
			return err
		}
	}
	var first, last *int64
	if err := tx.QueryRowContext(ctx, `SELECT min(ts), max(ts) FROM records`).Scan(&first, &last); err != nil || first == nil {
		return err
	}
	if err := s.rebuildRollups(ctx, tx, hourOf(*first), hourOf(*last)); err != nil {
		return err
	}
	// The hours before the newest, into days and months, as writes seal
	// them.
	if horizon := min(hourOf(*last), hourOf(time.Now().UnixMicro())); horizon > hourOf(*first) {
		return s.seal(ctx, tx, math.MinInt64, horizon)
	}
	return nil
}
