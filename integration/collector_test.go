package integration_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/llmhistory/llmhistory/integration/internal/otlptest"
	"github.com/llmhistory/llmhistory/internal/otelsinktest"
	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// wantAttrs is what the conventions and otelsink's doc say a
// record's span carries, written from the record's fields.
func wantAttrs(r record.Record) map[string]any {
	w := map[string]any{
		"gen_ai.operation.name":                "chat",
		"gen_ai.provider.name":                 "openai",
		"openai.api.type":                      "chat_completions",
		"gen_ai.request.model":                 "gpt-4o-mini",
		"gen_ai.request.temperature":           0.2,
		"gen_ai.request.max_tokens":            int64(64),
		"gen_ai.conversation.id":               r.TraceID,
		"session.id":                           r.TraceID,
		"http.response.status_code":            int64(r.Outcome.HTTPStatus),
		"llmhistory.call_id":                   r.CallID,
		"llmhistory.speaker":                   r.Speaker,
		"llmhistory.method_name":               r.MethodName,
		"llmhistory.depth":                     int64(*r.Depth),
		"llmhistory.outcome.status":            r.Outcome.Status,
		"llmhistory.outcome.retriable":         r.Outcome.Retriable,
		"llmhistory.attempts":                  int64(r.Attempts),
		"llmhistory.history_record_appended":   r.HistoryRecordAppended,
		"llmhistory.conversation_history_size": int64(r.ConversationHistorySize),
		"llmhistory.history_access_detected":   r.HistoryAccessDetected,
		"llmhistory.history_query_patterns":    []any{},
	}
	if r.ParentCallID != "" {
		w["llmhistory.parent_call_id"] = r.ParentCallID
	}
	// The server, from the record (the recorder took it from the URL): no
	// otelsink.Middleware is in this chain.
	w["server.address"] = "127.0.0.1"
	w["server.port"] = int64(r.ServerPort)
	if r.Outcome.OK {
		// A failed call's model is the one asked for: no response model.
		w["llmhistory.outcome.value_class"] = r.Outcome.ValueClass
		w["gen_ai.response.model"] = r.Model
		w["gen_ai.response.id"] = r.Outcome.ResponseID
		w["gen_ai.response.finish_reasons"] = []any{r.Outcome.FinishReason}
		w["gen_ai.usage.input_tokens"] = int64(r.Usage.InputTokens)
		w["gen_ai.usage.output_tokens"] = int64(r.Usage.OutputTokens)
		if r.Usage.CachedTokens != 0 {
			w["gen_ai.usage.cache_read.input_tokens"] = int64(r.Usage.CachedTokens)
		}
		if r.Usage.ReasoningTokens != 0 {
			w["gen_ai.usage.reasoning.output_tokens"] = int64(r.Usage.ReasoningTokens)
		}
	} else {
		w["error.type"] = r.Outcome.ErrorType
	}
	if r.Cost != nil {
		w["llmhistory.cost.usd"] = r.Cost.USD
		w["llmhistory.cost.table"] = r.Cost.Table
	}
	if r.Attempts > 1 {
		w["http.request.resend_count"] = int64(r.Attempts - 1)
	}
	if r.UserID != "" {
		w["user.id"] = r.UserID
	}
	if len(r.Tags) > 0 {
		tags := []any{}
		for _, t := range r.Tags {
			tags = append(tags, t)
		}
		w["llmhistory.tags"] = tags
	}
	for k, v := range r.Metadata {
		w["llmhistory.metadata."+k] = v
	}
	if r.TimeToFirstChunkMS > 0 {
		w["gen_ai.request.stream"] = true
		w["gen_ai.response.time_to_first_chunk"] = r.TimeToFirstChunkMS / 1000
	}
	return w
}

