package otelsink_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// A call's span and its scores' evaluation events go over OTLP/HTTP to a
// receiver; each event is in the call's trace, under its span, with the
// conventions' attributes.
func TestScoresAsEvaluationEvents(t *testing.T) {
	ctx := context.Background()
	c := otlpfake.Start(t)
	spans, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(c.HTTP), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	sink, err := otelsink.New(otelsink.Options{SpanExporter: spans})
	require.NoError(t, err)
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	require.NoError(t, sink.Append(ctx, record.Record{
		CallID: "call-1", TraceID: "conv-7", Timestamp: record.FormatTime(at), Speaker: "user",
		MethodName: "openai.chat.completions.create", Args: json.RawMessage(`[]`), Kwargs: json.RawMessage(`{"model":"gpt-4o-mini"}`),
		Outcome: record.Success("chat.completion"), DurationMS: 120, Model: "gpt-4o-mini",
	}))
	require.NoError(t, sink.Close())

	logs, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(c.HTTP), otlploghttp.WithInsecure())
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logs)))
	scores := otelsink.NewScores(lp)
	for _, sc := range []store.Score{
		{CallID: "call-1", TraceID: "conv-7", Name: "helpfulness", Value: store.Number(0.8), Comment: "Direct.", Source: store.SourceModel, Author: "judge@1", Time: at.Add(time.Minute)},
		{CallID: "call-1", TraceID: "conv-7", Name: "thumbs", Value: store.Bool(false), Source: store.SourceHuman, Author: "user-42", Time: at.Add(time.Minute)},
		{TraceID: "conv-7", Name: "topic", Value: store.Category("billing"), Source: store.SourceHuman, Author: "ann", Time: at.Add(time.Hour)},
	} {
		require.NoError(t, scores.AddScore(ctx, sc))
	}
	require.ErrorIs(t, scores.AddScore(ctx, store.Score{Name: "x"}), store.ErrBadScore)
	require.NoError(t, lp.Shutdown(ctx))

	otlpfake.WaitFor(t, "three events", func() bool { return c.LogRecordCount() == 3 })
	span := c.Spans(t)["call-1"]
	require.NotNil(t, span)
	byName := map[string]*logspb.LogRecord{}
	for _, ld := range c.Logs() {
		for _, rl := range ld.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				assert.Equal(t, otelsink.ScopeName, sl.GetScope().GetName())
				for _, lr := range sl.GetLogRecords() {
					assert.Equal(t, otelsink.EvaluationEvent, lr.GetEventName())
					byName[otlpfake.Attrs(lr.GetAttributes())["gen_ai.evaluation.name"].(string)] = lr
				}
			}
		}
	}
	require.Len(t, byName, 3)
	h := byName["helpfulness"]
	assert.Equal(t, span.GetTraceId(), h.GetTraceId(), "in the call's trace")
	assert.Equal(t, span.GetSpanId(), h.GetSpanId(), "under the call's span")
	assert.Equal(t, uint64(at.Add(time.Minute).UnixNano()), h.GetTimeUnixNano())
	assert.Equal(t, map[string]any{
		"gen_ai.evaluation.name": "helpfulness", "gen_ai.evaluation.score.value": 0.8,
		"gen_ai.evaluation.explanation": "Direct.", "llmhistory.score.source": "model", "llmhistory.score.author": "judge@1",
		"llmhistory.call_id": "call-1", "gen_ai.conversation.id": "conv-7",
	}, otlpfake.Attrs(h.GetAttributes()))
	th := otlpfake.Attrs(byName["thumbs"].GetAttributes())
	assert.Equal(t, 0.0, th["gen_ai.evaluation.score.value"])
	assert.Equal(t, "false", th["gen_ai.evaluation.score.label"])
	topic := byName["topic"]
	assert.Empty(t, topic.GetSpanId(), "a conversation's score is under no span")
	ta := otlpfake.Attrs(topic.GetAttributes())
	assert.Equal(t, "billing", ta["gen_ai.evaluation.score.label"])
	assert.NotContains(t, ta, "gen_ai.evaluation.score.value")
	assert.Equal(t, "conv-7", ta["gen_ai.conversation.id"])
}
