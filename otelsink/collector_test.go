package otelsink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmhistory/llmhistory/internal/otlptest"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// fakeKey is shaped like an OpenAI key, made at run time so that no
// key-shaped string is in the source.
var fakeKey = "sk-proj-" + strings.Repeat("Fake0Key9", 5)

// provider is a fake OpenAI chat completions endpoint. X-Scenario says
// what it does: "retry" answers 429 to the first attempt of a call,
// "auth" is a 401 that echoes the caller's key, as some gateways do;
// "stream": true in the body gets an event stream.
func provider(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.Header.Get("X-Scenario") {
		case "retry":
			mu.Lock()
			first := !seen[r.Header.Get("X-Call")]
			seen[r.Header.Get("X-Call")] = true
			mu.Unlock()
			if first {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After-Ms", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
				return
			}
		case "auth":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s.","type":"invalid_request_error","code":"invalid_api_key"}}`, key)
			return
		}
		if bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, tok := range []string{"Str", "eam", "ed."} {
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-s\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, `data: {"id":"chatcmpl-s","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
			io.WriteString(w, `data: {"id":"chatcmpl-s","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-`+r.Header.Get("X-Call")+`","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"Answered."},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// app is an application whose client records through a recorder that
// feeds an otelsink.Sink.
type app struct {
	rec    *middleware.Recorder
	client *http.Client
	url    string
}

func newApp(t *testing.T, sink record.Sink) *app {
	t.Helper()
	srv := provider(t)
	rec := middleware.NewRecorder(middleware.WithSink(sink), middleware.WithOutput(),
		middleware.WithLogger(slog.New(slog.DiscardHandler))) // the tests read Stats, not the warnings
	base := srv.Client().Transport
	return &app{
		rec: rec,
		client: &http.Client{Transport: middleware.Chain(base, rec.Middleware(),
			middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}))},
		url: srv.URL + "/v1/chat/completions",
	}
}

// call makes one chat completion with a prompt that holds the key too,
// as a careless user might, and reads the answer to its end.
func (a *app) call(t *testing.T, ctx context.Context, callID, scenario string, stream bool) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":64,"stream":%t,"messages":[`+
		`{"role":"system","content":"Be brief."},{"role":"user","content":"Secret plan %s; my key is %s"}]}`, stream, callID, fakeKey)
	req, err := http.NewRequestWithContext(middleware.WithCallID(ctx, callID), http.MethodPost, a.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+fakeKey)
	req.Header.Set("X-Scenario", scenario)
	req.Header.Set("X-Call", callID)
	resp, err := a.client.Do(req)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// conversation makes a nested conversation: a root call, a child with a
// streamed grandchild, a child that is retried once, and a child that
// fails. It returns the call IDs, root first.
func (a *app) conversation(t *testing.T, ctx context.Context) (root, child, grandchild, retried, failed string) {
	root, child, grandchild, retried, failed = middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID()
	a.call(t, ctx, root, "", false)
	under := middleware.WithParent(ctx, root)
	a.call(t, under, child, "", false)
	a.call(t, middleware.WithParent(under, child), grandchild, "", true)
	a.call(t, under, retried, "retry", false)
	a.call(t, under, failed, "auth", false)
	return
}

// exporters are the SDK's own OTLP exporters for one protocol.
func exporters(t testing.TB, c *otlptest.Collector, protocol string) (sdktrace.SpanExporter, sdkmetric.Exporter) {
	t.Helper()
	ctx := context.Background()
	switch protocol {
	case "grpc":
		se, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(c.GRPC), otlptracegrpc.WithInsecure())
		require.NoError(t, err)
		me, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(c.GRPC), otlpmetricgrpc.WithInsecure())
		require.NoError(t, err)
		return se, me
	default:
		se, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(c.HTTP), otlptracehttp.WithInsecure())
		require.NoError(t, err)
		me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(c.HTTP), otlpmetrichttp.WithInsecure())
		require.NoError(t, err)
		return se, me
	}
}

