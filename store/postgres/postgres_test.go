package postgres_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/postgres"
	"github.com/llmhistory/llmhistory/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func harness() storetest.Harness {
	return storetest.Harness{
		NewURL: func(t *testing.T) string { return pgtest.Shared(t).NewDatabase(t) },
		Exec: func(t *testing.T, url, query string) {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			require.NoError(t, err)
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, query)
			require.NoError(t, err)
		},
		// The data directory but its WAL (pg_wal): the server keeps the
		// WAL segments that hold the records' inserts until it recycles
		// and overwrites them, which is the server's to do, not the
		// store's (docs/privacy.md).
		Files: func(t *testing.T, url string) []byte {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			require.NoError(t, err)
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, "CHECKPOINT")
			require.NoError(t, err)
			var all []byte
			require.NoError(t, filepath.WalkDir(pgtest.Shared(t).Dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() && d.Name() == "pg_wal" {
					return filepath.SkipDir
				}
				if !d.Type().IsRegular() {
					return nil
				}
				if b, err := os.ReadFile(path); err == nil {
					all = append(all, b...)
				}
				return nil
			}))
			return all
		},
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, harness()) }

// Whatever a user types as search text, the query runs.
func FuzzTextSearch(f *testing.F) {
	for _, s := range []string{"refund", `"unterminated`, "a & b | !c", "x:*", "<->", "café", "\x00\xff", "(((("} {
		f.Add(s)
	}
	ctx := context.Background()
	srv := pgtest.Start(f, pgtest.Options{})
	s, err := store.Open(ctx, srv.NewDatabase(f))
	require.NoError(f, err)
	defer s.Close()
	recs, _ := storebench.Conversation(nil, storebench.ConversationOptions{Trace: "fz", Turns: 3})
	_, err = s.Write(ctx, recs)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		_, err := s.Query(ctx, store.Query{Filter: store.Filter{Text: text}, NoArgs: true})
		require.NoError(t, err)
	})
}

// A 1,000-turn conversation grows linearly: PostgreSQL takes 2.8 times
// its unique text (SQLite 1.7), its rows' and full-text index's overhead
// being larger. It logs where the bytes go, table by table, which
// docs/store.md gives: without its full-text index the store would still
// take 2.1 times.
func TestThousandTurnsLinear(t *testing.T) {
	if storebench.Race {
		t.Skip("reads 600 MB of args: minutes under the race detector")
	}
	url := pgtest.Shared(t).NewDatabase(t)
	l := storebench.MeasureLinear(t, url, 1000)
	t.Log(l)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid) FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' ORDER BY 2 + 3 DESC`)
	require.NoError(t, err)
	for rows.Next() {
		var name string
		var table, indexes int64
		require.NoError(t, rows.Scan(&name, &table, &indexes))
		if table+indexes > 64<<10 {
			t.Logf("%-12s %6.2f MB (%.2fx the unique text): table %7d bytes, indexes %7d", name, float64(table+indexes)/1e6,
				float64(table+indexes)/float64(l.Unique), table, indexes)
		}
	}
	require.NoError(t, rows.Err())
	require.LessOrEqual(t, float64(l.Store), 3*float64(l.Unique), l.String())
}
