package store_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/store"
)

// A record the recorder made is not normalized again in the store: its
// history checked its args when it added it (record.ArgsShaped), and the
// store takes them as they are. Only the first call of each conversation,
// which continues no earlier record, is checked by the store. A record
// from elsewhere is.
func TestRecordedRecordsAreNotNormalizedAgain(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	w, err := store.Open(ctx, url)
	require.NoError(t, err)
	count, undo := store.CountNormalize()
	defer undo()
	rec := middleware.NewRecorder(middleware.WithSink(w), middleware.WithLogger(slog.New(slog.DiscardHandler)))
	const convs, turns = 3, 8
	calls := storebench.Chat(t, rec.Client(nil), convs, turns)
	require.NoError(t, rec.Close()) // and the store, its sink
	require.Equal(t, convs*turns, calls)
	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, calls, n)
	assert.Equal(t, convs, count(), "the first call of each conversation only")

	// Every record reads back whole.
	for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{}) {
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(r.Args), `[{`) && strings.Contains(string(r.Args), `You are the support assistant`), "%s: %.80s", r.CallID, r.Args)
	}

	// Records from elsewhere are checked.
	before := count()
	recs, _ := storebench.Conversation(nil, storebench.ConversationOptions{Trace: "other", Turns: 4})
	_, err = s.Write(ctx, recs)
	require.NoError(t, err)
	assert.Equal(t, before+4, count(), "records not from a history")
}
