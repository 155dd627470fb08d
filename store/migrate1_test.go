package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// A store of schema version 1 (no scores, no names, no tagsets, rollups
// on SQLite only, by model and the like), one of version 2 (scores
// added) and one of version 3 (on SQLite, a user's rollups indexed by
// user and time only) migrate to the present version: its names, each
// record's tagset and the rollups are made from its records (version 3),
// its scores kept, and it answers as a store written at the present
// version does.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	type backend struct {
		url  func(t *testing.T) string
		exec func(t *testing.T, url string, stmts ...string)
		down []string // the present version back to version 2
		// down3 takes the present version back to version 3
		down3 []string
	}
	backends := map[string]backend{
		"sqlite": {
			url: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "h.db") },
			exec: func(t *testing.T, url string, stmts ...string) {
				db, err := sql.Open("sqlite", sqlitedsn.DSN(sqlitedsn.Path(url), 5000, false))
				require.NoError(t, err)
				defer db.Close()
				for _, q := range stmts {
					_, err := db.ExecContext(ctx, q)
					require.NoError(t, err, q)
				}
			},
			down: []string{
				`DROP TABLE rollups`, `DROP TABLE names`, `ALTER TABLE records DROP COLUMN tagset`,
				`CREATE TABLE rollups (hour INTEGER NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, method TEXT NOT NULL,
					error_type TEXT NOT NULL, status TEXT NOT NULL, calls INTEGER NOT NULL, errors INTEGER NOT NULL,
					input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, total_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,
					latency BLOB NOT NULL, PRIMARY KEY (hour, model, provider, method, error_type, status)) WITHOUT ROWID`,
				`DELETE FROM llmhistory_meta WHERE key = 'rollups_sealed'`,
			},
			down3: []string{
				`DROP INDEX rollups_user`,
				`CREATE INDEX rollups_user ON rollups(user_id, span, bucket) WHERE cube = 1`,
			},
		},
		"postgres": {
			url: func(t *testing.T) string { return pgtest.Shared(t).NewDatabase(t) },
			exec: func(t *testing.T, url string, stmts ...string) {
				conn, err := pgx.Connect(ctx, url)
				require.NoError(t, err)
				defer conn.Close(ctx)
				for _, q := range stmts {
					_, err := conn.Exec(ctx, q)
					require.NoError(t, err, q)
				}
			},
			down: []string{
				`DROP TABLE rollups`, `DROP TABLE names`, `ALTER TABLE records DROP COLUMN tagset`,
				`ALTER INDEX record_text_tsv SET (fastupdate = off)`, `ALTER INDEX record_text_tsv RESET (gin_pending_list_limit)`,
				`DELETE FROM llmhistory_meta WHERE key = 'rollups_sealed'`,
			},
		},
	}
	recs := storebench.NewWorkload(21, time.Date(2025, 6, 28, 13, 7, 0, 0, time.UTC), 11*time.Minute).Batch(3000)
	score := store.Score{CallID: recs[17].CallID, Name: "helpfulness", Value: store.Number(0.25), Source: store.SourceHuman,
		Author: "reviewer", Time: time.Date(2025, 7, 1, 9, 0, 0, 0, time.UTC)}
	for name, b := range backends {
		for _, from := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/from=%d", name, from), func(t *testing.T) {
				down := b.down
				if from == 3 {
					down = b.down3
				}
				migrateFrom(t, b.url, b.exec, down, from, recs, score)
			})
		}
	}
}

// migrateFrom writes recs (and, from version 2, score) into two stores
// of the present version, takes the second back to version from (what a
// store of that version holds of them is the same rows, less what later
// versions add), opens both and compares what they answer.
func migrateFrom(t *testing.T, newURL func(*testing.T) string, exec func(*testing.T, string, ...string), down []string,
	from int, recs []record.Record, score store.Score) {
	ctx := context.Background()
	urls := [2]string{newURL(t), newURL(t)}
	for _, url := range urls {
		s, err := store.Open(ctx, url)
		require.NoError(t, err)
		_, err = s.Write(ctx, recs)
		require.NoError(t, err)
		if from >= 2 {
			require.NoError(t, s.AddScore(ctx, score))
		}
		require.NoError(t, s.Close())
	}
	if from < 2 {
		down = append(slices.Clone(down), `DROP TABLE scores`)
	}
	exec(t, urls[1], append(slices.Clone(down), fmt.Sprintf(`UPDATE llmhistory_meta SET value = '%d' WHERE key = 'schema_version'`, from))...)
	_, err := store.OpenWith(ctx, urls[1], store.Options{ReadOnly: true})
	var se *store.SchemaError
	require.ErrorAs(t, err, &se, "version %d now", from)
	assert.Equal(t, from, se.Found)

	var opened [2]*store.Store
	for i, url := range urls {
		opened[i], err = store.Open(ctx, url) // migrates the second
		require.NoError(t, err)
		defer opened[i].Close()
	}
	want, got := opened[0], opened[1]
	wf, err := want.Facets(ctx)
	require.NoError(t, err)
	gf, err := got.Facets(ctx)
	require.NoError(t, err)
	assert.Equal(t, wf, gf)
	assert.Greater(t, len(gf.Users), 100)

	for _, f := range []store.Filter{{}, {Tags: []string{"support"}}, {UserID: storebench.User(7)}, {Since: time.Date(2025, 7, 3, 5, 30, 0, 0, time.UTC)}} {
		groupings := []store.Grouping{{}, {By: []store.GroupBy{store.ByDay}}, {By: []store.GroupBy{store.ByUser}}, {By: []store.GroupBy{store.ByTag, store.ByModel}}}
		w, err := want.Aggregates(ctx, f, groupings...)
		require.NoError(t, err)
		g, err := got.Aggregates(ctx, f, groupings...)
		require.NoError(t, err)
		// Sums of costs added in another order differ in their
		// last bits.
		for i := range w {
			require.Equal(t, len(w[i]), len(g[i]), "%+v", f)
			for j := range w[i] {
				assert.InDelta(t, w[i][j].CostUSD, g[i][j].CostUSD, 1e-9)
				w[i][j].CostUSD, g[i][j].CostUSD = 0, 0
			}
		}
		assert.Equal(t, w, g, "%+v", f)
	}
	wt, err := want.Traces(ctx, store.Query{Filter: store.Filter{Tags: []string{"beta"}}})
	require.NoError(t, err)
	gt, err := got.Traces(ctx, store.Query{Filter: store.Filter{Tags: []string{"beta"}}})
	require.NoError(t, err)
	for i := range wt.Traces {
		assert.InDelta(t, wt.Traces[i].CostUSD, gt.Traces[i].CostUSD, 1e-9)
		wt.Traces[i].CostUSD, gt.Traces[i].CostUSD = 0, 0
	}
	assert.Equal(t, wt, gt)
	require.NotEmpty(t, gt.Traces)
	assert.Contains(t, gt.Traces[0].Tags, "beta")

	ws, err := want.Scores(ctx, store.ScoreQuery{})
	require.NoError(t, err)
	gs, err := got.Scores(ctx, store.ScoreQuery{})
	require.NoError(t, err)
	assert.Equal(t, ws, gs)
	assert.Len(t, gs, min(from-1, 1), "the version 2 store's score is kept")
}
