package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// noOTLP clears the OTLP variables a developer's shell may hold, so that
// each test says where spans go.
func noOTLP(t *testing.T) {
	t.Helper()
	for _, v := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
		"OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", otelsink.EnvCaptureContent,
	} {
		t.Setenv(v, "")
	}
}

// pointAt sets the standard variables to the receiver's endpoint for
// protocol ("http/protobuf" or "grpc").
func pointAt(t *testing.T, c *otlpfake.Receiver, protocol string) {
	t.Helper()
	addr := c.HTTP
	if protocol == "grpc" {
		addr = c.GRPC
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
}

// demoHistory runs the demo on its fake providers, with no OTLP endpoint
// set, and returns its history file and records: a real recorder's
// output, with a nested call, a retry, streams, an error and a redacted
// key.
func demoHistory(t *testing.T) (string, []record.Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "spans", "no endpoint, no export: the demo as it always was")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, err := record.ReadJSONL(strings.NewReader(string(data)))
	require.NoError(t, err)
	require.Len(t, recs, 13)
	return path, recs
}

// spanName is the name the conventions give a record's span.
func spanName(r record.Record) string {
	op := "chat"
	if strings.HasPrefix(r.MethodName, "gemini.") {
		op = "generate_content"
	}
	return op + " " + gjson.GetBytes(r.Kwargs, "model").String()
}

// checkTree asserts that the receiver holds one span per record, named
// as the conventions say, one trace per conversation, whose parent links
// are the records' parent_call_id.
func checkTree(t *testing.T, spans map[string]*tracepb.Span, recs []record.Record) {
	t.Helper()
	require.Len(t, spans, len(recs))
	traceOf := map[string]string{} // the records' trace to the spans'
	nested := 0
	for _, r := range recs {
		sp, ok := spans[r.CallID]
		require.True(t, ok, "no span for call %s", r.CallID)
		assert.Equal(t, spanName(r), sp.GetName())
		assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, sp.GetKind())
		require.Len(t, sp.GetTraceId(), 16)
		if want, seen := traceOf[r.TraceID]; seen {
			assert.Equal(t, want, string(sp.GetTraceId()), "one conversation, one trace")
		}
		traceOf[r.TraceID] = string(sp.GetTraceId())
		start, err := record.ParseTime(r.Timestamp)
		require.NoError(t, err)
		assert.Equal(t, start, otlpfake.Time(sp.GetStartTimeUnixNano()), "the span starts when the call did")
		if r.ParentCallID == "" {
			assert.Empty(t, sp.GetParentSpanId(), "call %s has no parent", r.CallID)
			continue
		}
		nested++
		require.Len(t, spans[r.ParentCallID].GetSpanId(), 8)
		assert.Equal(t, spans[r.ParentCallID].GetSpanId(), sp.GetParentSpanId(), "call %s is under its parent", r.CallID)
	}
	distinct := map[string]bool{}
	for _, tr := range traceOf {
		distinct[tr] = true
	}
	assert.Len(t, distinct, len(traceOf), "each conversation its own trace")
	assert.Equal(t, 1, nested, "the demo's tool makes one nested call")
}

