package view_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/view"
)

// The same calls give the same p50 and p95 in the store (from its rollups
// and from its records), in the viewer (over the file and over the
// store) and in the report: one latency sketch (internal/quantile) and
// one rule of what counts as a duration. The report shows its figures to
// the microsecond.
func TestOneQuantileEverywhere(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 8))
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var recs []record.Record
	for i := range 3000 {
		r := rec(fmt.Sprintf("t%03d", i/10), i%60, "ana", i%29 != 0)
		r.CallID = fmt.Sprintf("c%05d", i)
		r.Timestamp = record.FormatTime(start.Add(time.Duration(i) * 17 * time.Second))
		r.Tags = []string{"checkout"}
		switch {
		case i%100 == 0:
			r.DurationMS = 0 // no duration: not counted anywhere
		case i%50 == 1:
			r.DurationMS = 0.0004 // at or below a microsecond
		case i%7 == 0:
			r.DurationMS = 1234.567891 // a value many calls share
		default:
			r.DurationMS = math.Round(math.Exp(rng.NormFloat64()*1.2+6.5)*1e6) / 1e6
		}
		recs = append(recs, r)
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(lines(recs...)), 0o600))

	url := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	w, err := store.Open(ctx, url)
	require.NoError(t, err)
	_, err = w.Write(ctx, recs)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	s, err := store.OpenWith(ctx, url, store.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()

	type figures struct{ p50, p95 float64 }
	got := map[string]figures{}

	byModel := store.AggregateQuery{By: []store.GroupBy{store.ByModel}}
	gs, err := s.Aggregate(ctx, byModel)
	require.NoError(t, err)
	require.Len(t, gs, 1)
	got["store, rollups"] = figures{gs[0].LatencyP50MS, gs[0].LatencyP95MS}
	// A filter no rollup knows: read from the records (every call with a
	// duration, the only ones a latency counts).
	byModel.MinDuration = time.Nanosecond
	gs, err = s.Aggregate(ctx, byModel)
	require.NoError(t, err)
	got["store, records"] = figures{gs[0].LatencyP50MS, gs[0].LatencyP95MS}

	jsonl, err := view.OpenJSONL([]string{path}, view.JSONLOptions{})
	require.NoError(t, err)
	defer jsonl.Close()
	require.NoError(t, jsonl.Wait(ctx))
	for name, src := range map[string]view.Source{"viewer, file": jsonl, "viewer, store": view.FromStore(s, 0)} {
		st, err := src.Stats(ctx, view.Query{})
		require.NoError(t, err)
		require.Len(t, st.Models, 1, name)
		got[name] = figures{st.Models[0].P50MS, st.Models[0].P95MS}
	}

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := report.Build(ctx, report.Options{}, report.Source{Name: "history.jsonl", R: f})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Users)
	reported := figures{rep.Users[0].P50MS, rep.Users[0].P95MS}

	want := got["store, rollups"]
	assert.Positive(t, want.p95)
	for name, g := range got {
		assert.Equal(t, want, g, name)
	}
	micro := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	assert.Equal(t, figures{micro(want.p50), micro(want.p95)}, reported, "the report")
}
