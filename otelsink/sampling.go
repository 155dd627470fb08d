package otelsink

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// EnvTracesSampler and EnvTracesSamplerArg are the standard variables
// that choose [Options.Sampler] when it is nil.
const (
	EnvTracesSampler    = "OTEL_TRACES_SAMPLER"
	EnvTracesSamplerArg = "OTEL_TRACES_SAMPLER_ARG"
)

// samplerFromEnv returns the sampler OTEL_TRACES_SAMPLER names, for the
// spans with no caller's span: always_on (the default), always_off,
// traceidratio with OTEL_TRACES_SAMPLER_ARG (default 1), and their
// parentbased_ forms, which mean the same here since the caller's
// decision is always followed.
func samplerFromEnv() (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(os.Getenv(EnvTracesSampler)))
	name = strings.TrimPrefix(name, "parentbased_")
	switch name {
	case "", "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		ratio := 1.0
		if arg := strings.TrimSpace(os.Getenv(EnvTracesSamplerArg)); arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || r < 0 || r > 1 {
				return nil, fmt.Errorf("otelsink: %s=%q: want a ratio from 0 to 1", EnvTracesSamplerArg, arg)
			}
			ratio = r
		}
		return sdktrace.TraceIDRatioBased(ratio), nil
	}
	return nil, fmt.Errorf("otelsink: %s=%q: the sink knows always_on, always_off, traceidratio and their parentbased_ forms",
		EnvTracesSampler, os.Getenv(EnvTracesSampler))
}

// sampler is the sink's tracer provider's sampler. A span under the
// caller's span (from the context given to Append, or a traceparent
// header through [Middleware]) follows the caller's decision: a span
// exported under a parent that never is would be an orphan in Jaeger and
// Tempo. Every other span is decided by root, which sees its trace ID,
// name, kind and starting attributes, and no parent: a record's parent
// call is a span of this sink, decided the same way, so a sampler that
// decides by trace ID (the SDK's ratio sampler) keeps or drops a
// conversation whole.
type sampler struct{ root sdktrace.Sampler }

// callerKey marks the context of a span whose parent is the caller's.
type callerKey struct{}

func (s sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	if p.ParentContext.Value(callerKey{}) != nil && parent.IsValid() {
		d := sdktrace.Drop
		if parent.IsSampled() {
			d = sdktrace.RecordAndSample
		}
		return sdktrace.SamplingResult{Decision: d, Tracestate: parent.TraceState()}
	}
	if parent.IsValid() {
		// A nested call's parent, made from the record: hidden, so that
		// a parent-based root sampler decides as for the trace's root.
		p.ParentContext = context.Background()
	}
	return s.root.ShouldSample(p)
}

func (s sampler) Description() string {
	return "FollowCaller{root:" + s.root.Description() + "}"
}
