package otlpfake_test

import (
	"context"
	"fmt"
	"log"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
)

// The SDK's OTLP/HTTP exporter sends a span; the receiver has it, as the
// OTLP protocol's types. (In a test, otlpfake.Start(t) also stops it.)
func Example() {
	r, err := otlpfake.Listen()
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(r.HTTP), otlptracehttp.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("example").Start(ctx, "chat gpt-4o-mini")
	span.SetAttributes(attribute.String("gen_ai.provider.name", "openai"))
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}

	for _, e := range r.Exports() {
		sp := e.Traces.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
		fmt.Println(e.Protocol, e.Items(), sp.GetName(), otlpfake.Attrs(sp.GetAttributes()))
	}
	// Output: http/protobuf 1 chat gpt-4o-mini map[gen_ai.provider.name:openai]
}

// A receiver answers what the test asks: here a permanent refusal, which
// the exporter reports and does not retry.
func ExampleReceiver_AnswerWith() {
	r, err := otlpfake.Listen()
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	r.AnswerWith(func(e otlpfake.Export) otlpfake.Answer {
		return otlpfake.Answer{Code: codes.PermissionDenied, Message: fmt.Sprintf("no room for %d spans", e.Items())}
	})

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.GRPC), otlptracegrpc.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	spans := tracetest.SpanStubs{{Name: "chat gpt-4o-mini"}}.Snapshots()
	fmt.Println(exp.ExportSpans(ctx, spans))
	fmt.Println(r.SpanCount(), "spans taken")
	// Output:
	// traces export: rpc error: code = PermissionDenied desc = no room for 1 spans
	// 0 spans taken
}
