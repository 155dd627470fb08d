// Package otlptest runs the OpenTelemetry Collector's own OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver), gRPC and HTTP, on
// loopback in a test: the real peer of the OpenTelemetry SDK's OTLP
// exporters, for the integration tests of otelsink and of llmhistory
// export. What the receiver hands on is kept as the OTLP protocol's
// types in an otlpfake.Received, so that these tests read it as the
// root module's tests read the light receiver. Only tests import it.
package otlptest

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
)

// Collector is the OTLP receiver running in a test. What its pipeline
// took is in its Received.
type Collector struct {
	GRPC, HTTP string // host:port
	*otlpfake.Received
}

// Start starts the OTLP receiver with cfg, or the receiver's default
// configuration when cfg is nil, on free loopback ports; the test's
// cleanup stops it.
func Start(t testing.TB, cfg *otlpreceiver.Config) *Collector {
	t.Helper()
	c := &Collector{Received: new(otlpfake.Received)}
	c.start(t, cfg, consumer.Traces(keeper{t, c.Received}), consumer.Metrics(keeper{t, c.Received}), consumer.Logs(keeper{t, c.Received}))
	return c
}

// StartRefusing starts a receiver that refuses everything with a
// permanent error whose message is reason, as a Collector's pipeline does
// with data it will never take: HTTP 500, gRPC Internal, which the SDK's
// exporters do not retry. Its Received stays empty.
func StartRefusing(t testing.TB, reason string) *Collector {
	t.Helper()
	c := &Collector{Received: new(otlpfake.Received)}
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
	c.GRPC, c.HTTP = otlpfake.FreeAddr(t), otlpfake.FreeAddr(t)
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

// keeper is the end of the receiver's pipeline: it turns what the
// receiver decoded (pdata) back into the OTLP protocol's messages, which
// is lossless (pdata is generated from the same protocol), and keeps
// them with the request's metadata (which the receiver passes on when
// its configuration says include_metadata).
type keeper struct {
	t        testing.TB
	received *otlpfake.Received
}

func (keeper) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (k keeper) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	req := new(coltracepb.ExportTraceServiceRequest)
	k.add(ctx, ptraceotlp.NewExportRequestFromTraces(td).MarshalProto, req, otlpfake.Export{Signal: otlpfake.SignalTraces, Traces: req})
	return nil
}

func (k keeper) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	req := new(colmetricpb.ExportMetricsServiceRequest)
	k.add(ctx, pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto, req, otlpfake.Export{Signal: otlpfake.SignalMetrics, Metrics: req})
	return nil
}

func (k keeper) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	req := new(collogspb.ExportLogsServiceRequest)
	k.add(ctx, plogotlp.NewExportRequestFromLogs(ld).MarshalProto, req, otlpfake.Export{Signal: otlpfake.SignalLogs, Logs: req})
	return nil
}

func (k keeper) add(ctx context.Context, marshal func() ([]byte, error), into proto.Message, e otlpfake.Export) {
	b, err := marshal()
	if err == nil {
		err = proto.Unmarshal(b, into)
	}
	if err != nil {
		k.t.Errorf("what the Collector's receiver decoded does not encode back: %v", err)
		return
	}
	md := client.FromContext(ctx).Metadata
	e.Header = map[string][]string{}
	for key := range md.Keys() {
		e.Header[key] = md.Get(key)
	}
	k.received.Add(e)
}