// The command's whole path, over OTLP/HTTP and gRPC, to an OTLP
// receiver: a history file a real recorder wrote becomes its spans, one
// per record, in the conversation's tree, by the protocol asked for, with
// the service the environment names, and no content and no key. (The
// integration module runs the built command against the Collector's own
// receiver.)
func TestExport(t *testing.T) {
	noOTLP(t)
	path, recs := demoHistory(t)
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := otlpfake.Start(t)
			pointAt(t, c, protocol)
			t.Setenv("OTEL_SERVICE_NAME", "checkout")
			code, stdout, stderr := runCmd(t, "", "export", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stdout, "progress goes to standard error")
			assert.Contains(t, stderr, "llmhistory export: to http://"+map[bool]string{true: c.GRPC, false: c.HTTP}[protocol == "grpc"]+" ("+protocol+") as service checkout, no content\n")
			assert.Contains(t, stderr, path+": 13 records read\n")
			assert.Contains(t, stderr, "llmhistory export: 13 records from 1 file to ")
			assert.Contains(t, stderr, ": 13 exported, 0 failed, 0 dropped\n")

			otlpfake.WaitFor(t, "a span per record", func() bool { return c.SpanCount() == 13 })
			checkTree(t, c.Spans(t), recs)
			for _, e := range c.Exports() {
				assert.Equal(t, protocol, e.Protocol)
			}
			res := c.Traces()[0].GetResourceSpans()[0].GetResource()
			assert.Equal(t, "checkout", otlpfake.Attrs(res.GetAttributes())["service.name"])
			assert.Empty(t, c.Metrics(), "no metrics unless -metrics: a backfill's would count again")

			wire := c.Wire(t)
			for _, secret := range []string{pastedKey, fakeOpenAIKey, fakeGeminiKey, fakeAnthropicKey} {
				assert.False(t, strings.Contains(wire, secret), "a key reached the collector")
			}
			for _, content := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
				"llmhistory.program_source", "Lisbon", "r[:speaker]"} {
				assert.False(t, strings.Contains(wire, content), "content is off by default: %q was sent", content)
			}
		})
	}
}

// -content sends what was said, redacted again: a key pasted into a
// foreign file's record never reaches the collector. -endpoint and
// -protocol override the variables; -metrics sends the GenAI metrics.
func TestExportFlags(t *testing.T) {
	noOTLP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+otlpfake.FreeAddr(t)) // wrong: the flags win
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	key := "sk-proj-" + strings.Repeat("Export7Key", 4)
	r := testRecord(1, true)
	r.Args = record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, "my key is "+key)})
	r.Kwargs = []byte(`{"model":"gpt-4o-mini"}`)
	answer := record.TextMessage(record.RoleAssistant, "Noted: "+key)
	r.Output = &answer
	path := filepath.Join(t.TempDir(), "foreign.jsonl")
	appendFile(t, path, line(r))

	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := otlpfake.Start(t)
			addr := c.HTTP
			if protocol == "grpc" {
				addr = c.GRPC
			}
			code, _, stderr := runCmd(t, "", "export", "-endpoint", "http://"+addr+"/", "-protocol", protocol,
				"-content", "-metrics", "-service", "backfill", path)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stderr, "as service backfill, content redacted")
			otlpfake.WaitFor(t, "the span", func() bool { return c.SpanCount() == 1 })
			otlpfake.WaitFor(t, "the metrics", func() bool { return len(c.Metrics()) > 0 })
			for _, e := range c.Exports() {
				assert.Equal(t, protocol, e.Protocol, "-protocol wins over the variable, for %s too", e.Signal)
			}
			attrs := otlpfake.Attrs(c.Spans(t)[r.CallID].GetAttributes())
			assert.Contains(t, attrs["gen_ai.input.messages"], "my key is [REDACTED]")
			assert.Contains(t, attrs["gen_ai.output.messages"], "Noted: [REDACTED]")
			assert.False(t, strings.Contains(c.Wire(t), key), "the key reached the collector")
			assert.False(t, strings.Contains(c.Wire(t), key[8:]), "a piece of the key reached the collector")
		})
	}
}

// OTEL_TRACES_SAMPLER is honoured: what it leaves out is said, and is not
// a failure.
func TestExportSampled(t *testing.T) {
	noOTLP(t)
	path, _ := demoHistory(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "http/protobuf")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	code, _, stderr := runCmd(t, "", "export", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, ": 0 exported, 0 failed, 0 dropped, 13 left out by sampling\n")
	assert.Zero(t, c.SpanCount())
}

// Exporting the same file twice sends the same spans: same span and
// trace IDs, same parents, so a backend keeps each once and a backfill
// can be run again.
func TestExportTwiceSameIDs(t *testing.T) {
	noOTLP(t)
	path, recs := demoHistory(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "http/protobuf")
	for range 2 {
		code, _, stderr := runCmd(t, "", "export", path)
		require.Equal(t, exitOK, code, stderr)
	}
	otlpfake.WaitFor(t, "both exports", func() bool { return c.SpanCount() == 2*len(recs) })
	seen := map[string]int{}
	for _, td := range c.Traces() {
		for _, rs := range td.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					seen[fmt.Sprintf("%x/%x/%x", sp.GetTraceId(), sp.GetSpanId(), sp.GetParentSpanId())]++
				}
			}
		}
	}
	assert.Len(t, seen, len(recs), "each record's span has the same IDs both times")
	for id, n := range seen {
		assert.Equal(t, 2, n, id)
	}
}

