// Package otelsinktest holds what otelsink's tests share with the
// integration module's (integration/), which run the same application
// against the OpenTelemetry Collector's own receiver: a chat application
// whose client records through a real recorder into a sink, its fake
// OpenAI endpoint, and the SDK's OTLP exporters for a receiver's
// addresses. Only tests import it.
package otelsinktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// FakeKey is shaped like an OpenAI key, made at run time so that no
// key-shaped string is in the source.
var FakeKey = "sk-proj-" + strings.Repeat("Fake0Key9", 5)

// Provider is a fake OpenAI chat completions endpoint. X-Scenario says
// what it does: "retry" answers 429 to the first attempt of a call,
// "auth" is a 401 that echoes the caller's key, as some gateways do;
// "stream": true in the body gets an event stream.
func Provider(t testing.TB) *httptest.Server {
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

// App is an application whose client records through a recorder that
// feeds a sink.
type App struct {
	Rec    *middleware.Recorder
	Client *http.Client
	URL    string // the chat completions endpoint
}

// NewApp starts a Provider and an App that calls it, recording into
// sink, with outputs, retrying with millisecond delays.
func NewApp(t testing.TB, sink record.Sink) *App {
	t.Helper()
	srv := Provider(t)
	rec := middleware.NewRecorder(middleware.WithSink(sink), middleware.WithOutput(),
		middleware.WithLogger(slog.New(slog.DiscardHandler))) // the tests read Stats, not the warnings
	base := srv.Client().Transport
	return &App{
		Rec: rec,
		Client: &http.Client{Transport: middleware.Chain(base, rec.Middleware(),
			middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}))},
		URL: srv.URL + "/v1/chat/completions",
	}
}

// Call makes one chat completion with a prompt that holds the key too,
// as a careless user might ("Secret plan <callID>; my key is <FakeKey>",
// after the system message "Be brief."; the answer is "Answered."), and
// reads the answer to its end.
func (a *App) Call(t testing.TB, ctx context.Context, callID, scenario string, stream bool) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":64,"stream":%t,"messages":[`+
		`{"role":"system","content":"Be brief."},{"role":"user","content":"Secret plan %s; my key is %s"}]}`, stream, callID, FakeKey)
	req, err := http.NewRequestWithContext(middleware.WithCallID(ctx, callID), http.MethodPost, a.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+FakeKey)
	req.Header.Set("X-Scenario", scenario)
	req.Header.Set("X-Call", callID)
	resp, err := a.Client.Do(req)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// Conversation makes a nested conversation: a root call, a child with a
// streamed grandchild, a child that is retried once, and a child that
// fails. It returns the call IDs, root first.
func (a *App) Conversation(t testing.TB, ctx context.Context) (root, child, grandchild, retried, failed string) {
	root, child, grandchild, retried, failed = middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID(), middleware.NewCallID()
	a.Call(t, ctx, root, "", false)
	under := middleware.WithParent(ctx, root)
	a.Call(t, under, child, "", false)
	a.Call(t, middleware.WithParent(under, child), grandchild, "", true)
	a.Call(t, under, retried, "retry", false)
	a.Call(t, under, failed, "auth", false)
	return
}

// Exporters are the SDK's own OTLP span and metric exporters for
// protocol ("grpc", or else OTLP/HTTP) to a receiver at grpcAddr or
// httpAddr (host:port).
func Exporters(t testing.TB, grpcAddr, httpAddr, protocol string) (sdktrace.SpanExporter, sdkmetric.Exporter) {
	t.Helper()
	ctx := context.Background()
	switch protocol {
	case "grpc":
		se, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
		require.NoError(t, err)
		me, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(grpcAddr), otlpmetricgrpc.WithInsecure())
		require.NoError(t, err)
		return se, me
	default:
		se, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
		require.NoError(t, err)
		me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(httpAddr), otlpmetrichttp.WithInsecure())
		require.NoError(t, err)
		return se, me
	}
}
