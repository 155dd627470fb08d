package otelsink

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

	"github.com/llmhistory/llmhistory/record"
)

// The bucket boundaries the GenAI conventions advise: seconds for the
// durations, tokens for the usage.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// instruments are the GenAI client metrics, made once per sink.
type instruments struct {
	duration   genaiconv.ClientOperationDuration
	tokens     genaiconv.ClientTokenUsage
	firstChunk genaiconv.ClientOperationTimeToFirstChunk
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var err error
	if in.duration, err = genaiconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, err
	}
	if in.tokens, err = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
		return nil, err
	}
	if in.firstChunk, err = genaiconv.NewClientOperationTimeToFirstChunk(m, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, err
	}
	return &in, nil
}

// record records one call: its duration, its input and output tokens when
// the provider reported them, and a stream's time to first chunk. The
// attributes are the ones the conventions list for these metrics
// (operation, provider, request and response models, server address and
// port), every one of few values; a record's own identity (call id,
// trace) stays on its span, where it does not multiply the metric's
// series.
func (in *instruments) record(ctx context.Context, r *record.Record, n names) {
	a := n.sampling(make([]attribute.KeyValue, 0, 8))
	if n.responseModel != "" {
		a = append(a, semconv.GenAIResponseModel(n.responseModel))
	}
	// attribute.NewSet sorts the slice it is given: each set gets its own.
	set := func(extra ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(a), extra...)...))
	}
	if n.errorType != "" {
		in.duration.Inst().Record(ctx, r.DurationMS/1000, set(semconv.ErrorTypeKey.String(n.errorType)))
	} else {
		in.duration.Inst().Record(ctx, r.DurationMS/1000, set())
	}
	if r.TimeToFirstChunkMS > 0 {
		in.firstChunk.Inst().Record(ctx, r.TimeToFirstChunkMS/1000, set())
	}
	if u := r.Usage; u != nil {
		// Token usage is recorded only when the provider reported it; the
		// error type is not among its attributes. An embedding generates
		// no tokens: a zero would pull the output distribution down.
		in.tokens.Inst().Record(ctx, int64(u.InputTokens), set(semconv.GenAITokenTypeInput))
		if n.op != opEmbeddings || u.OutputTokens != 0 {
			in.tokens.Inst().Record(ctx, int64(u.OutputTokens), set(semconv.GenAITokenTypeOutput))
		}
	}
}
