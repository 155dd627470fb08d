package otelsink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// 6. By default, without otelsink.Middleware and without
// Options.ServerAddress, a span has the server the recorder read from
// the request's URL, live and from a file (llmhistory export); the
// metrics too. Options.ServerAddress still wins.
func TestServerFromTheRecord(t *testing.T) {
	srv := cannedServer(t, map[string]string{"/chat/completions": "openai/openai_chat_response.json"})
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)

	// Live: a recorder, no otelsink.Middleware. A JSONL file beside it.
	var file bytes.Buffer
	jsonl := record.NewJSONLWith(&file, record.JSONLOptions{FlushInterval: -1})
	a := newSDKApp(t, otelsink.Options{}, false, middleware.WithSink(jsonl))
	id := middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/chat/completions", chatBody)
	attrs := attrsOf(a.exported(t)[id])
	assert.Equal(t, "127.0.0.1", attrs["server.address"])
	assert.Equal(t, int64(port), attrs["server.port"])
	checkMetricServer(t, a, "127.0.0.1", port)

	// From the file, as llmhistory export appends it.
	require.NoError(t, a.rec.Close())
	records, err := record.ReadJSONL(bytes.NewReader(file.Bytes()))
	require.NoError(t, err)
	require.Len(t, records, 1)
	for _, tc := range []struct {
		opts       otelsink.Options
		host       string
		port       int64
		whoDecided string
	}{
		{otelsink.Options{}, "127.0.0.1", int64(port), "the record"},
		{otelsink.Options{ServerAddress: func(record.Record) string { return "api.openai.com" }}, "api.openai.com", 443, "Options.ServerAddress wins"},
	} {
		exp := tracetest.NewInMemoryExporter()
		tc.opts.SpanExporter = exp
		sink, err := otelsink.New(tc.opts)
		require.NoError(t, err)
		require.NoError(t, sink.Append(context.Background(), records[0]))
		require.NoError(t, sink.Flush())
		spans := exp.GetSpans()
		require.NoError(t, sink.Close())
		require.Len(t, spans, 1)
		attrs := attrsOf(spans[0])
		assert.Equal(t, tc.host, attrs["server.address"], tc.whoDecided)
		assert.Equal(t, tc.port, attrs["server.port"], tc.whoDecided)
	}
}

func checkMetricServer(t *testing.T, a *sdkApp, host string, port int) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, a.reader.Collect(context.Background(), &rm))
	require.NotEmpty(t, rm.ScopeMetrics)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		for _, set := range dataPointSets(m) {
			v, _ := set.Value("server.address")
			assert.Equal(t, host, v.AsString(), m.Name)
			p, _ := set.Value("server.port")
			assert.Equal(t, int64(port), p.AsInt64(), m.Name)
		}
	}
}

