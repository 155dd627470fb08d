package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// A store of the released version migrates up to a newer one with its
// records intact; this version then refuses it, naming both versions.
func TestMigrateUp(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	recs, _ := storebench.Conversation(nil, storebench.ConversationOptions{Trace: "m", Turns: 5})
	_, err = s.Write(ctx, recs)
	require.NoError(t, err)
	require.NoError(t, store.MigrateTo(ctx, s, `CREATE INDEX records_model ON records(model, ts)`, ``))
	require.NoError(t, store.MigrateTo(ctx, s, `CREATE INDEX records_model ON records(model, ts)`, ``), "once: a second run finds it done")
	got, err := s.Trace(ctx, "m")
	require.NoError(t, err)
	assert.Len(t, got, 5)
	require.NoError(t, s.Close())

	_, err = store.Open(ctx, url)
	var se *store.SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, store.SchemaVersion+1, se.Found)
	assert.Equal(t, store.SchemaVersion, se.Known)
}
