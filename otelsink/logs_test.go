package otelsink_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/internal/otlptest"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// The slog sink, through the OpenTelemetry slog bridge, makes each
// record an OTel log record: its fields as attributes (the outcome and
// usage as maps), Warn for a failed call, and the trace and span of the
// caller, end to end over OTLP/HTTP to the Collector's receiver.
func TestLogsThroughSlogBridge(t *testing.T) {
	c := otlptest.Start(t, nil)
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpoint(c.HTTP), otlploghttp.WithInsecure())
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	logger := otelslog.NewLogger("llmhistory", otelslog.WithLoggerProvider(lp))
	a := newApp(t, record.NewSlog(logger))

	caller := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xa1, 2, 3}, SpanID: trace.SpanID{0xb1, 2}, TraceFlags: trace.FlagsSampled,
	})
	ctx := middleware.WithTrace(trace.ContextWithSpanContext(context.Background(), caller), "conversation-logs")
	ok, failed := middleware.NewCallID(), middleware.NewCallID()
	a.call(t, ctx, ok, "", false)
	a.call(t, ctx, failed, "auth", false)
	require.NoError(t, a.rec.Close())
	require.NoError(t, lp.Shutdown(context.Background()))

	otlptest.WaitFor(t, "two log records", func() bool { return c.Logs.LogRecordCount() == 2 })
	byCall := map[string]plog.LogRecord{}
	for _, ld := range c.Logs.AllLogs() {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				assert.Equal(t, "llmhistory", sl.Scope().Name())
				for _, lr := range sl.LogRecords().All() {
					id, _ := lr.Attributes().Get("call_id")
					byCall[id.Str()] = lr
				}
			}
		}
	}
	require.Len(t, byCall, 2)

	lr := byCall[ok]
	assert.Equal(t, record.LogMessage, lr.Body().Str())
	assert.Equal(t, plog.SeverityNumberInfo, lr.SeverityNumber())
	assert.Equal(t, caller.TraceID(), trace.TraceID(lr.TraceID()))
	assert.Equal(t, caller.SpanID(), trace.SpanID(lr.SpanID()))
	attrs := lr.Attributes().AsRaw()
	assert.Equal(t, "conversation-logs", attrs["trace_id"])
	assert.Equal(t, "openai.chat.completions.create", attrs["method_name"])
	assert.Equal(t, map[string]any{
		"status": "ok", "ok": true, "retriable": false, "value_class": "chat.completion",
		"http_status": int64(200), "finish_reason": "stop", "response_id": "chatcmpl-" + ok,
	}, attrs["outcome_summary"])
	assert.Equal(t, map[string]any{
		"input_tokens": int64(20), "output_tokens": int64(5), "total_tokens": int64(25),
		"cached_tokens": int64(4), "reasoning_tokens": int64(2),
	}, attrs["usage"])
	for _, k := range []string{"history_record_appended", "conversation_history_size", "history_access_detected", "history_query_patterns"} {
		assert.Contains(t, attrs, k)
	}
	assert.Equal(t, []any{}, attrs["history_query_patterns"])

	bad := byCall[failed]
	assert.Equal(t, plog.SeverityNumberWarn, bad.SeverityNumber())
	msg, _ := bad.Attributes().Get("error_message")
	assert.Contains(t, msg.Str(), "[REDACTED]")

	wire := c.Wire(t)
	assert.NotContains(t, wire, fakeKey)
	assert.NotContains(t, wire, "Secret plan", "the slog sink logs no transcript")
}
