package integration_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/llmhistory/llmhistory/integration/internal/otlptest"
	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// llmhistory builds the command, once for the test binary: package main's
// own tests cannot live in this module, so these run the command as a
// user does.
func llmhistory(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH: the command cannot be built")
	}
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "llmhistory-integration-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "llmhistory")
		// Built in the root module, with its own go.mod and go.sum: the
		// command links what this module does not (the store's drivers).
		build := exec.Command(goTool, "build", "-o", binPath, "./cmd/llmhistory")
		build.Dir = ".."
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	require.NoError(t, buildErr, "building the command")
	return binPath
}

// run runs the command with args and env on top of this process's
// environment, less every OTLP variable a developer's shell may hold.
func run(t *testing.T, env map[string]string, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(llmhistory(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, otelsink.EnvCaptureContent+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), errb.String()
	}
	require.NoError(t, err, errb.String())
	return 0, errb.String()
}

// keyShaped matches what the demo's keys look like (OpenAI, Anthropic
// and Gemini keys); a redacted one is [REDACTED].
var keyShaped = regexp.MustCompile(`sk-[A-Za-z0-9_-]{16,}|AIza[A-Za-z0-9_-]{16,}`)

// The built command's export, over OTLP/HTTP and gRPC, to the Collector's
// own receiver: the demo's history (a real recorder's: a nested call, a
// retry, streams, an error, a pasted key) arrives as one span per record
// in its conversation's tree, with the service the environment names,
// no metrics, no content and no key.
func TestExportToTheCollector(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	code, stderr := run(t, nil, "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, err := record.ReadJSONL(bytes.NewReader(data))
	require.NoError(t, err)
	require.Len(t, recs, 13)

	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := otlptest.Start(t, nil)
			addr := map[bool]string{true: c.GRPC, false: c.HTTP}[protocol == "grpc"]
			code, stderr := run(t, map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_SERVICE_NAME": "checkout",
			}, "export", path)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stderr, "llmhistory export: to http://"+addr+" ("+protocol+") as service checkout, no content\n")
			assert.Contains(t, stderr, ": 13 exported, 0 failed, 0 dropped\n")

			otlpfake.WaitFor(t, "a span per record", func() bool { return c.SpanCount() == 13 })
			checkTree(t, c.Spans(t), recs)
			res := c.Traces()[0].GetResourceSpans()[0].GetResource()
			assert.Equal(t, "checkout", otlpfake.Attrs(res.GetAttributes())["service.name"])
			assert.Empty(t, c.Metrics(), "no metrics unless -metrics")

			wire := c.Wire(t)
			assert.NotRegexp(t, keyShaped, wire, "a key reached the collector")
			for _, content := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "Lisbon"} {
				assert.NotContains(t, wire, content, "content is off by default")
			}
		})
	}
}

// -content sends what was said, redacted again on the way: a key pasted
// into a foreign file's record reaches the Collector as [REDACTED].
func TestExportContentToTheCollector(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Integr4tion", 3)
	r := record.Record{CallID: "foreign-1", Timestamp: "2026-11-22T10:00:01Z", Speaker: record.SpeakerUser,
		MethodName: "openai.chat.completions.create", Outcome: record.Success("chat.completion"), Attempts: 1,
		Args:   []byte(`[{"role":"user","content":"my key is ` + key + `"}]`),
		Kwargs: []byte(`{"model":"gpt-4o-mini"}`), Output: answer("Noted: " + key)}
	path := filepath.Join(t.TempDir(), "foreign.jsonl")
	require.NoError(t, os.WriteFile(path, append(r.AppendJSON(nil), '\n'), 0o644))

	c := otlptest.Start(t, nil)
	code, stderr := run(t, nil, "export", "-endpoint", "http://"+c.GRPC, "-protocol", "grpc", "-content", "-service", "backfill", path)
	require.Equal(t, 0, code, stderr)
	otlpfake.WaitFor(t, "the span", func() bool { return c.SpanCount() == 1 })
	attrs := otlpfake.Attrs(c.Spans(t)["foreign-1"].GetAttributes())
	assert.Contains(t, attrs["gen_ai.input.messages"], "my key is [REDACTED]")
	assert.Contains(t, attrs["gen_ai.output.messages"], "Noted: [REDACTED]")
	assert.NotContains(t, c.Wire(t), key[8:], "a piece of the key reached the collector")
}

// A Collector whose pipeline refuses the spans: exit 1, with the reason
// the Collector gave, over both protocols.
func TestExportRefusedByTheCollector(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	var lines []byte
	for _, id := range []string{"refused-1", "refused-2"} {
		r := record.Record{CallID: id, Timestamp: "2026-11-22T10:00:01Z", Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create", Outcome: record.Success("chat.completion"), Attempts: 1}
		lines = append(r.AppendJSON(lines), '\n')
	}
	require.NoError(t, os.WriteFile(path, lines, 0o644))
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := otlptest.StartRefusing(t, "tenant over quota")
			addr := map[bool]string{true: c.GRPC, false: c.HTTP}[protocol == "grpc"]
			code, stderr := run(t, nil, "export", "-endpoint", "http://"+addr, "-protocol", protocol, path)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, ": 0 exported, 2 failed, 0 dropped\n")
			assert.Contains(t, stderr, "llmhistory export: the collector did not take 2 spans: ")
			assert.Contains(t, stderr, "tenant over quota")
		})
	}
}

// checkTree asserts that the collector holds one span per record, named
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
		op := "chat"
		if strings.HasPrefix(r.MethodName, "gemini.") {
			op = "generate_content"
		}
		assert.Equal(t, op+" "+gjson.GetBytes(r.Kwargs, "model").String(), sp.GetName())
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

// answer is a record's answer of text alone.
func answer(text string) *record.Message {
	m := record.TextMessage(record.RoleAssistant, text)
	return &m
}