// wantAttrs is what the conventions and this package's doc say a
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
			se, me := exporters(t, c, protocol)
			sink, err := otelsink.New(otelsink.Options{
				SpanExporter: se,
				MetricReader: sdkmetric.NewPeriodicReader(me),
				Resource:     resource.NewSchemaless(semconv.ServiceName("checkout")),
			})
			require.NoError(t, err)
			a := newApp(t, sink)
			trace := "conversation-" + protocol
			ctx := middleware.WithTrace(context.Background(), trace)
			ctx = middleware.WithUser(middleware.WithTags(middleware.WithMetadata(ctx, "tenant", "acme"), "checkout", "beta"), "user-42")
			root, child, grandchild, retried, failed := a.conversation(t, ctx)
			records := a.rec.History().Trace(trace)
			require.Len(t, records, 5)
			require.NoError(t, a.rec.Close()) // flushes and closes the sink

			otlptest.WaitFor(t, "five spans", func() bool { return c.Traces.SpanCount() >= 5 })
			spans := c.Spans(t)
			require.Len(t, spans, 5)
			st := sink.Stats()
			assert.Equal(t, otelsink.Stats{Appended: 5, Exported: 5}, st)

			// Every attribute, as the record says: the attribution too.
			for _, r := range records {
				require.Equal(t, "user-42", r.UserID)
				assert.Equal(t, "user-42", spans[r.CallID].Attributes().AsRaw()["user.id"])
				sp := spans[r.CallID]
				assert.Equal(t, wantAttrs(r), sp.Attributes().AsRaw(), "call %s", r.CallID)
				start, err := record.ParseTime(r.Timestamp)
				require.NoError(t, err)
				assert.Equal(t, start, sp.StartTimestamp().AsTime(), "call %s", r.CallID)
				assert.InDelta(t, r.DurationMS, float64(sp.EndTimestamp()-sp.StartTimestamp())/1e6, 0.001)
				assert.Equal(t, ptrace.SpanKindClient, sp.Kind())
				assert.Equal(t, "chat gpt-4o-mini", sp.Name())
			}

			// The tree: one trace, parents as the conversation nested.
			traceID := spans[root].TraceID()
			for id, sp := range spans {
				assert.Equal(t, traceID, sp.TraceID(), "call %s is in another trace", id)
			}
			assert.True(t, spans[root].ParentSpanID().IsEmpty(), "the root has no parent")
			for _, id := range []string{child, retried, failed} {
				assert.Equal(t, spans[root].SpanID(), spans[id].ParentSpanID(), "call %s", id)
			}
			assert.Equal(t, spans[child].SpanID(), spans[grandchild].ParentSpanID())

			// A retried call is one span that says it was resent.
			resend, _ := spans[retried].Attributes().Get("http.request.resend_count")
			assert.Equal(t, int64(1), resend.Int())
			assert.Equal(t, ptrace.StatusCodeUnset, spans[retried].Status().Code())

			// The stream has its first chunk's time.
			ttfc, ok := spans[grandchild].Attributes().Get("gen_ai.response.time_to_first_chunk")
			require.True(t, ok)
			assert.Greater(t, ttfc.Double(), 0.0)

			// The error: status, type, the message without the key.
			st2 := spans[failed].Status()
			assert.Equal(t, ptrace.StatusCodeError, st2.Code())
			assert.Contains(t, st2.Message(), "Incorrect API key provided")
			assert.Contains(t, st2.Message(), "[REDACTED]")

			// The resource is the service's.
			res := c.Traces.AllTraces()[0].ResourceSpans().At(0).Resource()
			name, _ := res.Attributes().Get("service.name")
			assert.Equal(t, "checkout", name.Str())

			// The metrics: every call's duration, tokens by type, the stream's first chunk.
			otlptest.WaitFor(t, "the metrics", func() bool { return len(c.Metrics.AllMetrics()) > 0 })
			checkMetrics(t, c, records)

			// No secret anywhere, and no content by default.
			wire := c.Wire(t)
			assert.NotContains(t, wire, fakeKey)
			assert.NotContains(t, wire, fakeKey[8:], "a piece of the key")
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
	all := c.Metrics.AllMetrics()
	md := all[len(all)-1]
	got := map[string]pmetric.Metric{}
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				got[m.Name()] = m
			}
		}
	}
	require.Contains(t, got, "gen_ai.client.operation.duration")
	require.Contains(t, got, "gen_ai.client.token.usage")
	require.Contains(t, got, "gen_ai.client.operation.time_to_first_chunk")

	var calls, errors uint64
	for _, dp := range got["gen_ai.client.operation.duration"].Histogram().DataPoints().All() {
		calls += dp.Count()
		if v, ok := dp.Attributes().Get("error.type"); ok {
			assert.Equal(t, "auth", v.Str())
			errors += dp.Count()
		}
		op, _ := dp.Attributes().Get("gen_ai.operation.name")
		assert.Equal(t, "chat", op.Str())
	}
	assert.Equal(t, uint64(len(records)), calls)
	assert.Equal(t, uint64(1), errors)
	assert.Equal(t, "s", got["gen_ai.client.operation.duration"].Unit())

	var wantIn, wantOut int64
	for _, r := range records {
		if r.Usage != nil {
			wantIn += int64(r.Usage.InputTokens)
			wantOut += int64(r.Usage.OutputTokens)
		}
	}
	sums := map[string]float64{}
	for _, dp := range got["gen_ai.client.token.usage"].Histogram().DataPoints().All() {
		typ, _ := dp.Attributes().Get("gen_ai.token.type")
		sums[typ.Str()] += dp.Sum()
	}
	assert.Equal(t, map[string]float64{"input": float64(wantIn), "output": float64(wantOut)}, sums)

	var streams uint64
	for _, dp := range got["gen_ai.client.operation.time_to_first_chunk"].Histogram().DataPoints().All() {
		streams += dp.Count()
	}
	assert.Equal(t, uint64(1), streams)
}