// A line that is not a record is reported with its file and line and
// skipped; the records around it are sent. An input of which no line is
// a record is not a history: said, the others still sent, exit 1. A
// last line without its newline is a record all the same.
func TestExportBadLines(t *testing.T) {
	noOTLP(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "grpc")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	appendFile(t, good, line(testRecord(1, true))+"this is not json\n"+"{}\n"+line(testRecord(2, false))+strings.TrimSuffix(line(testRecord(3, true)), "\n"))
	code, _, stderr := runCmd(t, "", "export", good)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "good.jsonl:2: invalid JSON at offset 0")
	assert.Contains(t, stderr, "good.jsonl:3: ")
	assert.Contains(t, stderr, "good.jsonl: 3 records read, 2 lines skipped\n")
	assert.Contains(t, stderr, ": 3 exported, 0 failed, 0 dropped; 2 lines skipped\n")
	otlpfake.WaitFor(t, "three spans", func() bool { return c.SpanCount() == 3 })
	spans := c.Spans(t)
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, spans[testRecord(2, false).CallID].GetStatus().GetCode())

	junk := filepath.Join(dir, "junk.bin")
	appendFile(t, junk, "random\nbytes\n")
	other := filepath.Join(dir, "other.jsonl")
	appendFile(t, other, line(testRecord(4, true)))
	code, _, stderr = runCmd(t, "", "export", junk, other)
	assert.Equal(t, exitFailure, code, stderr)
	assert.Contains(t, stderr, "junk.bin: not a history file: none of its 2 lines is a record")
	assert.Contains(t, stderr, "other.jsonl: 1 record read\n")
	assert.Contains(t, stderr, "llmhistory export: 1 record from 2 files to ")
	otlpfake.WaitFor(t, "the other file's span", func() bool { return c.SpanCount() == 4 })

	// A file that cannot be opened stops the export before anything is sent.
	code, _, stderr = runCmd(t, "", "export", other, filepath.Join(dir, "missing.jsonl"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "missing.jsonl: no such file or directory")
	assert.NotContains(t, stderr, "records read")
	assert.Equal(t, 4, c.SpanCount())
}

// - reads standard input, beside files.
func TestExportStdin(t *testing.T) {
	noOTLP(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "http/protobuf")
	path := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, path, line(testRecord(1, true)))
	code, _, stderr := runCmd(t, line(testRecord(2, true))+line(testRecord(3, true)), "export", "-", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "<stdin>: 2 records read\n")
	assert.Contains(t, stderr, "h.jsonl: 1 record read\n")
	assert.Contains(t, stderr, "3 records from 2 files")
	otlpfake.WaitFor(t, "three spans", func() bool { return c.SpanCount() == 3 })
	assert.Len(t, c.Spans(t), 3)
}

// -f follows a file as it grows: what is there, then what is appended
// (a line finished later, a line that is not a record), each within a
// poll or so, until the export is interrupted, which ends it cleanly
// with what was read exported.
func TestExportFollow(t *testing.T) {
	noOTLP(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "http/protobuf")
	path := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, path, line(testRecord(1, true))+line(testRecord(2, true)))

	var errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"export", "-follow", "-poll", "5ms", path}, stdio{in: strings.NewReader(""), out: &errb, err: &errb})
	}()
	otlpfake.WaitFor(t, "the first two spans", func() bool { return c.SpanCount() == 2 })
	half := line(testRecord(3, true))
	appendFile(t, path, half[:30])
	appendFile(t, path, half[30:]+"garbage\n"+line(testRecord(4, false)))
	otlpfake.WaitFor(t, "the appended spans", func() bool { return c.SpanCount() == 4 })
	require.Eventually(t, func() bool { return strings.Contains(errb.String(), "h.jsonl:4: invalid JSON") }, 5*time.Second, 5*time.Millisecond, errb.String())

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code, errb.String())
	case <-time.After(10 * time.Second):
		t.Fatal("export -f did not stop when interrupted")
	}
	assert.Contains(t, errb.String(), "h.jsonl: 4 records read, 1 line skipped\n")
	assert.Contains(t, errb.String(), ": 4 exported, 0 failed, 0 dropped; 1 line skipped\n")
	assert.Len(t, c.Spans(t), 4)
}

