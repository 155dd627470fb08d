package otelsink_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// A recorder's records become spans. In production the exporter is
// otlptracehttp or otlptracegrpc pointing at a Collector; here it is the
// SDK's in-memory exporter, so that the span can be printed.
func Example() {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
	}))
	defer provider.Close()

	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp})
	if err != nil {
		panic(err)
	}
	rec := middleware.NewRecorder(middleware.WithSink(sink))
	defer rec.Close() // flushes and closes the sink
	client := rec.Client(nil)

	ctx := middleware.WithTrace(context.Background(), "conversation-42")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, provider.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","temperature":0.2,"messages":[{"role":"user","content":"Hello"}]}`))
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rec.Flush() // the record reaches the sink, and the sink exports it

	span := exp.GetSpans()[0]
	fmt.Println(span.Name, span.SpanKind)
	for _, kv := range span.Attributes {
		switch kv.Key {
		case "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.request.temperature",
			"gen_ai.response.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.conversation.id":
			fmt.Printf("%s=%v\n", kv.Key, kv.Value.String())
		}
	}
	_, content := attrsOf(span)["gen_ai.input.messages"]
	fmt.Println("content exported:", content)
	// Output:
	// chat gpt-4o-mini client
	// gen_ai.operation.name=chat
	// gen_ai.provider.name=openai
	// gen_ai.request.model=gpt-4o-mini
	// gen_ai.request.temperature=0.2
	// gen_ai.conversation.id=conversation-42
	// gen_ai.response.model=gpt-4o-mini-2024-07-18
	// gen_ai.usage.input_tokens=9
	// gen_ai.usage.output_tokens=2
	// content exported: false
}

// Exporting a JSONL file, as llmhistory export does: FromEnv would take
// the Collector's address from OTEL_EXPORTER_OTLP_ENDPOINT; WaitWhenFull
// makes Append wait for room rather than drop, since a file has no call
// to keep moving.
func Example_exportFile() {
	file := strings.NewReader(
		`{"call_id":"c1","timestamp":"2026-11-21T09:30:00Z","speaker":"user","method_name":"gemini.models.generateContent","args":[],"kwargs":{"model":"gemini-2.5-flash"},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"trace_id":"t-1","duration_ms":420,"history_record_appended":true,"conversation_history_size":0,"history_access_detected":false,"history_query_patterns":[],"version":1}` + "\n" +
			`{"call_id":"c2","timestamp":"2026-11-21T09:30:01Z","speaker":"tool","method_name":"gemini.models.generateContent","args":[],"kwargs":{"model":"gemini-2.5-flash"},"outcome_summary":{"status":"error","ok":false,"error_type":"rate_limit","retriable":true},"trace_id":"t-1","parent_call_id":"c1","duration_ms":80,"history_record_appended":true,"conversation_history_size":1,"history_access_detected":false,"history_query_patterns":[],"version":1}` + "\n")
	records, err := record.ReadJSONL(file)
	if err != nil {
		panic(err)
	}

	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, WaitWhenFull: true})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, r := range records {
		if err := sink.Append(ctx, r); err != nil {
			panic(err)
		}
	}
	if err := sink.Flush(); err != nil {
		panic(err)
	}
	spans := exp.GetSpans() // before Close: the in-memory exporter forgets its spans when shut down
	if err := sink.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", sink.Stats())
	fmt.Println(spans[1].Name, spans[1].Status.Code, attrsOf(spans[1])["error.type"])
	fmt.Println("c2's parent is c1:", spans[1].Parent.SpanID() == spans[0].SpanContext.SpanID())
	// Output:
	// {Appended:2 Exported:2 Dropped:0 Failed:0 Unsampled:0 Queued:0}
	// generate_content gemini-2.5-flash Error rate_limit
	// c2's parent is c1: true
}

// Middleware, before the recorder, gives the spans what a record does not
// carry: the parent span of a traceparent header that came with a request
// whose context has no span, as in a gateway that passes its caller's on.
// The server's address and port come from the request's URL (the record
// has them too).
func ExampleMiddleware() {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}]}`)
	}))
	defer provider.Close()

	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp})
	if err != nil {
		panic(err)
	}
	rec := middleware.NewRecorder(middleware.WithSink(sink))
	defer rec.Close()
	client := &http.Client{Transport: middleware.Chain(http.DefaultTransport, otelsink.Middleware(), rec.Middleware())}

	req, _ := http.NewRequest(http.MethodPost, provider.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}`))
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rec.Flush()

	span := exp.GetSpans()[0]
	attrs := attrsOf(span)
	fmt.Println("server.address:", attrs["server.address"])
	fmt.Println("server.port is the server's:", strings.HasSuffix(provider.URL, fmt.Sprint(":", attrs["server.port"])))
	fmt.Println("trace:", span.SpanContext.TraceID())
	fmt.Println("parent:", span.Parent.SpanID())
	// Output:
	// server.address: 127.0.0.1
	// server.port is the server's: true
	// trace: 4bf92f3577b34da6a3ce929d0e0e4736
	// parent: 00f067aa0ba902b7
}

func attrsOf(s tracetest.SpanStub) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}
