package otlpfake_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	otelmetric "go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
)

// spanExporter is the SDK's OTLP span exporter for protocol ("grpc",
// "http/protobuf" or "http/json") to r, gzip-compressed when asked, with
// retries a test can afford.
func spanExporter(t *testing.T, r *otlpfake.Receiver, protocol string, gzipped bool) sdktrace.SpanExporter {
	t.Helper()
	ctx := context.Background()
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "grpc":
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(r.GRPC), otlptracegrpc.WithInsecure(),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: time.Millisecond, MaxInterval: time.Millisecond, MaxElapsedTime: 5 * time.Second})}
		if gzipped {
			opts = append(opts, otlptracegrpc.WithCompressor("gzip"))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(r.HTTP), otlptracehttp.WithInsecure(),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: time.Millisecond, MaxInterval: time.Millisecond, MaxElapsedTime: 5 * time.Second})}
		if gzipped {
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		}
		if protocol == "http/json" {
			opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	}
	require.NoError(t, err)
	return exp
}

// exportSpans makes a parent and a child span through exp, synchronously,
// and returns them as the SDK ended them.
func exportSpans(t *testing.T, exp sdktrace.SpanExporter) (parent, child sdktrace.ReadOnlySpan, err error) {
	t.Helper()
	kept := &keep{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(kept))
	tr := tp.Tracer("otlpfake-test")
	ctx, p := tr.Start(context.Background(), "parent", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("s", "v"), attribute.Int64("i", 7), attribute.Float64("f", 0.5),
			attribute.Bool("b", true), attribute.StringSlice("list", []string{"x", "y"}), attribute.StringSlice("empty", nil)))
	_, c := tr.Start(ctx, "child")
	c.End()
	p.End()
	require.NoError(t, tp.Shutdown(context.Background()))
	err = exp.ExportSpans(context.Background(), kept.spans)
	require.NoError(t, exp.Shutdown(context.Background()))
	return kept.spans[1], kept.spans[0], err
}

// keep is a span processor that keeps what ends.
type keep struct{ spans []sdktrace.ReadOnlySpan }

func (k *keep) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (k *keep) OnEnd(s sdktrace.ReadOnlySpan)                   { k.spans = append(k.spans, s) }
func (k *keep) Shutdown(context.Context) error                  { return nil }
func (k *keep) ForceFlush(context.Context) error                { return nil }

// What the SDK's span exporters send, over gRPC and OTLP/HTTP in protobuf
// and in JSON, plain and gzipped, arrives whole: the IDs the SDK gave,
// the tree, the names, kinds, times and every kind of attribute, with the
// protocol, compression and headers said.
func TestSpansOverEachProtocol(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf", "http/json"} {
		for _, gzipped := range []bool{false, true} {
			name := protocol
			if gzipped {
				name += "+gzip"
			}
			t.Run(name, func(t *testing.T) {
				r := otlpfake.Start(t)
				parent, child, err := exportSpans(t, spanExporter(t, r, protocol, gzipped))
				require.NoError(t, err)

				exports := r.Exports()
				require.Len(t, exports, 1)
				e := exports[0]
				assert.Equal(t, otlpfake.SignalTraces, e.Signal)
				assert.Equal(t, protocol, e.Protocol)
				assert.Equal(t, map[bool]string{true: "gzip"}[gzipped], e.Compression)
				assert.Contains(t, strings.Join(e.Header["user-agent"], " "), "OTel")
				assert.Equal(t, 2, e.Items())
				assert.Equal(t, 2, r.SpanCount())

				spans := map[string]*tracepb.Span{}
				for _, rs := range e.Traces.GetResourceSpans() {
					for _, ss := range rs.GetScopeSpans() {
						assert.Equal(t, "otlpfake-test", ss.GetScope().GetName())
						for _, sp := range ss.GetSpans() {
							spans[sp.GetName()] = sp
						}
					}
				}
				require.Len(t, spans, 2)
				for _, want := range []sdktrace.ReadOnlySpan{parent, child} {
					got := spans[want.Name()]
					require.NotNil(t, got, want.Name())
					tid, sid := want.SpanContext().TraceID(), want.SpanContext().SpanID()
					assert.Equal(t, tid[:], got.GetTraceId(), "%s: the trace ID the SDK gave", want.Name())
					assert.Equal(t, sid[:], got.GetSpanId(), "%s: the span ID the SDK gave", want.Name())
					assert.Equal(t, want.StartTime().UTC(), otlpfake.Time(got.GetStartTimeUnixNano()))
					assert.Equal(t, want.EndTime().UTC(), otlpfake.Time(got.GetEndTimeUnixNano()))
				}
				assert.Empty(t, spans["parent"].GetParentSpanId())
				psid := parent.SpanContext().SpanID()
				assert.Equal(t, psid[:], spans["child"].GetParentSpanId())
				assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, spans["parent"].GetKind())
				assert.Equal(t, map[string]any{"s": "v", "i": int64(7), "f": 0.5, "b": true, "list": []any{"x", "y"}, "empty": []any{}},
					otlpfake.Attrs(spans["parent"].GetAttributes()))
				assert.Contains(t, r.Wire(t), `"traceId":"`+parent.SpanContext().TraceID().String()+`"`, "the wire's IDs are hex, as OTLP/JSON's")
			})
		}
	}
}