// The whole path, over OTLP/HTTP and OTLP/gRPC, from the SDK's exporters
// to the Collector's receiver: a nested conversation through a real
// recorder becomes one trace whose tree is the conversation's, with every
// attribute, a retried call as one span, a stream's first chunk, an
// error, the metrics, no secret and no content.
func TestCollector(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			t.Setenv(otelsink.EnvCaptureContent, "") // content off: the default
			c := otlptest.Start(t, nil)
			se, me := otelsinktest.Exporters(t, c.GRPC, c.HTTP, protocol)
			sink, err := otelsink.New(otelsink.Options{
				SpanExporter: se,
				MetricReader: sdkmetric.NewPeriodicReader(me),
				Resource:     resource.NewSchemaless(semconv.ServiceName("checkout")),
			})
			require.NoError(t, err)
			a := otelsinktest.NewApp(t, sink)
			trace := "conversation-" + protocol
			ctx := middleware.WithTrace(context.Background(), trace)
			ctx = middleware.WithUser(middleware.WithTags(middleware.WithMetadata(ctx, "tenant", "acme"), "checkout", "beta"), "user-42")
			root, child, grandchild, retried, failed := a.Conversation(t, ctx)
			records := a.Rec.History().Trace(trace)
			require.Len(t, records, 5)
			require.NoError(t, a.Rec.Close()) // flushes and closes the sink

			otlpfake.WaitFor(t, "five spans", func() bool { return c.SpanCount() >= 5 })
			spans := c.Spans(t)
			require.Len(t, spans, 5)
			st := sink.Stats()
			assert.Equal(t, otelsink.Stats{Appended: 5, Exported: 5}, st)

			// Every attribute, as the record says: the attribution too.
			for _, r := range records {
				require.Equal(t, "user-42", r.UserID)
				assert.Equal(t, "user-42", otlpfake.Attrs(spans[r.CallID].GetAttributes())["user.id"])
				sp := spans[r.CallID]
				assert.Equal(t, wantAttrs(r), otlpfake.Attrs(sp.GetAttributes()), "call %s", r.CallID)
				start, err := record.ParseTime(r.Timestamp)
				require.NoError(t, err)
				assert.Equal(t, start, otlpfake.Time(sp.GetStartTimeUnixNano()), "call %s", r.CallID)
				assert.InDelta(t, r.DurationMS, float64(sp.GetEndTimeUnixNano()-sp.GetStartTimeUnixNano())/1e6, 0.001)
				assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, sp.GetKind())
				assert.Equal(t, "chat gpt-4o-mini", sp.GetName())
			}

			// The tree: one trace, parents as the conversation nested.
			traceID := spans[root].GetTraceId()
			for id, sp := range spans {
				assert.Equal(t, traceID, sp.GetTraceId(), "call %s is in another trace", id)
			}
			assert.Empty(t, spans[root].GetParentSpanId(), "the root has no parent")
			for _, id := range []string{child, retried, failed} {
				assert.Equal(t, spans[root].GetSpanId(), spans[id].GetParentSpanId(), "call %s", id)
			}
			assert.Equal(t, spans[child].GetSpanId(), spans[grandchild].GetParentSpanId())

			// A retried call is one span that says it was resent.
			assert.Equal(t, int64(1), otlpfake.Attrs(spans[retried].GetAttributes())["http.request.resend_count"])
			assert.Equal(t, tracepb.Status_STATUS_CODE_UNSET, spans[retried].GetStatus().GetCode())

			// The stream has its first chunk's time.
			ttfc, ok := otlpfake.Attrs(spans[grandchild].GetAttributes())["gen_ai.response.time_to_first_chunk"].(float64)
			require.True(t, ok)
			assert.Greater(t, ttfc, 0.0)

			// The error: status, type, the message without the key.
			st2 := spans[failed].GetStatus()
			assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, st2.GetCode())
			assert.Contains(t, st2.GetMessage(), "Incorrect API key provided")
			assert.Contains(t, st2.GetMessage(), "[REDACTED]")

			// The resource is the service's.
			res := c.Traces()[0].GetResourceSpans()[0].GetResource()
			assert.Equal(t, "checkout", otlpfake.Attrs(res.GetAttributes())["service.name"])

			// The metrics: every call's duration, tokens by type, the stream's first chunk.
			otlpfake.WaitFor(t, "the metrics", func() bool { return len(c.Metrics()) > 0 })
			checkMetrics(t, c, records)

			// No secret anywhere, and no content by default.
			wire := c.Wire(t)
			assert.NotContains(t, wire, otelsinktest.FakeKey)
			assert.NotContains(t, wire, otelsinktest.FakeKey[8:], "a piece of the key")
			assert.NotContains(t, wire, "Secret plan")
			assert.NotContains(t, wire, "Be brief")
			assert.NotContains(t, wire, "Answered.")
			assert.NotContains(t, wire, "gen_ai.input.messages")
		})
	}
}

