package otlpfake_test

import (
	"bytes"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
)

// Whatever OTLP/JSON decodes encodes again, and that encoding decodes to
// itself: IDs go hex to bytes and back, and no input panics.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, seed := range []string{
		`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}}]},"scopeSpans":[{"scope":{"name":"s"},"spans":[{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","parentSpanId":"eee19b7ec3c1b173","name":"chat","kind":3,"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":1544712661000000000,"links":[{"traceId":"5b8efff798038103d269b633813fc60d","spanId":"eee19b7ec3c1b175"}],"attributes":[{"key":"l","value":{"arrayValue":{"values":[{"intValue":"1"},{"doubleValue":0.5},{"kvlistValue":{"values":[{"key":"traceId","value":{"stringValue":"not an id"}}]}}]}}}],"status":{"code":2,"message":"bad"}}]}]}]}`,
		`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"d","unit":"s","histogram":{"aggregationTemporality":2,"dataPoints":[{"count":"2","sum":1.5,"bucketCounts":["1","1"],"explicitBounds":[1],"exemplars":[{"asDouble":0.5,"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174"}]}]}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","severityNumber":13,"body":{"stringValue":"a call"},"traceId":"5b8efff798038103d269b633813fc60c","spanId":"","attributes":[{"key":"b","value":{"bytesValue":"AAE="}}]}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AAECAwQFBgcICQoLDA0ODw=="}]}]}]}`,
		`{"trace_id":"zz"}`, `{}`, `[]`, `null`, `{"resourceSpans":`, `{} {}`, "\x00",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range []proto.Message{new(coltracepb.ExportTraceServiceRequest), new(colmetricpb.ExportMetricsServiceRequest), new(collogspb.ExportLogsServiceRequest)} {
			if otlpfake.UnmarshalJSON(data, m) != nil {
				continue
			}
			b1, err := otlpfake.MarshalJSON(m)
			if err != nil {
				t.Fatalf("%T decoded from %q does not encode: %v", m, data, err)
			}
			again := m.ProtoReflect().New().Interface()
			if err := otlpfake.UnmarshalJSON(b1, again); err != nil {
				t.Fatalf("%T: its own encoding %s does not decode: %v", m, b1, err)
			}
			b2, err := otlpfake.MarshalJSON(again)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b1, b2) {
				t.Fatalf("%T: encoded %s, then %s", m, b1, b2)
			}
		}
	})
}

// MarshalJSON writes IDs in hex, as the OTLP specification (and the
// Collector's JSON) has them, where protojson has base64.
func TestMarshalJSONWritesIDsInHex(t *testing.T) {
	b, err := otlpfake.MarshalJSON(&coltracepb.ExportTraceServiceRequest{})
	if err != nil || string(b) != "{}" {
		t.Fatalf("an empty request: %s, %v", b, err)
	}
	var req coltracepb.ExportTraceServiceRequest
	in := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"chat"}]}]}]}`
	if err := otlpfake.UnmarshalJSON([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	b, err = otlpfake.MarshalJSON(&req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"chat","spanId":"eee19b7ec3c1b174","traceId":"5b8efff798038103d269b633813fc60c"}]}]}]}`
	if string(b) != want {
		t.Errorf("MarshalJSON = %s\nwant          %s", b, want)
	}
}