// The SDK's metric exporters (gRPC and HTTP, gzipped) and its log
// exporter arrive too, counted by data point and by log record.
func TestMetricsAndLogs(t *testing.T) {
	r := otlpfake.Start(t)
	ctx := context.Background()
	grpcExp, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(r.GRPC), otlpmetricgrpc.WithInsecure(), otlpmetricgrpc.WithCompressor("gzip"))
	require.NoError(t, err)
	httpExp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(r.HTTP), otlpmetrichttp.WithInsecure(), otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
	require.NoError(t, err)
	for _, exp := range []sdkmetric.Exporter{grpcExp, httpExp} {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		h, err := mp.Meter("otlpfake-test").Float64Histogram("op.duration", otelmetric.WithUnit("s"))
		require.NoError(t, err)
		h.Record(ctx, 0.25)
		h.Record(ctx, 0.75, otelmetric.WithAttributes(attribute.String("error.type", "timeout")))
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(ctx, &rm))
		require.NoError(t, exp.Export(ctx, &rm))
		require.NoError(t, exp.Shutdown(ctx))
	}
	require.Len(t, r.Metrics(), 2)
	assert.Equal(t, 4, r.DataPointCount(), "two data points (two attribute sets) in each export")
	for _, e := range r.Exports() {
		assert.Equal(t, "gzip", e.Compression)
		m := e.Metrics.GetResourceMetrics()[0].GetScopeMetrics()[0].GetMetrics()[0]
		assert.Equal(t, "op.duration", m.GetName())
		assert.Equal(t, "s", m.GetUnit())
		var sum float64
		var count uint64
		for _, dp := range m.GetHistogram().GetDataPoints() {
			sum += dp.GetSum()
			count += dp.GetCount()
		}
		assert.Equal(t, 1.0, sum)
		assert.Equal(t, uint64(2), count)
	}

	lexp, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(r.HTTP), otlploghttp.WithInsecure(), otlploghttp.WithHeaders(map[string]string{"X-Team": "checkout"}))
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(lexp)))
	var lr otellog.Record
	lr.SetBody(attribute.StringValue("a call"))
	lr.SetSeverity(otellog.SeverityWarn)
	lr.AddAttributes(attribute.Map("usage", attribute.Int64("input_tokens", 20)))
	lp.Logger("otlpfake-test").Emit(ctx, lr)
	require.NoError(t, lp.Shutdown(ctx))
	assert.Equal(t, 1, r.LogRecordCount())
	logs := r.Logs()
	require.Len(t, logs, 1)
	got := logs[0].GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()[0]
	assert.Equal(t, "a call", otlpfake.Value(got.GetBody()))
	assert.Equal(t, map[string]any{"usage": map[string]any{"input_tokens": int64(20)}}, otlpfake.Attrs(got.GetAttributes()))
	last := r.Exports()[len(r.Exports())-1]
	assert.Equal(t, []string{"checkout"}, last.Header["x-team"], "headers by their lower-case names")
}

