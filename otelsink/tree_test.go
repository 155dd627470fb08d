package otelsink_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// cannedServer answers every POST with the body of a captured payload
// of the repository's shared corpus, named under testdata/providers
// ("openai/openai_chat_response.json"), whatever the path; paths it does
// not know get a generic JSON answer.
func cannedServer(t *testing.T, bodies map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		for suffix, file := range bodies {
			if strings.HasSuffix(r.URL.Path, suffix) {
				b, err := os.ReadFile(filepath.Join("..", "testdata", "providers", filepath.FromSlash(file)))
				if err != nil {
					t.Error(err)
				}
				w.Write(b)
				return
			}
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// sdkApp is a client whose calls a real recorder records into an
// otelsink.Sink over the SDK's in-memory exporter and a manual metric
// reader, with otelsink.Middleware before the recorder when asked.
type sdkApp struct {
	rec    *middleware.Recorder
	sink   *otelsink.Sink
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	client *http.Client
}

func newSDKApp(t *testing.T, opts otelsink.Options, withMiddleware bool, recOpts ...middleware.Option) *sdkApp {
	t.Helper()
	a := &sdkApp{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	opts.SpanExporter, opts.MetricReader = a.spans, a.reader
	var err error
	a.sink, err = otelsink.New(opts)
	require.NoError(t, err)
	a.rec = middleware.NewRecorder(append([]middleware.Option{middleware.WithSink(a.sink),
		middleware.WithLogger(slog.New(slog.DiscardHandler))}, recOpts...)...)
	mws := []middleware.Middleware{a.rec.Middleware()}
	if withMiddleware {
		mws = append([]middleware.Middleware{otelsink.Middleware()}, mws...)
	}
	a.client = &http.Client{Transport: middleware.Chain(http.DefaultTransport, mws...)}
	t.Cleanup(func() { a.rec.Close() })
	return a
}

// post makes one call and reads its answer whole.
func (a *sdkApp) post(t *testing.T, ctx context.Context, url, body string, header ...string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := a.client.Do(req)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// exported flushes the recorder (and so the sink) and returns the spans
// exported, by call id.
func (a *sdkApp) exported(t *testing.T) map[string]tracetest.SpanStub {
	t.Helper()
	require.NoError(t, a.rec.Flush())
	out := map[string]tracetest.SpanStub{}
	for _, sp := range a.spans.GetSpans() {
		out[attrsOf(sp)["llmhistory.call_id"].(string)] = sp
	}
	return out
}

const chatBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`

// 4. Under an unsampled caller span, nothing of the call is exported: a
// span under a parent that never is would be an orphan in Jaeger and
// Tempo. The metrics still count the calls. Under a sampled one, all is.
func TestUnsampledCallerExportsNoSpan(t *testing.T) {
	srv := cannedServer(t, map[string]string{"/chat/completions": "openai/openai_chat_response.json"})
	for _, sampled := range []bool{false, true} {
		t.Run("sampled="+strconv.FormatBool(sampled), func(t *testing.T) {
			a := newSDKApp(t, otelsink.Options{}, false)
			appSampler := sdktrace.NeverSample()
			if sampled {
				appSampler = sdktrace.AlwaysSample()
			}
			app := sdktrace.NewTracerProvider(sdktrace.WithSampler(appSampler))
			ctx, handler := app.Tracer("app").Start(context.Background(), "POST /ask")
			root := middleware.NewCallID()
			a.post(t, middleware.WithCallID(ctx, root), srv.URL+"/v1/chat/completions", chatBody)
			a.post(t, middleware.WithParent(ctx, root), srv.URL+"/v1/chat/completions", chatBody)
			handler.End()

			spans := a.exported(t)
			st := a.sink.Stats()
			if !sampled {
				assert.Empty(t, spans, "spans exported under an unsampled caller")
				assert.Equal(t, otelsink.Stats{Appended: 2, Unsampled: 2}, st)
			} else {
				assert.Len(t, spans, 2)
				assert.Equal(t, otelsink.Stats{Appended: 2, Exported: 2}, st)
			}
			var rm metricdata.ResourceMetrics
			require.NoError(t, a.reader.Collect(context.Background(), &rm))
			for _, m := range rm.ScopeMetrics[0].Metrics {
				if m.Name == "gen_ai.client.operation.duration" {
					assert.Equal(t, uint64(2), m.Data.(metricdata.Histogram[float64]).DataPoints[0].Count, "metrics count every call")
				}
			}
		})
	}
}

// 4. Without a caller's span, the sampler decides, seeing no parent: a
// ratio sampler keeps or drops each conversation whole (its nested calls
// with it), and OTEL_TRACES_SAMPLER chooses it when Options.Sampler is
// nil.
func TestSamplerDecidesWholeConversations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     string
		sampler sdktrace.Sampler
	}{
		{"option", "", sdktrace.TraceIDRatioBased(0.5)},
		{"env", "parentbased_traceidratio", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(otelsink.EnvTracesSampler, tc.env)
			t.Setenv(otelsink.EnvTracesSamplerArg, "0.5")
			exp := tracetest.NewInMemoryExporter()
			sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, Sampler: tc.sampler})
			require.NoError(t, err)
			const conversations = 200
			for i := range conversations {
				conv := "conversation-" + strconv.Itoa(i)
				root := rec(conv + "-root")
				root.TraceID = conv
				child := root
				child.CallID, child.ParentCallID = conv+"-child", root.CallID
				grandchild := root
				grandchild.CallID, grandchild.ParentCallID = conv+"-grandchild", child.CallID
				for _, r := range []record.Record{grandchild, child, root} {
					require.NoError(t, sink.Append(context.Background(), r))
				}
			}
			require.NoError(t, sink.Flush())
			perTrace := map[trace.TraceID]int{}
			for _, sp := range exp.GetSpans() {
				perTrace[sp.SpanContext.TraceID()]++
			}
			for id, n := range perTrace {
				assert.Equal(t, 3, n, "trace %s was sampled in part", id)
			}
			kept := len(perTrace)
			assert.Greater(t, kept, conversations/4, "a ratio of 0.5 keeps about half")
			assert.Less(t, kept, conversations*3/4, "a ratio of 0.5 keeps about half")
			st := sink.Stats()
			assert.Equal(t, uint64(3*kept), st.Exported)
			assert.Equal(t, uint64(3*(conversations-kept)), st.Unsampled)
			require.NoError(t, sink.Close())
		})
	}

	t.Setenv(otelsink.EnvTracesSampler, "always_off")
	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp})
	require.NoError(t, err)
	require.NoError(t, sink.Append(context.Background(), rec("off")))
	require.NoError(t, sink.Flush())
	assert.Empty(t, exp.GetSpans())
	require.NoError(t, sink.Close())

	for env, want := range map[string]string{
		"jaeger_remote": `OTEL_TRACES_SAMPLER="jaeger_remote"`,
		"traceidratio":  `OTEL_TRACES_SAMPLER_ARG="2"`,
	} {
		t.Setenv(otelsink.EnvTracesSampler, env)
		t.Setenv(otelsink.EnvTracesSamplerArg, "2")
		_, err := otelsink.New(otelsink.Options{SpanExporter: tracetest.NewInMemoryExporter()})
		assert.ErrorContains(t, err, want)
	}
}

// recordOnly is a sampler that records spans without sampling them.
type recordOnly struct{}

func (recordOnly) ShouldSample(sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}
func (recordOnly) Description() string { return "RecordOnly" }

// 4. A span a sampler records but does not sample is not exported, and
// is counted as left out.
func TestRecordOnlyIsNotExported(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, Sampler: recordOnly{}})
	require.NoError(t, err)
	require.NoError(t, sink.Append(context.Background(), rec("recorded")))
	require.NoError(t, sink.Flush())
	assert.Empty(t, exp.GetSpans())
	assert.Equal(t, otelsink.Stats{Appended: 1, Unsampled: 1}, sink.Stats())
	require.NoError(t, sink.Close())
}

// 4 and 5. A request that carries only a W3C traceparent header (a
// gateway passing its caller's on, with no span in its context) keeps
// the header's trace and parent span through otelsink.Middleware, and
// its sampling flag: 01 is exported, 00 is not.
func TestTraceparentParent(t *testing.T) {
	srv := cannedServer(t, map[string]string{"/chat/completions": "openai/openai_chat_response.json"})
	a := newSDKApp(t, otelsink.Options{}, true)
	const traceHex, parentHex = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	sampled, unsampled, nested := middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID()
	ctx := context.Background()
	a.post(t, middleware.WithCallID(ctx, sampled), srv.URL+"/v1/chat/completions", chatBody,
		"Traceparent", "00-"+traceHex+"-"+parentHex+"-01", "Tracestate", "vendor=x")
	a.post(t, middleware.WithCallID(middleware.WithParent(ctx, sampled), nested), srv.URL+"/v1/chat/completions", chatBody,
		"Traceparent", "00-"+traceHex+"-"+parentHex+"-01")
	a.post(t, middleware.WithCallID(ctx, unsampled), srv.URL+"/v1/chat/completions", chatBody,
		"Traceparent", "00-"+strings.Repeat("ab", 16)+"-"+parentHex+"-00")

	spans := a.exported(t)
	require.Len(t, spans, 2, "the unsampled caller's call is not exported")
	sp := spans[sampled]
	assert.Equal(t, traceHex, sp.SpanContext.TraceID().String())
	assert.Equal(t, parentHex, sp.Parent.SpanID().String(), "the header's span is the parent")
	assert.Equal(t, "vendor=x", sp.SpanContext.TraceState().String())
	assert.Equal(t, traceHex, spans[nested].SpanContext.TraceID().String())
	assert.Equal(t, sp.SpanContext.SpanID(), spans[nested].Parent.SpanID(), "a nested call is under its parent call")
	assert.Equal(t, uint64(1), a.sink.Stats().Unsampled)
}

// 5. Without any caller's span, a conversation is one trace: its
// top-level calls are the roots, each nested call is the child of its
// parent call. A chain of calls without a trace_id is one trace too,
// its grandchildren included, which used to land in a trace of their
// own under a parent that was not in it.
func TestConversationTree(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp})
	require.NoError(t, err)
	defer sink.Close()
	var recs []record.Record
	for _, trace := range []string{"conversation-9", ""} {
		first := rec(trace + "first")
		first.TraceID = trace
		second := first
		second.CallID = trace + "second"
		child := first
		child.CallID, child.ParentCallID = trace+"child", first.CallID
		grandchild := first
		grandchild.CallID, grandchild.ParentCallID = trace+"grandchild", child.CallID
		recs = append(recs, first, child, grandchild, second) // in the order calls end
	}
	for _, r := range recs {
		require.NoError(t, sink.Append(context.Background(), r))
	}
	require.NoError(t, sink.Flush())
	byID := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		byID[attrsOf(sp)["llmhistory.call_id"].(string)] = sp
	}
	conv := byID["conversation-9first"].SpanContext.TraceID()
	for _, id := range []string{"second", "child", "grandchild"} {
		assert.Equal(t, conv, byID["conversation-9"+id].SpanContext.TraceID(), "%s is in the conversation's trace", id)
	}
	assert.False(t, byID["conversation-9second"].Parent.IsValid(), "a top-level call is a root")
	assert.Equal(t, byID["conversation-9child"].SpanContext.SpanID(), byID["conversation-9grandchild"].Parent.SpanID())

	untraced := byID["first"].SpanContext.TraceID()
	assert.NotEqual(t, conv, untraced)
	assert.Equal(t, untraced, byID["child"].SpanContext.TraceID())
	assert.Equal(t, untraced, byID["grandchild"].SpanContext.TraceID(), "a grandchild is in its chain's trace")
	assert.Equal(t, byID["child"].SpanContext.SpanID(), byID["grandchild"].Parent.SpanID())
	assert.NotEqual(t, untraced, byID["second"].SpanContext.TraceID(), "another untraced top-level call is a trace of its own")
}

// 6. With otelsink.Middleware before the recorder, spans and metrics
// have server.address and server.port, from the request's URL.
// Options.ServerAddress wins over it (the server behind a proxy) and
// gives a port too: its own, its URL scheme's, or 443.
func TestServerAddressAndPort(t *testing.T) {
	srv := cannedServer(t, map[string]string{"/chat/completions": "openai/openai_chat_response.json"})
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)

	a := newSDKApp(t, otelsink.Options{}, true)
	id := middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/chat/completions", chatBody)
	attrs := attrsOf(a.exported(t)[id])
	assert.Equal(t, "127.0.0.1", attrs["server.address"])
	assert.Equal(t, int64(port), attrs["server.port"])
	var rm metricdata.ResourceMetrics
	require.NoError(t, a.reader.Collect(context.Background(), &rm))
	for _, m := range rm.ScopeMetrics[0].Metrics {
		for _, set := range dataPointSets(m) {
			v, _ := set.Value("server.address")
			assert.Equal(t, "127.0.0.1", v.AsString(), m.Name)
			p, _ := set.Value("server.port")
			assert.Equal(t, int64(port), p.AsInt64(), m.Name)
		}
	}

	for given, want := range map[string][2]any{
		"api.openai.com":          {"api.openai.com", int64(443)},
		"gateway.internal:8443":   {"gateway.internal", int64(8443)},
		"http://localhost/v1":     {"localhost", int64(80)},
		"https://[::1]:9443/v1":   {"::1", int64(9443)},
		"my-deploy.openai.azure.": {"my-deploy.openai.azure.", int64(443)},
	} {
		a := newSDKApp(t, otelsink.Options{ServerAddress: func(record.Record) string { return given }}, true)
		id := middleware.NewCallID()
		a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/chat/completions", chatBody)
		attrs := attrsOf(a.exported(t)[id])
		assert.Equal(t, want[0], attrs["server.address"], given)
		assert.Equal(t, want[1], attrs["server.port"], given)
	}
}

// dataPointSets returns the attribute sets of a histogram's points.
func dataPointSets(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	}
	return out
}

// 8. An endpoint no provider recognizes still has the required
// gen_ai.provider.name, and no URL path reaches a span name or a metric
// attribute: those must stay few in values.
func TestUnknownEndpointIsBounded(t *testing.T) {
	srv := cannedServer(t, nil)
	a := newSDKApp(t, otelsink.Options{}, true)
	ids := []string{middleware.NewCallID(), middleware.NewCallID()}
	for i, id := range ids {
		a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/unknown/thing/"+strconv.Itoa(i), `{"query":"x"}`)
	}
	spans := a.exported(t)
	require.Len(t, spans, 2)
	for _, id := range ids {
		sp := spans[id]
		assert.Equal(t, "http.POST", sp.Name)
		attrs := attrsOf(sp)
		assert.Equal(t, "http.POST", attrs["gen_ai.operation.name"])
		assert.Equal(t, otelsink.ProviderOther, attrs["gen_ai.provider.name"])
		assert.Contains(t, attrs["llmhistory.method_name"], "/v1/unknown/thing/", "the path stays on the span, as ours")
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, a.reader.Collect(context.Background(), &rm))
	for _, m := range rm.ScopeMetrics[0].Metrics {
		sets := dataPointSets(m)
		assert.Len(t, sets, 1, "%s: the two paths make one series", m.Name)
		for _, set := range sets {
			for _, kv := range set.ToSlice() {
				assert.NotContains(t, kv.Value.String(), "/v1/", "%s: %s", m.Name, kv.Key)
			}
			v, _ := set.Value("gen_ai.provider.name")
			assert.Equal(t, otelsink.ProviderOther, v.AsString())
		}
	}
}

// 7. Each provider's finish reason, as the recorder reads it from a real
// response, becomes the conventions' value (stop, length,
// content_filter, tool_call, error) in gen_ai.response.finish_reasons and
// in the output message; llmhistory.outcome.finish_reason keeps the
// provider's own.
func TestFinishReasonsOnTheSchema(t *testing.T) {
	t.Setenv(otelsink.EnvCaptureContent, "SPAN_ONLY")
	const (
		anthropicBody = `{"model":"claude-haiku-4-5","max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`
		geminiBody    = `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`
		geminiPath    = "/v1beta/models/gemini-2.5-flash:generateContent"
	)
	for _, tc := range []struct {
		file, path, body string
		want, raw        string
		output           bool // the response has text or tool calls, which WithOutput keeps
	}{
		{"openai/openai_chat_response.json", "/v1/chat/completions", chatBody, "stop", "", true},
		{"openai/openai_chat_response_tool_calls.json", "/v1/chat/completions", chatBody, "tool_call", "tool_calls", true},
		{"openai/openai_chat_response_function_call_legacy.json", "/v1/chat/completions", chatBody, "tool_call", "function_call", true},
		{"anthropic/message_thinking.json", "/v1/messages", anthropicBody, "stop", "end_turn", true},
		{"anthropic/message_max_tokens.json", "/v1/messages", anthropicBody, "length", "max_tokens", true},
		{"anthropic/message_tool_use.json", "/v1/messages", anthropicBody, "tool_call", "tool_use", true},
		{"gemini/gemini_generate_response.json", geminiPath, geminiBody, "stop", "STOP", true},
		// Gemini ends a function call with STOP: the call decides.
		{"gemini/gemini_generate_response_thinking_functioncall.json", geminiPath, geminiBody, "tool_call", "STOP", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			srv := cannedServer(t, map[string]string{tc.path: tc.file})
			a := newSDKApp(t, otelsink.Options{}, false, middleware.WithOutput())
			id := middleware.NewCallID()
			a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+tc.path, tc.body)
			attrs := attrsOf(a.exported(t)[id])
			assert.Equal(t, []string{tc.want}, attrs["gen_ai.response.finish_reasons"])
			if tc.raw == "" {
				assert.NotContains(t, attrs, "llmhistory.outcome.finish_reason")
			} else {
				assert.Equal(t, tc.raw, attrs["llmhistory.outcome.finish_reason"])
			}
			if tc.output {
				out, ok := attrs["gen_ai.output.messages"].(string)
				require.True(t, ok, "no output messages")
				assert.Contains(t, out, `"finish_reason":"`+tc.want+`"`)
			}
		})
	}
}

// 10. An embeddings call: no messages (the conventions have none for
// it), no output tokens on its span and no zero output-token data
// point, the requested dimensions in gen_ai.embeddings.dimension.count.
func TestEmbeddingsSpan(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]}],`+
			`"model":"text-embedding-3-small","usage":{"prompt_tokens":5,"total_tokens":5}}`)
	}))
	defer srv.Close()
	a := newSDKApp(t, otelsink.Options{Content: otelsink.ContentOn}, true, middleware.WithOutput())
	id := middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/embeddings",
		`{"model":"text-embedding-3-small","input":["The food was delicious"],"dimensions":256,"encoding_format":"float"}`)
	sp := a.exported(t)[id]
	attrs := attrsOf(sp)
	assert.Equal(t, "embeddings text-embedding-3-small", sp.Name)
	assert.Equal(t, int64(256), attrs["gen_ai.embeddings.dimension.count"])
	assert.Equal(t, int64(5), attrs["gen_ai.usage.input_tokens"])
	for _, k := range []string{"gen_ai.usage.output_tokens", "gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages"} {
		assert.NotContains(t, attrs, k)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, a.reader.Collect(context.Background(), &rm))
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != "gen_ai.client.token.usage" {
			continue
		}
		sets := dataPointSets(m)
		require.Len(t, sets, 1, "input tokens only")
		v, _ := sets[0].Value("gen_ai.token.type")
		assert.Equal(t, "input", v.AsString())
	}
}

// 10. The instrumentation scope of spans and metrics has a version.
func TestScopeVersion(t *testing.T) {
	require.NotEmpty(t, otelsink.ScopeVersion)
	a := newSDKApp(t, otelsink.Options{}, false)
	srv := cannedServer(t, map[string]string{"/chat/completions": "openai/openai_chat_response.json"})
	id := middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/chat/completions", chatBody)
	assert.Equal(t, otelsink.ScopeVersion, a.exported(t)[id].InstrumentationScope.Version)
	var rm metricdata.ResourceMetrics
	require.NoError(t, a.reader.Collect(context.Background(), &rm))
	assert.Equal(t, otelsink.ScopeVersion, rm.ScopeMetrics[0].Scope.Version)
}
