package storebench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// A kept file that a cut run left without its samples is continued, not
// made again: it ends as a file written in one go, the same records and
// the same samples.
func TestFillContinuesACutRun(t *testing.T) {
	const n = 6000
	ctx := context.Background()
	whole := Fill(t, "sqlite:"+filepath.Join(t.TempDir(), "whole.db"), n)

	cutURL := "sqlite:" + filepath.Join(t.TempDir(), "cut.db")
	s, err := store.Open(ctx, cutURL)
	require.NoError(t, err)
	w := NewWorkload(42, datasetStart(n), MonthStep)
	_, err = s.Write(ctx, w.Batch(5000)) // then the run was cut
	require.NoError(t, err)
	require.NoError(t, s.Close())

	cut := Fill(t, cutURL, n)
	assert.Equal(t, 5000-4096, cut.Continued, "continued after the records it held, the last batch again")
	assert.Equal(t, whole.CallIDs, cut.CallIDs)
	assert.Equal(t, whole.Traces, cut.Traces)
	assert.Equal(t, whole.Users, cut.Users)
	assert.Equal(t, whole.End, cut.End)
	for _, u := range []string{whole.URL, cutURL} {
		s, err := store.OpenWith(ctx, u, store.Options{ReadOnly: true})
		require.NoError(t, err)
		got, err := s.Count(ctx, store.Filter{})
		require.NoError(t, err)
		assert.EqualValues(t, n, got, u)
		total, err := s.Aggregate(ctx, store.AggregateQuery{})
		require.NoError(t, err)
		require.Len(t, total, 1)
		assert.EqualValues(t, n, total[0].Calls, "%s: the rollups count each record once", u)
		require.NoError(t, s.Close())
	}
}
