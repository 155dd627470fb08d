package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/store"
)

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// PostgreSQL stops in the middle of a run: the calls go on at their
// speed, the records of the outage go to the spill file and are counted
// by the recorder as its sink's failures, the fault is logged once, the
// store writes again once the server is back, and import brings the
// spilled records back: every call is in the database once.
func TestStoppedMidRun(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t, pgtest.Options{})
	url := srv.NewDatabase(t)
	spill := filepath.Join(t.TempDir(), "spill.jsonl")
	var logs logBuffer
	s, err := store.OpenWith(ctx, url, store.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), SpillPath: spill})
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(s), middleware.WithLogger(slog.New(slog.DiscardHandler)))
	chats := storebench.NewChats(t, storebench.NewChatServer(t), rec.Client(nil), 6)

	calls := 0
	phase := func(n int) (slowest time.Duration) {
		for range n {
			start := time.Now()
			chats.Random()
			slowest = max(slowest, time.Since(start))
			calls++
		}
		require.NoError(t, rec.Flush())
		return slowest
	}
	phase(20)
	require.NoError(t, srv.Stop())
	slowest := phase(30)
	assert.Less(t, slowest, time.Second, "a call never waits for the database")
	st := rec.Stats()
	require.Len(t, st.Sinks, 1)
	assert.EqualValues(t, 30, st.Sinks[0].Errors, "the outage's records are counted as the sink's failures")
	assert.EqualValues(t, 30, s.Stats().Spilled)

	require.NoError(t, srv.Start())
	time.Sleep(1100 * time.Millisecond) // the first backoff
	phase(20)
	require.NoError(t, rec.Close())
	st = rec.Stats()
	assert.EqualValues(t, 40, st.Sinks[0].Written)
	assert.EqualValues(t, 30, st.Sinks[0].Errors)
	assert.Zero(t, st.Dropped)
	assert.Equal(t, 1, strings.Count(logs.String(), "the database is down"), logs.String())

	s, err = store.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, 40, n)
	f, err := os.Open(spill)
	require.NoError(t, err)
	defer f.Close()
	res, err := s.Import(ctx, f, nil)
	require.NoError(t, err)
	assert.Equal(t, store.ImportResult{Records: 30, Written: 30}, res)
	n, err = s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, calls, n, "every call once")
	// And whole: the conversations the recorder found read back in order.
	p, err := s.Traces(ctx, store.Query{})
	require.NoError(t, err)
	var total int64
	for _, tr := range p.Traces {
		recs, err := s.Trace(ctx, tr.TraceID)
		require.NoError(t, err)
		total += int64(len(recs))
	}
	assert.EqualValues(t, calls, total)
}