// A refusal reaches the exporter with its message, over both protocols;
// a permanent one is not retried, a retryable one is, and the export
// taken on the retry is kept once. A refused export is not kept.
func TestRefusals(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf", "http/json"} {
		t.Run(protocol+"/permanent", func(t *testing.T) {
			r := otlpfake.StartRefusing(t, "tenant over quota")
			_, _, err := exportSpans(t, spanExporter(t, r, protocol, false))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "tenant over quota")
			assert.Zero(t, r.SpanCount())
			assert.Empty(t, r.Exports())
		})
		t.Run(protocol+"/retried", func(t *testing.T) {
			r := otlpfake.Start(t)
			var asked atomic.Int32
			r.AnswerWith(func(otlpfake.Export) otlpfake.Answer {
				if asked.Add(1) == 1 {
					return otlpfake.Answer{Code: codes.Unavailable, Message: "restarting"}
				}
				return otlpfake.Answer{}
			})
			_, _, err := exportSpans(t, spanExporter(t, r, protocol, false))
			require.NoError(t, err)
			assert.Equal(t, int32(2), asked.Load(), "refused once, taken on the retry")
			assert.Equal(t, 2, r.SpanCount())
			assert.Len(t, r.Exports(), 1)
		})
	}
}

// A partial success reaches the SDK's exporter as its error, with the
// count and the message; the export is kept.
func TestPartialSuccess(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf", "http/json"} {
		t.Run(protocol, func(t *testing.T) {
			r := otlpfake.Start(t)
			r.AnswerWith(func(e otlpfake.Export) otlpfake.Answer {
				return otlpfake.Answer{Rejected: int64(e.Items() - 1), Message: "span too large"}
			})
			_, _, err := exportSpans(t, spanExporter(t, r, protocol, false))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "OTLP partial success: span too large (1 spans rejected)")
			assert.Equal(t, 2, r.SpanCount())
		})
	}
}

// The HTTP status each gRPC code gets is the one the OTLP specification
// gives it, with a google.rpc.Status whose message is the answer's.
func TestHTTPStatusOfRefusals(t *testing.T) {
	r := otlpfake.Start(t)
	body, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{})
	require.NoError(t, err)
	for code, want := range map[codes.Code]int{
		codes.Unavailable: 503, codes.ResourceExhausted: 429, codes.InvalidArgument: 400, codes.Unauthenticated: 401,
		codes.PermissionDenied: 403, codes.Unimplemented: 404, codes.Internal: 500, codes.DataLoss: 503, codes.Unknown: 500,
	} {
		r.AnswerWith(func(otlpfake.Export) otlpfake.Answer {
			return otlpfake.Answer{Code: code, Message: "because " + code.String()}
		})
		status, respBody, ctype := post(t, "http://"+r.HTTP+"/v1/traces", "application/x-protobuf", "", body)
		assert.Equal(t, want, status, code.String())
		assert.Equal(t, "application/x-protobuf", ctype)
		assert.Contains(t, respBody, "because "+code.String())
	}
}

// What is not an OTLP/HTTP export gets a clear 4xx and is not kept.
func TestHTTPRejectsWhatIsNotAnExport(t *testing.T) {
	r := otlpfake.Start(t)
	url := "http://" + r.HTTP + "/v1/traces"
	valid, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{})
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte{0}, otlpfake.MaxBodySize+1))
	require.NoError(t, zw.Close())

	for _, tc := range []struct {
		name, ctype, encoding string
		body                  []byte
		status                int
		want                  string
	}{
		{"text", "text/plain", "", valid, 415, `content type "text/plain": want application/x-protobuf or application/json`},
		{"zstd", "application/x-protobuf", "zstd", valid, 400, `content encoding "zstd": want gzip or none`},
		{"not gzip", "application/x-protobuf", "gzip", valid, 400, "gzip body"},
		{"not protobuf", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff}, 400, "traces export: "},
		{"not json", "application/json", "", []byte(`{"resourceSpans":`), 400, "traces export: "},
		{"two json values", "application/json", "", []byte(`{} {}`), 400, "more after the JSON value"},
		{"a base64 trace id", "application/json", "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AAECAwQFBgcICQoLDA0ODw==","spanId":"0001020304050607","name":"s"}]}]}]}`), 400, `traceId \"AAECAwQFBgcICQoLDA0ODw==\": want 16 bytes in hex`}, // in a JSON string
		{"a short span id", "application/json", "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"000102030405060708090a0b0c0d0e0f","spanId":"0001","name":"s"}]}]}]}`), 400, `spanId \"0001\": want 8 bytes in hex`},
		{"a gzip bomb", "application/x-protobuf", "gzip", gz.Bytes(), 400, "over 20971520 bytes"},
	} {
		status, body, _ := post(t, url, tc.ctype, tc.encoding, tc.body)
		assert.Equal(t, tc.status, status, tc.name)
		assert.Contains(t, body, tc.want, tc.name)
	}
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Empty(t, r.Exports())
}

