package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/store"
)

// A million calls through a recorder into a store, and every record read
// back whole: LLMHISTORY_LONG=1 (LLMHISTORY_LONG_CALLS sets another
// number). It takes minutes; docs/store.md has its figures.
func TestLongMillionThroughRecorder(t *testing.T) {
	if os.Getenv("LLMHISTORY_LONG") != "1" {
		t.Skip("LLMHISTORY_LONG=1 runs it (minutes)")
	}
	calls := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("LLMHISTORY_LONG_CALLS")); err == nil && n > 0 {
		calls = n
	}
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "long.db")
	s, err := store.OpenWith(ctx, url, store.Options{})
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(s), middleware.WithLogger(slog.New(slog.DiscardHandler)))
	convs := max(calls/10, 1)
	chats := storebench.NewChats(t, storebench.NewChatServer(t), rec.Client(nil), convs)
	start := time.Now()
	for i := range calls {
		chats.Random()
		// Never more queued than the sink's queue holds: the test
		// checks every record arrives, not what a full queue drops.
		if i%2000 == 1999 {
			require.NoError(t, rec.Flush())
		}
		if i%100_000 == 99_999 {
			t.Logf("%d calls in %v", i+1, time.Since(start).Round(time.Second))
		}
	}
	require.NoError(t, rec.Close())
	took := time.Since(start)
	st := rec.Stats()
	require.EqualValues(t, calls, st.Recorded)
	require.Len(t, st.Sinks, 1)
	assert.EqualValues(t, calls, st.Sinks[0].Written)
	assert.Zero(t, st.Dropped+st.SinkErrors)
	t.Logf("%d calls recorded into %s in %v (%.0f calls/s)", calls, url, took.Round(time.Second), float64(calls)/took.Seconds())

	// Every call once, its args whole: the last message names its
	// conversation and turn, and a turn k sends 2k messages.
	s, err = store.OpenWith(ctx, url, store.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	start = time.Now()
	seen := make(map[[2]int]bool, calls)
	n := 0
	for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{}) {
		require.NoError(t, err)
		n++
		var msgs []struct{ Content string }
		require.NoError(t, json.Unmarshal(r.Args, &msgs), r.CallID)
		var conv, turn int
		_, err := fmt.Sscanf(msgs[len(msgs)-1].Content, "conversation %d, question %d:", &conv, &turn)
		require.NoError(t, err, r.CallID)
		require.Equal(t, 2*turn, len(msgs), "%s: turn %d of conversation %d", r.CallID, turn, conv)
		key := [2]int{conv, turn}
		require.False(t, seen[key], "conversation %d turn %d twice", conv, turn)
		seen[key] = true
	}
	assert.Equal(t, calls, n)
	assert.Len(t, seen, calls)
	d, err := s.Describe(ctx)
	require.NoError(t, err)
	t.Logf("read back %d records whole in %v; %d traces, %d messages, %d bytes (%.0f bytes/record)",
		n, time.Since(start).Round(time.Second), d.Traces, d.Messages, d.Bytes, float64(d.Bytes)/float64(n))
}
