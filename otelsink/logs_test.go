package otelsink_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/llmhistory/llmhistory/internal/otelsinktest"
	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// The slog sink, through the OpenTelemetry slog bridge, makes each
// record an OTel log record: its fields as attributes (the outcome and
// usage as maps), Warn for a failed call, and the trace and span of the
// caller, end to end over OTLP/HTTP to an OTLP receiver.
func TestLogsThroughSlogBridge(t *testing.T) {
	c := otlpfake.Start(t)
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpoint(c.HTTP), otlploghttp.WithInsecure())
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	logger := otelslog.NewLogger("llmhistory", otelslog.WithLoggerProvider(lp))
	a := otelsinktest.NewApp(t, record.NewSlog(logger))

	caller := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xa1, 2, 3}, SpanID: trace.SpanID{0xb1, 2}, TraceFlags: trace.FlagsSampled,
	})
	ctx := middleware.WithTrace(trace.ContextWithSpanContext(context.Background(), caller), "conversation-logs")
	ok, failed := middleware.NewCallID(), middleware.NewCallID()
	a.Call(t, ctx, ok, "", false)
	a.Call(t, ctx, failed, "auth", false)
	require.NoError(t, a.Rec.Close())
	require.NoError(t, lp.Shutdown(context.Background()))

	otlpfake.WaitFor(t, "two log records", func() bool { return c.LogRecordCount() == 2 })
	byCall := map[string]*logspb.LogRecord{}
	for _, ld := range c.Logs() {
		for _, rl := range ld.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				assert.Equal(t, "llmhistory", sl.GetScope().GetName())
				for _, lr := range sl.GetLogRecords() {
					id, _ := otlpfake.Attrs(lr.GetAttributes())["call_id"].(string)
					byCall[id] = lr
				}
			}
		}
	}
	require.Len(t, byCall, 2)

	lr := byCall[ok]
	assert.Equal(t, record.LogMessage, otlpfake.Value(lr.GetBody()))
	assert.Equal(t, logspb.SeverityNumber_SEVERITY_NUMBER_INFO, lr.GetSeverityNumber())
	tid, sid := caller.TraceID(), caller.SpanID()
	assert.Equal(t, tid[:], lr.GetTraceId())
	assert.Equal(t, sid[:], lr.GetSpanId())
	attrs := otlpfake.Attrs(lr.GetAttributes())
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
	assert.Equal(t, logspb.SeverityNumber_SEVERITY_NUMBER_WARN, bad.GetSeverityNumber())
	assert.Contains(t, otlpfake.Attrs(bad.GetAttributes())["error_message"], "[REDACTED]")

	wire := c.Wire(t)
	assert.NotContains(t, wire, otelsinktest.FakeKey)
	assert.NotContains(t, wire, "Secret plan", "the slog sink logs no transcript")
}
