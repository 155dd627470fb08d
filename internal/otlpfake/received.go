package otlpfake

import (
	"strings"
	"sync"
	"testing"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmhistory/llmhistory/otelsink"
)

// Signal is what an export carries.
type Signal string

// The three OTLP signals.
const (
	SignalTraces  Signal = "traces"
	SignalMetrics Signal = "metrics"
	SignalLogs    Signal = "logs"
)

// An Export is one export request a receiver took.
type Export struct {
	Signal Signal
	// Protocol is "grpc", "http/protobuf" or "http/json"; empty when the
	// Collector's receiver took it (it does not say).
	Protocol string
	// Compression is the request's content coding: "gzip", or empty.
	Compression string
	// Header is the request's gRPC metadata or HTTP header, its keys in
	// lower case.
	Header map[string][]string
	// The request, as the OTLP protocol's types: the one for Signal.
	Traces  *coltracepb.ExportTraceServiceRequest
	Metrics *colmetricpb.ExportMetricsServiceRequest
	Logs    *collogspb.ExportLogsServiceRequest
}

// Items is how many spans, metric data points or log records the export
// holds.
func (e Export) Items() int {
	n := 0
	for _, rs := range e.Traces.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			n += len(ss.GetSpans())
		}
	}
	for _, rm := range e.Metrics.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				n += dataPoints(m)
			}
		}
	}
	for _, rl := range e.Logs.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			n += len(sl.GetLogRecords())
		}
	}
	return n
}

func dataPoints(m *metricpb.Metric) int {
	switch d := m.GetData().(type) {
	case *metricpb.Metric_Gauge:
		return len(d.Gauge.GetDataPoints())
	case *metricpb.Metric_Sum:
		return len(d.Sum.GetDataPoints())
	case *metricpb.Metric_Histogram:
		return len(d.Histogram.GetDataPoints())
	case *metricpb.Metric_ExponentialHistogram:
		return len(d.ExponentialHistogram.GetDataPoints())
	case *metricpb.Metric_Summary:
		return len(d.Summary.GetDataPoints())
	}
	return 0
}

// Received is what a receiver took, in the order it took it. Its methods
// are safe for concurrent use. The integration module's Collector fills
// one too, so that tests read either receiver the same way.
type Received struct {
	mu      sync.Mutex
	discard bool // count, keep nothing
	exports []Export
	count   map[Signal]int
}

// Add keeps e (or only counts it, for a receiver that discards).
func (r *Received) Add(e Export) {
	n := e.Items()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == nil {
		r.count = map[Signal]int{}
	}
	r.count[e.Signal] += n
	if !r.discard {
		r.exports = append(r.exports, e)
	}
}

// Exports returns every export taken, in order.
func (r *Received) Exports() []Export {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Export(nil), r.exports...)
}

// Traces returns every trace export taken, in order.
func (r *Received) Traces() []*coltracepb.ExportTraceServiceRequest {
	var out []*coltracepb.ExportTraceServiceRequest
	for _, e := range r.Exports() {
		if e.Signal == SignalTraces {
			out = append(out, e.Traces)
		}
	}
	return out
}

// Metrics returns every metrics export taken, in order.
func (r *Received) Metrics() []*colmetricpb.ExportMetricsServiceRequest {
	var out []*colmetricpb.ExportMetricsServiceRequest
	for _, e := range r.Exports() {
		if e.Signal == SignalMetrics {
			out = append(out, e.Metrics)
		}
	}
	return out
}

// Logs returns every logs export taken, in order.
func (r *Received) Logs() []*collogspb.ExportLogsServiceRequest {
	var out []*collogspb.ExportLogsServiceRequest
	for _, e := range r.Exports() {
		if e.Signal == SignalLogs {
			out = append(out, e.Logs)
		}
	}
	return out
}

func (r *Received) counted(s Signal) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[s]
}

// SpanCount is how many spans were taken.
func (r *Received) SpanCount() int { return r.counted(SignalTraces) }

// DataPointCount is how many metric data points were taken.
func (r *Received) DataPointCount() int { return r.counted(SignalMetrics) }

// LogRecordCount is how many log records were taken.
func (r *Received) LogRecordCount() int { return r.counted(SignalLogs) }

// Spans returns every span taken, by llmhistory.call_id. It fails the
// test when a span is not otelsink's (another scope or schema, no call
// id) or a call came twice.
func (r *Received) Spans(t testing.TB) map[string]*tracepb.Span {
	t.Helper()
	out := map[string]*tracepb.Span{}
	for _, req := range r.Traces() {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				if ss.GetScope().GetName() != otelsink.ScopeName || ss.GetSchemaUrl() != semconv.SchemaURL {
					t.Errorf("spans of scope %q, schema %q: want %q, %q", ss.GetScope().GetName(), ss.GetSchemaUrl(), otelsink.ScopeName, semconv.SchemaURL)
				}
				for _, sp := range ss.GetSpans() {
					id, ok := Attrs(sp.GetAttributes())[string(otelsink.AttrCallID)].(string)
					if !ok {
						t.Fatalf("span %s has no call id", sp.GetName())
					}
					if _, dup := out[id]; dup {
						t.Errorf("call %s exported twice", id)
					}
					out[id] = sp
				}
			}
		}
	}
	return out
}

// Wire is everything taken, as OTLP/JSON, one export a line: what a
// secret must never be found in.
func (r *Received) Wire(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, e := range r.Exports() {
		var m proto.Message
		switch e.Signal {
		case SignalTraces:
			m = e.Traces
		case SignalMetrics:
			m = e.Metrics
		default:
			m = e.Logs
		}
		j, err := MarshalJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// Attrs are OTLP attributes as Go values, as the Collector's
// pcommon.Map.AsRaw gives them: string, bool, int64, float64, []byte,
// []any (never nil) and map[string]any.
func Attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.GetKey()] = Value(kv.GetValue())
	}
	return out
}

// Value is an OTLP value as a Go value (see [Attrs]); nil for an empty
// one.
func Value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, Value(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return Attrs(x.KvlistValue.GetValues())
	}
	return nil
}

// Time is an OTLP timestamp (nanoseconds since the Unix epoch) as a time
// in UTC.
func Time(unixNano uint64) time.Time {
	return time.Unix(0, int64(unixNano)).UTC()
}
