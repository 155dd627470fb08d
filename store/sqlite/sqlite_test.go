package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/store/storetest"
)

func harness() storetest.Harness {
	return storetest.Harness{
		NewURL: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		Exec: func(t *testing.T, url, query string) {
			db, err := sql.Open("sqlite", sqlitedsn.DSN(sqlitedsn.Path(url), 5000, false))
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(query)
			require.NoError(t, err)
		},
		Files: func(t *testing.T, url string) []byte {
			path := sqlitedsn.Path(url)
			var all []byte
			for _, f := range []string{path, path + "-wal", path + "-journal", path + ".spill.jsonl"} {
				b, err := os.ReadFile(f)
				if err != nil && !os.IsNotExist(err) {
					require.NoError(t, err)
				}
				all = append(all, b...)
			}
			return all
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
	recs, _ := storebench.Conversation(nil, storebench.ConversationOptions{Trace: "fz", Turns: 3})
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
	if storebench.Race {
		t.Skip("reads 600 MB of args: minutes under the race detector")
	}
	l := storebench.MeasureLinear(t, "sqlite:"+filepath.Join(t.TempDir(), "h.db"), 1000)
	t.Log(l)
	require.LessOrEqual(t, float64(l.Store), 2*float64(l.Unique), l.String())
}

// Retention by size deletes the oldest records until the file's data
// fits, gives the pages back, and leaves every kept record whole.
func TestRetentionBySize(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "h.db")
	s, err := store.Open(ctx, "sqlite:"+file)
	require.NoError(t, err)
	defer s.Close()
	// Short conversations: deleting the oldest records frees their
	// messages, which no kept record resends.
	w := storebench.NewWorkloadWith(9, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Minute, storebench.WorkloadOptions{MinCalls: 1, MaxCalls: 20})
	recs := w.Batch(3000)
	_, err = s.Write(ctx, recs)
	require.NoError(t, err)
	before, err := s.Describe(ctx)
	require.NoError(t, err)
	bound := before.Bytes / 2
	res, err := s.Prune(ctx, store.Retention{MaxBytes: bound})
	require.NoError(t, err)
	assert.Positive(t, res.Records)
	assert.Positive(t, res.Messages)
	assert.LessOrEqual(t, res.Bytes, bound)
	after, err := s.Describe(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, before.Records-res.Records, after.Records)
	assert.True(t, after.Oldest.After(before.Oldest), "the oldest went")
	assert.Equal(t, before.Newest, after.Newest, "the newest stayed")
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Less(t, st.Size(), before.Bytes, "pages given back to the file system")
	// Every kept record reads whole.
	byID := map[string]record.Record{}
	for _, r := range recs {
		byID[r.CallID] = r
	}
	n := 0
	for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{}) {
		require.NoError(t, err)
		require.JSONEq(t, string(byID[r.CallID].Args), string(r.Args), r.CallID)
		n++
	}
	assert.EqualValues(t, after.Records, n)
	_, err = s.Prune(ctx, store.Retention{MaxBytes: 1 << 40})
	require.NoError(t, err)
}