// With content asked for (here by the environment variable), messages,
// system instructions and outputs arrive, redacted.
func TestCollectorContent(t *testing.T) {
	t.Setenv(otelsink.EnvCaptureContent, "true")
	c := otlptest.Start(t, nil)
	se, _ := exporters(t, c, "http")
	sink, err := otelsink.New(otelsink.Options{SpanExporter: se})
	require.NoError(t, err)
	a := newApp(t, sink)
	id := middleware.NewCallID()
	a.call(t, middleware.WithTrace(context.Background(), "t"), id, "", false)
	require.NoError(t, a.rec.Close())
	otlptest.WaitFor(t, "the span", func() bool { return c.Traces.SpanCount() == 1 })
	attrs := c.Spans(t)[id].Attributes().AsRaw()
	assert.JSONEq(t, `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},`+
		`{"role":"user","parts":[{"type":"text","content":"Secret plan `+id+`; my key is [REDACTED]"}]}]`,
		attrs["gen_ai.input.messages"].(string))
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"Answered."}],"finish_reason":"stop"}]`,
		attrs["gen_ai.output.messages"].(string))
	assert.NotContains(t, c.Wire(t), fakeKey)
}

// Records read from a file may come from anywhere: the sink redacts the
// error message and the content again, whatever the record says.
func TestCollectorRedactsForeignRecords(t *testing.T) {
	c := otlptest.Start(t, nil)
	se, _ := exporters(t, c, "grpc")
	sink, err := otelsink.New(otelsink.Options{SpanExporter: se, Content: otelsink.ContentOn})
	require.NoError(t, err)
	r := record.Record{
		CallID: "foreign", Timestamp: "2026-11-21T09:30:00Z", Speaker: "user", MethodName: "openai.chat.completions.create",
		Args:    json.RawMessage(`[{"role":"user","content":"key ` + fakeKey + `"}]`),
		Kwargs:  json.RawMessage(`{"model":"gpt-4o-mini"}`),
		Outcome: record.Failure(record.ErrorAuth), ErrorMessage: "bad key " + fakeKey, Output: "Bearer " + fakeKey,
	}
	require.NoError(t, sink.Append(context.Background(), r))
	require.NoError(t, sink.Close())
	otlptest.WaitFor(t, "the span", func() bool { return c.Traces.SpanCount() == 1 })
	wire := c.Wire(t)
	assert.NotContains(t, wire, fakeKey)
	assert.Contains(t, wire, "[REDACTED]")
}