// 7. A response that called tools gives output messages with tool_call
// parts, and its reasoning a reasoning part, for each provider, read from
// captured responses through a real recorder with WithOutput; the finish
// reason is tool_call, Gemini's STOP included. Every message and part
// holds to the conventions' output messages schema (v1.41.0's file).
func TestOutputMessagesOfToolCallsAndReasoning(t *testing.T) {
	t.Setenv(otelsink.EnvCaptureContent, "SPAN_ONLY")
	const (
		anthropicBody = `{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[{"role":"user","content":"What's the weather in Boston?"}]}`
		geminiBody    = `{"contents":[{"role":"user","parts":[{"text":"How many days until New Year's Eve?"}]}]}`
		geminiPath    = "/v1beta/models/gemini-2.5-pro:generateContent"
	)
	schema := loadSchema(t)
	for _, tc := range []struct {
		file, path, body string
		raw              string // the provider's finish reason
		parts            string // the output message's parts
	}{
		{"openai/chat_response_reasoning_content_tool_calls.json", "/v1/chat/completions", chatBody, "tool_calls",
			`[{"type":"reasoning","content":"The user is asking for the weather in Beijing. I have a function available called ` + "`get_weather`" + ` that takes a location parameter (the city name) and returns the current weather for that location.\n\nI need to call the ` + "`get_weather`" + ` function with \"Beijing\" as the location parameter."},` +
				`{"type":"tool_call","id":"get_weather:0","name":"get_weather","arguments":{"location":"Beijing"}}]`},
		{"openai/openai_chat_response_tool_calls.json", "/v1/chat/completions", chatBody, "tool_calls", ""},
		{"anthropic/message_thinking_tool_use.json", "/v1/messages", anthropicBody, "tool_use",
			`[{"type":"reasoning","content":"The user is asking about the weather in Boston. I have access to a get_weather function that takes a location parameter. I should call this function with \"Boston\" as the location."},` +
				`{"type":"tool_call","id":"toolu_01E8myeoMN7KKGeCQnAgGd3F","name":"get_weather","arguments":{"location":"Boston"}}]`},
		{"gemini/gemini_generate_response_thinking_functioncall.json", geminiPath, geminiBody, "STOP", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			srv := cannedServer(t, map[string]string{tc.path: tc.file})
			a := newSDKApp(t, otelsink.Options{}, false, middleware.WithOutput())
			id := middleware.NewCallID()
			a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+tc.path, tc.body)
			attrs := attrsOf(a.exported(t)[id])
			assert.Equal(t, []string{"tool_call"}, attrs["gen_ai.response.finish_reasons"])
			assert.Equal(t, tc.raw, attrs["llmhistory.outcome.finish_reason"])

			out, ok := attrs["gen_ai.output.messages"].(string)
			require.True(t, ok, "no output messages")
			schema.check(t, out)
			var msgs []struct {
				Role         string            `json:"role"`
				Parts        []json.RawMessage `json:"parts"`
				FinishReason string            `json:"finish_reason"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &msgs))
			require.Len(t, msgs, 1)
			assert.Equal(t, "assistant", msgs[0].Role)
			assert.Equal(t, "tool_call", msgs[0].FinishReason)
			if tc.parts != "" {
				parts, _ := json.Marshal(msgs[0].Parts)
				assert.JSONEq(t, tc.parts, string(parts))
			}
			var calls int
			for _, p := range msgs[0].Parts {
				var part struct{ Type, Name string }
				require.NoError(t, json.Unmarshal(p, &part))
				if part.Type == "tool_call" {
					calls++
					assert.NotEmpty(t, part.Name)
				}
			}
			assert.Positive(t, calls, "tool_call parts")
		})
	}

	// Gemini's: the thought summary, then the call, with no id.
	srv := cannedServer(t, map[string]string{geminiPath: "gemini/gemini_generate_response_thinking_functioncall.json"})
	a := newSDKApp(t, otelsink.Options{}, false, middleware.WithOutput())
	id := middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+geminiPath, geminiBody)
	var msgs []struct{ Parts []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(attrsOf(a.exported(t)[id])["gen_ai.output.messages"].(string)), &msgs))
	require.Len(t, msgs[0].Parts, 2)
	assert.Equal(t, "reasoning", msgs[0].Parts[0]["type"])
	assert.Contains(t, msgs[0].Parts[0]["content"], "**Thinking Through the New Year's Eve Calculation**")
	assert.Equal(t, map[string]any{"type": "tool_call", "name": "now"}, msgs[0].Parts[1], "no arguments")

	// With WithoutOutput the record has no answer: no output messages,
	// and Gemini's STOP says stop, as nothing says otherwise.
	a = newSDKApp(t, otelsink.Options{}, false, middleware.WithoutOutput())
	id = middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+geminiPath, geminiBody)
	attrs := attrsOf(a.exported(t)[id])
	assert.NotContains(t, attrs, "gen_ai.output.messages")
	assert.Equal(t, []string{"stop"}, attrs["gen_ai.response.finish_reasons"])
}

// 7. A streamed Responses API call's reasoning summaries are the
// reasoning part of its output message, beside its text.
func TestOutputMessagesOfAStreamedResponse(t *testing.T) {
	t.Setenv(otelsink.EnvCaptureContent, "SPAN_ONLY")
	srv := cannedServer(t, map[string]string{"/responses": "openai/responses_stream_reasoning_summary.sse"})
	a := newSDKApp(t, otelsink.Options{}, false, middleware.WithOutput())
	id := middleware.NewCallID()
	a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/responses",
		`{"model":"o3-mini","stream":true,"input":"How do I cross the street?","reasoning":{"effort":"high","summary":"detailed"}}`)
	attrs := attrsOf(a.exported(t)[id])
	out := attrs["gen_ai.output.messages"].(string)
	loadSchema(t).check(t, out)
	var msgs []struct {
		Parts        []map[string]any
		FinishReason string `json:"finish_reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &msgs))
	require.Len(t, msgs[0].Parts, 2)
	assert.Equal(t, "reasoning", msgs[0].Parts[0]["type"])
	assert.Contains(t, msgs[0].Parts[0]["content"], "**Providing street crossing instructions**")
	assert.Equal(t, "text", msgs[0].Parts[1]["type"])
	assert.Equal(t, "stop", msgs[0].FinishReason, "completed, without a tool call")
	assert.Equal(t, "default", attrs["openai.response.service_tier"])
}

// 10. OpenAI's response service tier and system fingerprint, read from
// captured responses, whole and streamed.
func TestOpenAIResponseTierAndFingerprint(t *testing.T) {
	for _, tc := range []struct {
		file, body        string
		tier, fingerprint any
	}{
		{"openai_chat_response.json", chatBody, "default", nil},
		{"openai_chat_stream.sse", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"Weather?"}]}`, nil, "fp_143bb8492c"},
	} {
		srv := cannedServer(t, map[string]string{"/chat/completions": "openai/" + tc.file})
		a := newSDKApp(t, otelsink.Options{}, false)
		id := middleware.NewCallID()
		a.post(t, middleware.WithCallID(context.Background(), id), srv.URL+"/v1/chat/completions", tc.body)
		attrs := attrsOf(a.exported(t)[id])
		assert.Equal(t, tc.tier, attrs["openai.response.service_tier"], tc.file)
		assert.Equal(t, tc.fingerprint, attrs["openai.response.system_fingerprint"], tc.file)
		assert.NotContains(t, attrs, "llmhistory.service_tier")
	}
}

// outputSchema is the conventions' JSON schema of gen_ai.output.messages,
// docs/gen-ai/gen-ai-output-messages.json of
// open-telemetry/semantic-conventions v1.41.0 (commit e018fe6f), copied
// into testdata.
type outputSchema struct {
	root map[string]any
	defs map[string]any
}

func loadSchema(t *testing.T) outputSchema {
	t.Helper()
	b, err := os.ReadFile("testdata/gen-ai-output-messages.json")
	require.NoError(t, err)
	var s outputSchema
	require.NoError(t, json.Unmarshal(b, &s.root))
	s.defs = s.root["$defs"].(map[string]any)
	return s
}

// check validates the attribute's value against the schema, and each part
// of the types this package writes (text, tool_call, reasoning) against
// that part's own definition, which the schema's GenericPart would not
// enforce; the finish reason must be one of the schema's values.
func (s outputSchema) check(t *testing.T, value string) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(value), &v))
	require.NoError(t, s.validate(s.root, v, "$"))
	defOf := map[string]string{"text": "TextPart", "tool_call": "ToolCallRequestPart", "reasoning": "ReasoningPart"}
	reasons := s.defs["FinishReason"].(map[string]any)["enum"].([]any)
	for i, m := range v.([]any) {
		msg := m.(map[string]any)
		assert.Contains(t, reasons, msg["finish_reason"], "message %d", i)
		for j, p := range msg["parts"].([]any) {
			typ := p.(map[string]any)["type"].(string)
			def, ok := defOf[typ]
			require.True(t, ok, "part type %q", typ)
			require.NoError(t, s.validate(s.defs[def].(map[string]any), p, fmt.Sprintf("$[%d].parts[%d]", i, j)))
		}
	}
}

// validate checks v against the keywords the schema uses: $ref, anyOf,
// type, const, enum, required, properties and items.
func (s outputSchema) validate(schema map[string]any, v any, at string) error {
	if ref, ok := schema["$ref"].(string); ok {
		return s.validate(s.defs[ref[len("#/$defs/"):]].(map[string]any), v, at)
	}
	if anyOf, ok := schema["anyOf"].([]any); ok {
		for _, alt := range anyOf {
			if s.validate(alt.(map[string]any), v, at) == nil {
				return nil
			}
		}
		return fmt.Errorf("%s: %v matches none of anyOf", at, v)
	}
	if typ, ok := schema["type"].(string); ok && !isType(v, typ) {
		return fmt.Errorf("%s: %v is not a %s", at, v, typ)
	}
	if c, ok := schema["const"]; ok && c != v {
		return fmt.Errorf("%s: %v is not %v", at, v, c)
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			return fmt.Errorf("%s: %v is none of %v", at, v, enum)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range asSlice(schema["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: %s is required", at, r)
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, pv := range obj {
			if ps, ok := props[k].(map[string]any); ok {
				if err := s.validate(ps, pv, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range arr {
				if err := s.validate(items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func isType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	case "number", "integer":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return true
}