// A hand-written OTLP/JSON export, as the specification shows one (IDs
// in hex of either case, enums and 64-bit integers as numbers or
// strings, a field it does not know), decodes to what it says.
func TestJSONAsTheSpecificationWritesIt(t *testing.T) {
	r := otlpfake.Start(t)
	body := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}}]},
	  "scopeSpans":[{"scope":{"name":"s"},"spans":[{
	    "traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","parentSpanId":"eee19b7ec3c1b173",
	    "name":"chat","kind":3,"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":1544712661000000000,
	    "attributes":[{"key":"n","value":{"intValue":"42"}},{"key":"m","value":{"intValue":43}}],
	    "status":{"code":"STATUS_CODE_ERROR","message":"bad"},"futureField":{"x":1}}]}]}]}`
	status, respBody, ctype := post(t, "http://"+r.HTTP+"/v1/traces", "application/json", "", []byte(body))
	require.Equal(t, 200, status, respBody)
	assert.Equal(t, "application/json", ctype)
	assert.Equal(t, "{}", respBody)

	sp := r.Traces()[0].GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
	assert.Equal(t, "5b8efff798038103d269b633813fc60c", hex.EncodeToString(sp.GetTraceId()))
	assert.Equal(t, "eee19b7ec3c1b174", hex.EncodeToString(sp.GetSpanId()))
	assert.Equal(t, "eee19b7ec3c1b173", hex.EncodeToString(sp.GetParentSpanId()))
	assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, sp.GetKind())
	assert.Equal(t, time.Date(2018, 12, 13, 14, 51, 0, 0, time.UTC), otlpfake.Time(sp.GetStartTimeUnixNano()))
	assert.Equal(t, time.Date(2018, 12, 13, 14, 51, 1, 0, time.UTC), otlpfake.Time(sp.GetEndTimeUnixNano()))
	assert.Equal(t, map[string]any{"n": int64(42), "m": int64(43)}, otlpfake.Attrs(sp.GetAttributes()))
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, sp.GetStatus().GetCode())
	assert.Equal(t, "checkout", otlpfake.Attrs(r.Traces()[0].GetResourceSpans()[0].GetResource().GetAttributes())["service.name"])
}

// A receiver that discards counts and keeps nothing.
func TestDiscarding(t *testing.T) {
	r := otlpfake.StartDiscarding(t)
	_, _, err := exportSpans(t, spanExporter(t, r, "grpc", false))
	require.NoError(t, err)
	assert.Equal(t, 2, r.SpanCount())
	assert.Empty(t, r.Exports())
}

// Attrs gives what the Collector's AsRaw gives, for every kind of value.
func TestAttrs(t *testing.T) {
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	kvs := []*commonpb.KeyValue{
		{Key: "s", Value: str("v")},
		{Key: "bytes", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{1, 2}}}},
		{Key: "empty list", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}}},
		{Key: "map", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{Key: "k", Value: str("x")}}}}}},
		{Key: "none", Value: &commonpb.AnyValue{}},
		{Key: "nil"},
	}
	assert.Equal(t, map[string]any{"s": "v", "bytes": []byte{1, 2}, "empty list": []any{}, "map": map[string]any{"k": "x"}, "none": nil, "nil": nil},
		otlpfake.Attrs(kvs))
}

// A dead receiver is an error to the exporter, not a hang.
func TestClosed(t *testing.T) {
	r, err := otlpfake.Listen()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(r.HTTP), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	_, _, err = exportSpans(t, exp)
	var opErr interface{ Timeout() bool }
	require.Error(t, err)
	assert.False(t, errors.As(err, &opErr) && opErr.Timeout(), "refused, not timed out: %v", err)
}

func post(t *testing.T, url, ctype, encoding string, body []byte) (status int, respBody, respType string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", ctype)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header.Get("Content-Type")
}