// An interrupt stops the reading at the next line and exports every
// record read; without -f the export was cut short, so it says where and
// exits 1. (Standard input is a pipe here: the interrupt comes while its
// writer is still writing.)
func TestExportInterrupted(t *testing.T) {
	noOTLP(t)
	c := otlpfake.Start(t)
	pointAt(t, c, "grpc")
	pr, pw := io.Pipe()
	var errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"export", "-"}, stdio{in: pr, out: &errb, err: &errb})
	}()
	_, err := io.WriteString(pw, line(testRecord(1, true))+line(testRecord(2, true))+line(testRecord(3, true)))
	require.NoError(t, err)
	cancel()
	go func() {
		// The next write ends the pending read; then the writer goes away.
		io.WriteString(pw, line(testRecord(4, true))+line(testRecord(5, true)))
		pw.Close()
	}()
	select {
	case code := <-done:
		assert.Equal(t, exitFailure, code, errb.String())
	case <-time.After(10 * time.Second):
		t.Fatal("export did not stop when interrupted")
	}
	out := errb.String()
	assert.Regexp(t, `llmhistory export: interrupted after <stdin>:\d; what was read is exported`, out)
	sent := c.SpanCount()
	assert.GreaterOrEqual(t, sent, 3, "every record read before the interrupt is exported")
	assert.Contains(t, out, fmt.Sprintf("llmhistory export: %d records from 1 file to http://%s (grpc): %d exported, 0 failed, 0 dropped\n", sent, c.GRPC, sent),
		"as many exported as were read")

	// Interrupted before it began: nothing read, said so.
	code, _, stderr := runCmdCtx(t, canceled(), "", "export", "-endpoint", "http://"+c.HTTP, "-")
	assert.Equal(t, exitFailure, code, stderr)
	assert.Contains(t, stderr, "interrupted before <stdin>")
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// runCmdCtx is runCmd with a context.
func runCmdCtx(t *testing.T, ctx context.Context, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = run(ctx, args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

// A collector that refuses the spans, or none listening, is a failure
// with a message that says so, and reading stops: exit 1.
func TestExportFails(t *testing.T) {
	noOTLP(t)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, path, line(testRecord(1, true))+line(testRecord(2, true)))

	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run("refused/"+protocol, func(t *testing.T) {
			c := otlpfake.StartRefusing(t, "tenant over quota")
			pointAt(t, c, protocol)
			code, _, stderr := runCmd(t, "", "export", path)
			assert.Equal(t, exitFailure, code, stderr)
			assert.Contains(t, stderr, ": 0 exported, 2 failed, 0 dropped\n")
			assert.Contains(t, stderr, "llmhistory export: the collector did not take 2 spans: ")
			assert.Contains(t, stderr, "tenant over quota")
			assert.Contains(t, stderr, "run the export again once the collector takes the spans")
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+otlpfake.FreeAddr(t)) // nothing listens there
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")                           // ms: the exporter's retries end soon
		code, _, stderr := runCmd(t, "", "export", path)
		assert.Equal(t, exitFailure, code, stderr)
		assert.Contains(t, stderr, "2 failed")
		assert.Contains(t, stderr, "the collector did not take 2 spans: ")
	})
}

