package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/postgres"
)

// A page found by walking newest first and testing each record is the
// page found by gathering every match: the same records, in the same
// order, page after page, on both backends.
func TestWalkAndGatherAgree(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "h.db")}
	if srv := pgtest.Start(t, pgtest.Options{}); srv != nil {
		urls["postgres"] = srv.NewDatabase(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, url)
			require.NoError(t, err)
			defer s.Close()
			w := storebench.NewWorkload(3, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Second)
			recs := w.Batch(1200)
			// Some records at the same instant: the cursor orders them.
			for i := 100; i < 110; i++ {
				recs[i].Timestamp = recs[100].Timestamp
			}
			_, err = s.Write(ctx, recs)
			require.NoError(t, err)
			// Then records older than those, imported after them: the
			// store's order disagrees with time's.
			old := storebench.NewWorkload(5, time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), 500*time.Millisecond).Batch(600)
			_, err = s.Write(ctx, old)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(4, 4))
			for _, f := range []store.Filter{
				{Tags: []string{"checkout"}},
				{Tags: []string{"beta", "support"}},
				{Metadata: map[string]string{"tenant": "tenant-7"}},
				{Text: "refund"},
				{Text: "order delayed", Model: "gpt-4o"},
				{Tags: []string{"agent"}, Metadata: map[string]string{"feature": "agent"}, Status: "ok"},
			} {
				limit := 7 + rng.IntN(20)
				pages := func(bound int64) []string {
					store.SetWalkBound(s, bound)
					var ids []string
					q := store.Query{Filter: f, Limit: limit, NoArgs: true}
					for {
						p, err := s.Query(ctx, q)
						require.NoError(t, err)
						for _, r := range p.Records {
							ids = append(ids, r.CallID)
						}
						if p.Next == "" || len(ids) > 120 {
							return ids
						}
						q.Cursor = p.Next
					}
				}
				walked, gathered := pages(1), pages(1<<40)
				require.NotEmpty(t, gathered, "%+v selects something", f)
				if !assert.Equal(t, len(gathered), len(walked), "%+v", f) {
					continue
				}
				for i := range gathered {
					if !assert.Equal(t, gathered[i], walked[i], "%+v: record %d", f, i) {
						break
					}
				}
				// Conversations too, page after page (a common word is
				// walked in the full-text index's order on SQLite).
				tracePages := func(bound int64) []string {
					store.SetWalkBound(s, bound)
					var out []string
					q := store.Query{Filter: f, Limit: 5}
					for len(out) < 60 {
						p, err := s.Traces(ctx, q)
						require.NoError(t, err)
						out = append(out, fmt.Sprint(p.Traces))
						if p.Next == "" {
							break
						}
						q.Cursor = p.Next
					}
					return out
				}
				assert.Equal(t, tracePages(1<<40), tracePages(1), "%+v", f)
			}
		})
	}
}

// A page's plan asks PostgreSQL's statistics how common a word or a tag
// is before it counts: they know a word most records hold, and one none
// does, as SQLite, which keeps no such counts, says it does not know.
func TestPlanEstimates(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "h.db")}
	if srv := pgtest.Start(t, pgtest.Options{}); srv != nil {
		urls["postgres"] = srv.NewDatabase(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, url)
			require.NoError(t, err)
			defer s.Close()
			recs := storebench.NewWorkload(3, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Second).Batch(3000)
			_, err = s.Write(ctx, recs)
			require.NoError(t, err)
			words := `SELECT seq FROM record_text WHERE tsv @@ plainto_tsquery('simple', $1)`
			if name == "sqlite" {
				_, ok := store.Estimate(s, `SELECT rowid FROM record_text WHERE record_text MATCH $1`, "refund")
				assert.False(t, ok)
				return
			}
			store.ExecForTest(t, s, "ANALYZE")
			var have int64
			for _, r := range recs {
				if strings.Contains(strings.ToLower(string(r.Args)), "refund") {
					have++
				}
			}
			common, ok := store.Estimate(s, words, "refund")
			require.True(t, ok)
			assert.InDelta(t, float64(have), common, float64(have)/2, "a word in %d of %d records", have, len(recs))
			rare, ok := store.Estimate(s, words, "zyzzyva")
			require.True(t, ok)
			assert.Less(t, rare, float64(len(recs))/100, "a word in none")
			_, ok = store.Estimate(s, "SELECT nonsense FROM nowhere")
			assert.False(t, ok, "a query the database refuses has no estimate")
		})
	}
}

// On SQLite an aggregate of one user's calls reads the index of the
// users' rollups alone: every column a rollup row is read for is in it
// (schema version 4). Were one missing, each of the user's rows would be
// a lookup into the table, most of them a page of its own: a user's
// overview at 10,000,000 records read 290 MB from a cold page cache.
func TestUsersRollupsReadFromTheirIndex(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "h.db"))
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Write(ctx, storebench.NewWorkload(3, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Minute).Batch(2000))
	require.NoError(t, err)
	for _, q := range []string{
		`SELECT ` + store.RollupColumns + ` FROM rollups WHERE cube = 1 AND span = 2 AND bucket >= $1 AND bucket < $2 AND user_id = $3`,
		`SELECT model, count(*), sum(calls), sum(errors), sum(input_tokens), sum(output_tokens), sum(total_tokens), sum(cost_usd), sum(unpriced), sum(unpriced_tokens)
			FROM rollups WHERE cube = 1 AND span = 1 AND bucket >= $1 AND bucket < $2 AND user_id = $3 AND tagset IN ($4, $5) GROUP BY model`,
	} {
		plan := store.SQLitePlan(t, s, q, 0, 1<<40, 7, 1, 2)
		assert.Contains(t, plan, "USING COVERING INDEX rollups_user", "%s\n%s", q, plan)
	}
}
