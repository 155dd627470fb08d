package eval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
)

// recordingTB is a TB that keeps what a test would be told.
type recordingTB struct {
	errors, logs []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Context() context.Context { return context.Background() }

// The CI helper fails when a score drops below its threshold or behind
// the baseline, and passes without a regression.
func TestRunExperimentTestGates(t *testing.T) {
	srv, _ := modelServer(t)
	prod := func(m string) eval.Experiment {
		e := swap(srv)
		e.Variants = []eval.Variant{{Name: "prod", Model: m}}
		return e
	}
	var tb recordingTB
	baseline := eval.RunExperimentTest(&tb, questions(), prod("gpt-4o-mini"), eval.GateOptions{Min: map[string]float64{"similarity": 0.9}})
	require.Empty(t, tb.errors, "the baseline passes its threshold")
	require.Len(t, tb.logs, 1)
	assert.Contains(t, tb.logs[0], "# Experiment comparison")

	t.Run("no regression", func(t *testing.T) {
		var tb recordingTB
		eval.RunExperimentTest(&tb, questions(), prod("gpt-4o-mini"), eval.GateOptions{Baseline: baseline})
		assert.Empty(t, tb.errors)
	})
	t.Run("behind the baseline", func(t *testing.T) {
		var tb recordingTB
		eval.RunExperimentTest(&tb, questions(), prod("gpt-4.1-nano"), eval.GateOptions{Baseline: baseline, Tolerance: 0.05})
		require.Len(t, tb.errors, 2, "%s", strings.Join(tb.errors, "\n"))
		assert.Equal(t, "experiment model-swap, variant prod: exact_match fell behind the baseline: 0.333, was 1.000 (tolerance 0.050)", tb.errors[0])
		assert.Contains(t, tb.errors[1], "similarity fell behind the baseline: 0.444, was 1.000")
	})
	t.Run("below a threshold", func(t *testing.T) {
		var tb recordingTB
		eval.RunExperimentTest(&tb, questions(), prod("gpt-4.1-nano"), eval.GateOptions{Min: map[string]float64{"similarity": 0.8, "exact_match": 0.3}})
		require.Len(t, tb.errors, 1)
		assert.Equal(t, "experiment model-swap, variant prod: similarity is 0.444, below its threshold 0.800", tb.errors[0])
	})
	t.Run("failed trials", func(t *testing.T) {
		var tb recordingTB
		eval.RunExperimentTest(&tb, questions(), prod("gpt-unknown"), eval.GateOptions{Min: map[string]float64{"similarity": 0.5}})
		require.Len(t, tb.errors, 2)
		assert.Contains(t, tb.errors[0], "3 trials failed (at most 0 may)")
		assert.Contains(t, tb.errors[1], "no similarity score")
	})
}