// With no endpoint, export says which variable to set; bad flags are
// usage errors.
func TestExportUsage(t *testing.T) {
	noOTLP(t)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, path, line(testRecord(1, true)))
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{path}, nil, "no OTLP endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT (a Collector on this machine: http://localhost:4318), or give -endpoint"},
		{[]string{path}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, `OTLP protocol "http/json": want http/protobuf or grpc`},
		{[]string{path}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_TRACES_EXPORTER": "none"}, "OTEL_TRACES_EXPORTER=none"},
		{[]string{"-endpoint", "localhost:4318", path}, nil, "-endpoint must be a URL such as http://localhost:4318"},
		{[]string{"-endpoint", "http://localhost:4318"}, nil, "want at least one FILE"},
		{[]string{"-endpoint", "http://localhost:4318", "-f", path, path}, nil, "-f follows exactly one FILE"},
		{[]string{"-endpoint", "http://localhost:4318", "-f", "-"}, nil, "-f follows exactly one FILE"},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		code, _, stderr := runCmd(t, "", append([]string{"export"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
	code, stdout, _ := runCmd(t, "", "help", "export")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "idempotent")
	assert.Contains(t, stdout, "OTEL_EXPORTER_OTLP_ENDPOINT")
}

// With an OTLP endpoint set, the demo exports its conversation as it
// records it: every record a span in the conversation's tree, the GenAI
// metrics, no key and no content; and says where they went.
func TestDemoExports(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			noOTLP(t)
			c := otlpfake.Start(t)
			pointAt(t, c, protocol)
			path := filepath.Join(t.TempDir(), "history.jsonl")
			code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stderr, "spans: http://")
			assert.Contains(t, stderr, " ("+protocol+") as service llmhistory-demo, no content\n")
			assert.Regexp(t, `\n  13 spans exported to http://[0-9.:]+ \(`+protocol+`\) as service llmhistory-demo, no content\.\n`, stderr)

			data, err := os.ReadFile(path)
			require.NoError(t, err)
			recs, err := record.ReadJSONL(strings.NewReader(string(data)))
			require.NoError(t, err)
			otlpfake.WaitFor(t, "a span per record", func() bool { return c.SpanCount() == 13 })
			checkTree(t, c.Spans(t), recs)
			otlpfake.WaitFor(t, "the metrics", func() bool { return len(c.Metrics()) > 0 })
			var calls uint64
			all := c.Metrics()
			md := all[len(all)-1]
			for _, rm := range md.GetResourceMetrics() {
				for _, sm := range rm.GetScopeMetrics() {
					for _, m := range sm.GetMetrics() {
						if m.GetName() == "gen_ai.client.operation.duration" {
							for _, dp := range m.GetHistogram().GetDataPoints() {
								calls += dp.GetCount()
							}
						}
					}
				}
			}
			assert.Equal(t, uint64(13), calls, "every call measured")
			wire := c.Wire(t)
			for _, secret := range []string{pastedKey, fakeOpenAIKey, fakeGeminiKey, fakeAnthropicKey} {
				assert.False(t, strings.Contains(wire, secret), "a key reached the collector")
			}
			assert.False(t, strings.Contains(wire, "Lisbon"), "no content by default")
		})
	}

	// Only the traces endpoint: spans, and no metrics sent elsewhere.
	t.Run("traces endpoint", func(t *testing.T) {
		noOTLP(t)
		c := otlpfake.Start(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://"+c.HTTP+"/v1/traces")
		path := filepath.Join(t.TempDir(), "history.jsonl")
		code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stderr, "  13 spans exported to http://"+c.HTTP+"/v1/traces (http/protobuf)")
		assert.NotContains(t, stderr, "(OTLP: ", "no metrics went to a default address")
		otlpfake.WaitFor(t, "a span per record", func() bool { return c.SpanCount() == 13 })
		assert.Empty(t, c.Metrics())
	})

	// A Collector that is not there: the conversation and its file are
	// whole, and the demo says the spans did not go.
	t.Run("unreachable", func(t *testing.T) {
		noOTLP(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+otlpfake.FreeAddr(t))
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
		path := filepath.Join(t.TempDir(), "history.jsonl")
		code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
		assert.Equal(t, exitFailure, code, stderr)
		assert.Contains(t, stderr, "13 records in "+path)
		assert.Contains(t, stderr, "llmhistory demo: exporting spans to http://")
		assert.Contains(t, stderr, "the collector did not take 13 spans")
	})
}
