// Package otlptest runs the OpenTelemetry Collector's own OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver), gRPC and HTTP, on
// loopback in a test, and reads what it received: the real peer of the
// OpenTelemetry SDK's OTLP exporters, for the tests of otelsink and of
// llmhistory export. Only tests import it.
package otlptest

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmhistory/llmhistory/otelsink"
)

// Collector is the OTLP receiver running in a test, handing what it
// receives to its sinks.
type Collector struct {
	GRPC, HTTP string // host:port
	Traces     *consumertest.TracesSink
	Metrics    *consumertest.MetricsSink
	Logs       *consumertest.LogsSink
}

// FreeAddr returns a loopback address no one listens on now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// Start starts the OTLP receiver with cfg, or the receiver's default
// configuration when cfg is nil, on free loopback ports; the test's
// cleanup stops it.
func Start(t testing.TB, cfg *otlpreceiver.Config) *Collector {
	t.Helper()
	c := &Collector{Traces: new(consumertest.TracesSink), Metrics: new(consumertest.MetricsSink), Logs: new(consumertest.LogsSink)}
	c.start(t, cfg, c.Traces, c.Metrics, c.Logs)
	return c
}

// StartNop starts a receiver that discards what it takes: a real OTLP
// peer whose memory does not grow with a benchmark's b.N. Its sinks are
// nil.
func StartNop(t testing.TB) *Collector {
	t.Helper()
	c := &Collector{}
	nop := consumertest.NewNop()
	c.start(t, nil, nop, nop, nop)
	return c
}

// StartRefusing starts a receiver that refuses everything with a
// permanent error whose message is reason, as a Collector's pipeline does
// with data it will never take: HTTP 500, gRPC Internal, which the SDK's
// exporters do not retry. Its sinks are nil.
func StartRefusing(t testing.TB, reason string) *Collector {
	t.Helper()
	c := &Collector{}
	refuse := consumertest.NewErr(consumererror.NewPermanent(refusal(reason)))
	c.start(t, nil, refuse, refuse, refuse)
	return c
}

type refusal string

func (r refusal) Error() string { return string(r) }

func (c *Collector) start(t testing.TB, cfg *otlpreceiver.Config, traces consumer.Traces, metrics consumer.Metrics, logs consumer.Logs) {
	t.Helper()
	f := otlpreceiver.NewFactory()
	if cfg == nil {
		cfg = f.CreateDefaultConfig().(*otlpreceiver.Config)
	}
	c.GRPC, c.HTTP = FreeAddr(t), FreeAddr(t)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = c.GRPC
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = c.HTTP
	ctx := context.Background()
	set := receivertest.NewNopSettings(f.Type())
	tr, err := f.CreateTraces(ctx, set, cfg, traces)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, metrics)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := f.CreateLogs(ctx, set, cfg, logs)
	if err != nil {
		t.Fatal(err)
	}
	// The three share one receiver (one per configuration): starting it
	// once starts both servers, and the later starts are no-ops.
	host := componenttest.NewNopHost()
	if err := tr.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	if err := mr.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	if err := lr.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, err := range []error{tr.Shutdown(ctx), mr.Shutdown(ctx), lr.Shutdown(ctx)} {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// WaitFor polls cond until it holds, failing the test if it does not
// within ten seconds. Exports are synchronous with the receiver's
// consumer, so the wait is normally none; the bound is for a broken run.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("the collector never received %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Spans returns every span the collector received, by
// llmhistory.call_id. It fails the test when a span is not otelsink's
// (another scope or schema, no call id) or a call came twice.
func (c *Collector) Spans(t testing.TB) map[string]ptrace.Span {
	t.Helper()
	out := map[string]ptrace.Span{}
	for _, td := range c.Traces.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				if ss.Scope().Name() != otelsink.ScopeName || ss.SchemaUrl() != semconv.SchemaURL {
					t.Errorf("spans of scope %q, schema %q: want %q, %q", ss.Scope().Name(), ss.SchemaUrl(), otelsink.ScopeName, semconv.SchemaURL)
				}
				for _, sp := range ss.Spans().All() {
					id, ok := sp.Attributes().Get(string(otelsink.AttrCallID))
					if !ok {
						t.Fatalf("span %s has no call id", sp.Name())
					}
					if _, dup := out[id.Str()]; dup {
						t.Errorf("call %s exported twice", id.Str())
					}
					out[id.Str()] = sp
				}
			}
		}
	}
	return out
}

// Wire is everything the collector received, as JSON: what a secret must
// never be found in.
func (c *Collector) Wire(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	write := func(j []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
	}
	for _, td := range c.Traces.AllTraces() {
		write((&ptrace.JSONMarshaler{}).MarshalTraces(td))
	}
	for _, md := range c.Metrics.AllMetrics() {
		write((&pmetric.JSONMarshaler{}).MarshalMetrics(md))
	}
	for _, ld := range c.Logs.AllLogs() {
		write((&plog.JSONMarshaler{}).MarshalLogs(ld))
	}
	return b.String()
}