// checkMetrics reads the last metrics export (cumulative, so complete).
func checkMetrics(t *testing.T, c *otlptest.Collector, records []record.Record) {
	t.Helper()
	all := c.Metrics()
	md := all[len(all)-1]
	got := map[string]*metricpb.Metric{}
	for _, rm := range md.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				got[m.GetName()] = m
			}
		}
	}
	require.Contains(t, got, "gen_ai.client.operation.duration")
	require.Contains(t, got, "gen_ai.client.token.usage")
	require.Contains(t, got, "gen_ai.client.operation.time_to_first_chunk")

	var calls, errors uint64
	for _, dp := range got["gen_ai.client.operation.duration"].GetHistogram().GetDataPoints() {
		calls += dp.GetCount()
		attrs := otlpfake.Attrs(dp.GetAttributes())
		if v, ok := attrs["error.type"]; ok {
			assert.Equal(t, "auth", v)
			errors += dp.GetCount()
		}
		assert.Equal(t, "chat", attrs["gen_ai.operation.name"])
	}
	assert.Equal(t, uint64(len(records)), calls)
	assert.Equal(t, uint64(1), errors)
	assert.Equal(t, "s", got["gen_ai.client.operation.duration"].GetUnit())

	var wantIn, wantOut int64
	for _, r := range records {
		if r.Usage != nil {
			wantIn += int64(r.Usage.InputTokens)
			wantOut += int64(r.Usage.OutputTokens)
		}
	}
	sums := map[string]float64{}
	for _, dp := range got["gen_ai.client.token.usage"].GetHistogram().GetDataPoints() {
		typ, _ := otlpfake.Attrs(dp.GetAttributes())["gen_ai.token.type"].(string)
		sums[typ] += dp.GetSum()
	}
	assert.Equal(t, map[string]float64{"input": float64(wantIn), "output": float64(wantOut)}, sums)

	var streams uint64
	for _, dp := range got["gen_ai.client.operation.time_to_first_chunk"].GetHistogram().GetDataPoints() {
		streams += dp.GetCount()
	}
	assert.Equal(t, uint64(1), streams)
}

// With content asked for (here by the environment variable), messages,
// system instructions and outputs arrive, redacted.
func TestCollectorContent(t *testing.T) {
	t.Setenv(otelsink.EnvCaptureContent, "true")
	c := otlptest.Start(t, nil)
	se, _ := otelsinktest.Exporters(t, c.GRPC, c.HTTP, "http")
	sink, err := otelsink.New(otelsink.Options{SpanExporter: se})
	require.NoError(t, err)
	a := otelsinktest.NewApp(t, sink)
	id := middleware.NewCallID()
	a.Call(t, middleware.WithTrace(context.Background(), "t"), id, "", false)
	require.NoError(t, a.Rec.Close())
	otlpfake.WaitFor(t, "the span", func() bool { return c.SpanCount() == 1 })
	attrs := otlpfake.Attrs(c.Spans(t)[id].GetAttributes())
	// The system message the conversation begins with is the system
	// instructions (the message model's one reading of a system prompt).
	assert.JSONEq(t, `[{"type":"text","content":"Be brief."}]`, attrs["gen_ai.system_instructions"].(string))
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Secret plan `+id+`; my key is [REDACTED]"}]}]`,
		attrs["gen_ai.input.messages"].(string))
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"Answered."}],"finish_reason":"stop"}]`,
		attrs["gen_ai.output.messages"].(string))
	assert.NotContains(t, c.Wire(t), otelsinktest.FakeKey)
}

// Records read from a file may come from anywhere: the sink redacts the
// error message and the content again, whatever the record says.
func TestCollectorRedactsForeignRecords(t *testing.T) {
	c := otlptest.Start(t, nil)
	se, _ := otelsinktest.Exporters(t, c.GRPC, c.HTTP, "grpc")
	sink, err := otelsink.New(otelsink.Options{SpanExporter: se, Content: otelsink.ContentOn})
	require.NoError(t, err)
	r := record.Record{
		CallID: "foreign", Timestamp: "2026-11-21T09:30:00Z", Speaker: "user", MethodName: "openai.chat.completions.create",
		Args:    json.RawMessage(`[{"role":"user","content":"key ` + otelsinktest.FakeKey + `"}]`),
		Kwargs:  json.RawMessage(`{"model":"gpt-4o-mini"}`),
		Outcome: record.Failure(record.ErrorAuth), ErrorMessage: "bad key " + otelsinktest.FakeKey, Output: answer("Bearer " + otelsinktest.FakeKey),
	}
	require.NoError(t, sink.Append(context.Background(), r))
	require.NoError(t, sink.Close())
	otlpfake.WaitFor(t, "the span", func() bool { return c.SpanCount() == 1 })
	wire := c.Wire(t)
	assert.NotContains(t, wire, otelsinktest.FakeKey)
	assert.Contains(t, wire, "[REDACTED]")
}
