package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/store/sqlite"
	"github.com/llmhistory/llmhistory/store/storetest"
)

func harness() storetest.Harness {
	return storetest.Harness{
		NewURL: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		Exec: func(t *testing.T, url, query string) {
			db, err := sql.Open("sqlite", sqlite.DSN(sqlite.Path(url), 5000, false))
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(query)
			require.NoError(t, err)
		},
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, harness()) }

// Whatever a user types as search text, the query runs: words are
// quoted, FTS5's operators and punctuation are not passed on.
func FuzzTextSearch(f *testing.F) {
	for _, s := range []string{"refund", `"unterminated`, "a* OR b NEAR(c)", "^col:x", "AND", "café -x", "\x00\xff", "(((("} {
		f.Add(s)
	}
	ctx := context.Background()
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(f.TempDir(), "h.db"))
	require.NoError(f, err)
	defer s.Close()
	recs, _ := storetest.Conversation(nil, storetest.ConversationOptions{Trace: "fz", Turns: 3})
	_, err = s.Write(ctx, recs)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		_, err := s.Query(ctx, store.Query{Filter: store.Filter{Text: text}, NoArgs: true})
		require.NoError(t, err)
		_, err = s.Traces(ctx, store.Query{Filter: store.Filter{Text: text}})
		require.NoError(t, err)
	})
}

// A 1,000-turn conversation takes at most twice its unique text on disk.
func TestThousandTurnsLinear(t *testing.T) {
	if storetest.Race {
		t.Skip("reads 600 MB of args: minutes under the race detector")
	}
	l := storetest.MeasureLinear(t, "sqlite:"+filepath.Join(t.TempDir(), "h.db"), 1000)
	t.Log(l)
	require.LessOrEqual(t, float64(l.Store), 2*float64(l.Unique), l.String())
}
