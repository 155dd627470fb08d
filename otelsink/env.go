package otelsink

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// FromEnv returns a sink that exports over OTLP as the standard
// OpenTelemetry environment variables say, for the fields of opts left
// unset:
//
//   - OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER: "otlp" (the
//     default) or "none" to export no spans or no metrics;
//   - OTEL_EXPORTER_OTLP_PROTOCOL, or the _TRACES_ and _METRICS_ forms:
//     "http/protobuf" (the default) or "grpc";
//   - OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION,
//     _CERTIFICATE, _INSECURE and their per-signal forms, and
//     OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE, read by the
//     SDK's OTLP exporters themselves;
//   - OTEL_METRIC_EXPORT_INTERVAL, read by the SDK's periodic reader;
//   - OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by [New]
//     when opts.Resource is nil;
//   - OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, read by New when
//     opts.Sampler is nil (see [Options.Sampler]);
//   - OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, when
//     opts.Content is ContentFromEnv (see [EnvCaptureContent]).
//
// A span exporter or metric reader given in opts is used as it is. The
// sink owns the exporters it makes: Close shuts them down.
func FromEnv(ctx context.Context, opts Options) (*Sink, error) {
	traces, err := wanted("OTEL_TRACES_EXPORTER")
	if err != nil {
		return nil, err
	}
	metrics, err := wanted("OTEL_METRICS_EXPORTER")
	if err != nil {
		return nil, err
	}
	var made []func(context.Context) error // shut down if a later step fails
	fail := func(err error) (*Sink, error) {
		for _, shutdown := range made {
			_ = shutdown(ctx)
		}
		return nil, err
	}
	if opts.SpanExporter == nil && traces {
		exp, err := spanExporter(ctx)
		if err != nil {
			return fail(err)
		}
		made = append(made, exp.Shutdown)
		opts.SpanExporter = exp
	}
	if opts.MetricReader == nil && opts.MeterProvider == nil && metrics {
		exp, err := metricExporter(ctx)
		if err != nil {
			return fail(err)
		}
		made = append(made, exp.Shutdown)
		opts.MetricReader = sdkmetric.NewPeriodicReader(exp)
	}
	s, err := New(opts)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// wanted reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER: this sink
// speaks OTLP, or nothing.
func wanted(env string) (bool, error) {
	switch v := strings.TrimSpace(os.Getenv(env)); v {
	case "", "otlp":
		return true, nil
	case "none":
		return false, nil
	default:
		return false, fmt.Errorf("otelsink: %s=%q: only otlp and none are supported", env, v)
	}
}

// protocol reads the OTLP protocol of a signal ("TRACES", "METRICS").
func protocol(signal string) (string, error) {
	p := strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"))
	if p == "" {
		p = strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return p, nil
	}
	return "", fmt.Errorf("otelsink: OTLP protocol %q: the Go exporters speak http/protobuf and grpc", p)
}

func spanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	p, err := protocol("TRACES")
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	if p == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("otelsink: span exporter (%s): %w", p, err)
	}
	return exp, nil
}

func metricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	p, err := protocol("METRICS")
	if err != nil {
		return nil, err
	}
	var exp sdkmetric.Exporter
	if p == "grpc" {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("otelsink: metric exporter (%s): %w", p, err)
	}
	return exp, nil
}
