package otelsink

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"

	"github.com/llmhistory/llmhistory/record"
)

// errorsHandled collects what is given to OpenTelemetry's error handler.
type errorsHandled struct{ errs []error }

func (h *errorsHandled) Handle(err error) { h.errs = append(h.errs, err) }

// Content follows the option, then the environment variable, whose
// values are those of the GenAI instrumentations: SPAN_ONLY and
// SPAN_AND_EVENT as the Python GenAI utilities define them, and true,
// capture on the spans; EVENT_ONLY, NO_CONTENT and false do not. Any
// other value captures nothing and is reported to otel.Handle.
func TestContentSwitch(t *testing.T) {
	h := &errorsHandled{}
	otel.SetErrorHandler(h)
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	for _, tc := range []struct {
		opt      Content
		env      string
		want     bool
		reported bool
	}{
		{ContentFromEnv, "", false, false},
		{ContentFromEnv, "true", true, false},
		{ContentFromEnv, "TRUE", true, false},
		{ContentFromEnv, "SPAN_ONLY", true, false},
		{ContentFromEnv, "span_and_event", true, false},
		{ContentFromEnv, " SPAN_AND_EVENT ", true, false},
		{ContentFromEnv, "EVENT_ONLY", false, false},
		{ContentFromEnv, "NO_CONTENT", false, false},
		{ContentFromEnv, "false", false, false},
		{ContentFromEnv, "1", false, true}, // not a value of the variable: said, and off
		{ContentOff, "SPAN_ONLY", false, false},
		{ContentOn, "", true, false},
		{ContentOn, "false", true, false},
	} {
		t.Setenv(EnvCaptureContent, tc.env)
		h.errs = nil
		s, exp, _ := testSink(t, Options{Content: tc.opt})
		a := attrMap(spansOf(t, s, exp, chatRecord())[0].Attributes)
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "llmhistory.program_source"} {
			_, has := a[k]
			assert.Equal(t, tc.want, has, "Content %d with %s=%q: %s", tc.opt, EnvCaptureContent, tc.env, k)
		}
		assert.Equal(t, tc.want, tc.opt.OnSpans(), "OnSpans, %s=%q", EnvCaptureContent, tc.env)
		if tc.reported {
			require.NotEmpty(t, h.errs, "%s=%q was not reported", EnvCaptureContent, tc.env)
			assert.ErrorContains(t, h.errs[0], EnvCaptureContent+`="1"`)
		} else {
			assert.Empty(t, h.errs, "%s=%q", EnvCaptureContent, tc.env)
		}
	}
}

// A record's args (messages of the message model, whatever the
// provider) become the conventions' system instructions (the system
// messages they begin with) and input messages.
func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		name, args       string
		system, messages string
	}{
		{"tool calls, results and media",
			`[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},` +
				`{"role":"user","parts":[{"type":"text","content":"Weather?"},{"type":"media","mime_type":"image/png","size":9},{"type":"media","mime_type":"application/pdf","uri":"gs://b/r.pdf"}]},` +
				`{"role":"assistant","parts":[{"type":"reasoning","content":"hmm"},{"type":"tool_call","id":"call_1","name":"weather","arguments":{"city":"Paris"}}]},` +
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","content":"rainy"}]}]`,
			`[{"content":"Be brief.","type":"text"}]`,
			`[{"role":"user","parts":[{"content":"Weather?","type":"text"},{"type":"media","mime_type":"image/png","modality":"image","size":9},{"type":"uri","uri":"gs://b/r.pdf","mime_type":"application/pdf","modality":"application"}]},` +
				`{"role":"assistant","parts":[{"content":"hmm","type":"reasoning"},{"arguments":{"city":"Paris"},"id":"call_1","name":"weather","type":"tool_call"}]},` +
				`{"role":"tool","parts":[{"id":"call_1","response":"rainy","type":"tool_call_response"}]}]`},
		{"a system message later in the conversation is an input message",
			`[{"role":"user","parts":[{"type":"text","content":"Hi"}]},{"role":"system","parts":[{"type":"text","content":"Now be formal."}]},` +
				`{"role":"assistant","parts":[{"type":"refusal","content":"No."},{"type":"other","name":"cachePoint","data":{"type":"default"}}]}]`,
			``,
			`[{"role":"user","parts":[{"content":"Hi","type":"text"}]},{"role":"system","parts":[{"content":"Now be formal.","type":"text"}]},` +
				`{"role":"assistant","parts":[{"content":"No.","type":"text"},{"type":"cachePoint","content":{"type":"default"}}]}]`},
		{"an element that is not a message, as it was written", `["…[3 earlier items cut]",[1,2,3]]`, ``,
			`[{"role":"user","parts":[{"type":"other","content":"…[3 earlier items cut]"}]},{"role":"user","parts":[{"type":"other","content":[1,2,3]}]}]`},
		{"not an array", `{}`, ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.Record{Args: json.RawMessage(tc.args)}
			a := attrMap(contentAttributes(&r, "chat", DefaultMaxContentBytes, nil))
			if tc.system == "" {
				assert.NotContains(t, a, "gen_ai.system_instructions")
			} else {
				assert.JSONEq(t, tc.system, a["gen_ai.system_instructions"].(string))
			}
			if tc.messages == "" {
				assert.NotContains(t, a, "gen_ai.input.messages")
			} else {
				assert.JSONEq(t, tc.messages, a["gen_ai.input.messages"].(string))
			}
		})
	}
}

// text is a message of one text part, as the model encodes it.
func text(role, content string) string {
	m := record.TextMessage(role, content)
	return string(m.AppendJSON(nil))
}

// answer is an answer of text.
func answer(content string) *record.Message {
	m := record.TextMessage(record.RoleAssistant, content)
	return &m
}

// Content is redacted again, whatever the record says.
func TestContentRedacted(t *testing.T) {
	r := record.Record{
		Args:          json.RawMessage(`[` + text("user", "my key is "+fakeKey) + `]`),
		Output:        answer("use Bearer " + fakeKey),
		ProgramSource: "client = OpenAI(api_key='" + fakeKey + "')",
		Outcome:       record.Success("chat.completion"),
	}
	r.Outcome.FinishReason = "stop"
	attrs := contentAttributes(&r, "chat", DefaultMaxContentBytes, nil)
	require.Len(t, attrs, 3)
	for _, kv := range attrs {
		assert.NotContains(t, kv.Value.AsString(), fakeKey, kv.Key)
		assert.Contains(t, kv.Value.AsString(), "[REDACTED]", kv.Key)
	}
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"use Bearer [REDACTED]"}],"finish_reason":"stop"}]`,
		attrMap(attrs)["gen_ai.output.messages"].(string))
}

// Content longer than MaxContentBytes keeps the latest messages, then
// cuts texts, and says which attributes it cut.
func TestContentBounded(t *testing.T) {
	const max = 200
	long := strings.Repeat("é", 300) // two bytes each: cuts must fall between runes
	var turns []string
	for i := range 10 {
		turns = append(turns, text("user", "turn "+string(rune('0'+i))))
	}
	r := record.Record{
		Args:          json.RawMessage(`[` + text("system", long) + `,` + strings.Join(turns, ",") + `]`),
		Output:        answer(long),
		ProgramSource: long,
	}
	a := attrMap(contentAttributes(&r, "chat", max, nil))
	for _, k := range []string{"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages", "llmhistory.program_source"} {
		v := a[k].(string)
		assert.LessOrEqual(t, len(v), max, k)
		assert.True(t, strings.ToValidUTF8(v, "?") == v, "%s is cut inside a rune", k)
		if k != "llmhistory.program_source" {
			assert.True(t, json.Valid([]byte(v)), "%s is no longer JSON: %s", k, v)
		}
	}
	assert.Contains(t, a["gen_ai.input.messages"], `turn 9`, "the latest turns are kept")
	assert.NotContains(t, a["gen_ai.input.messages"], `turn 0`, "the earliest go first")
	assert.Contains(t, a["gen_ai.system_instructions"], cutMark)
	assert.Contains(t, a["gen_ai.output.messages"], cutMark)
	assert.ElementsMatch(t, []string{"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages", "llmhistory.program_source"},
		a["llmhistory.content_truncated"])

	// Content that fits is not marked.
	short := record.Record{Args: json.RawMessage(`[` + text("user", "hi") + `]`)}
	assert.NotContains(t, attrMap(contentAttributes(&short, "chat", max, nil)), "llmhistory.content_truncated")
}

// Any args, output and kwargs: no panic, every content attribute valid
// JSON of at most max bytes, and never a key-shaped string.
func FuzzContent(f *testing.F) {
	f.Add([]byte(`[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`), "out", []byte(`{"model":"m","temperature":0.2}`), 200)
	f.Add([]byte(`[{"role":"system","parts":[{"type":"text","content":"x"}]},{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{}}]}]`), "", []byte(`{}`), 64)
	f.Add([]byte(`[{"role":"tool","parts":[{"type":"tool_call_response","id":"c","content":"{\"a\":1}"}]},"s",[1],null,{"role":"user","content":"hi"}]`), "é", []byte(`[`), 10)
	f.Fuzz(func(t *testing.T, args []byte, output string, kwargs []byte, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		readKwargs(kwargs)
		// The output again as a tool call's arguments (JSON or not) and
		// as reasoning: every part of an output message is bounded.
		out := &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
			{Type: record.PartReasoning, Content: output},
			{Type: record.PartText, Content: output + " " + fakeKey},
			{Type: record.PartToolCall, ID: "c", Name: "f", Arguments: record.ArgumentsJSON(output)},
			{Type: record.PartToolCall, Name: "g", Arguments: record.ArgumentsJSON(string(kwargs))},
		}}
		r := record.Record{Args: args, Output: out, ProgramSource: output}
		for _, kv := range contentAttributes(&r, "chat", max, nil) {
			v := kv.Value
			if v.Type() != attribute.STRING {
				continue
			}
			s := v.AsString()
			if strings.Contains(s, fakeKey) {
				t.Fatalf("%s holds the key: %s", kv.Key, s)
			}
			if kv.Key == AttrProgramSource {
				continue
			}
			if !json.Valid([]byte(s)) {
				t.Fatalf("%s is not JSON: %q", kv.Key, s)
			}
			if len(s) > max {
				t.Fatalf("%s is %d bytes, over %d", kv.Key, len(s), max)
			}
		}
	})
}

// The output message of a response that called tools and reasoned: the
// reasoning, the text and the calls as parts, the arguments as the JSON
// they are (as a string when they are not, being cut by the recorder),
// redacted; a stop that called tools is tool_call. Bounded, the texts
// are cut first, then the arguments.
func TestOutputMessageParts(t *testing.T) {
	r := record.Record{
		Outcome: record.Success("chat.completion"),
		Output: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
			{Type: record.PartReasoning, Content: "The user wants the weather."},
			{Type: record.PartText, Content: "Let me look."},
			{Type: record.PartToolCall, ID: "call_1", Name: "get_weather", Arguments: record.ArgumentsJSON(`{"city":"Paris","key":"` + fakeKey + `"}`)},
			{Type: record.PartToolCall, Name: "now", Arguments: record.ArgumentsJSON("{}")},
			{Type: record.PartToolCall, Name: "cut", Arguments: record.ArgumentsJSON(`{"q":"abc`)},
			{Type: record.PartToolCall, Name: "bare"},
		}},
	}
	r.Outcome.FinishReason = "STOP"
	a := attrMap(contentAttributes(&r, "generate_content", DefaultMaxContentBytes, nil))
	assert.JSONEq(t, `[{"role":"assistant","finish_reason":"tool_call","parts":[`+
		`{"type":"reasoning","content":"The user wants the weather."},`+
		`{"type":"text","content":"Let me look."},`+
		`{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris","key":"[REDACTED]"}},`+
		`{"type":"tool_call","name":"now"},`+
		`{"type":"tool_call","name":"cut","arguments":"{\"q\":\"abc"},`+
		`{"type":"tool_call","name":"bare"}]}]`, a["gen_ai.output.messages"].(string))

	// Only tool calls: still a message.
	calls := record.Record{Outcome: record.Success("message"), Output: &record.Message{Role: record.RoleAssistant, Parts: r.Output.Parts[2:3]}}
	calls.Outcome.FinishReason = "tool_use"
	assert.Contains(t, attrMap(contentAttributes(&calls, "chat", DefaultMaxContentBytes, nil))["gen_ai.output.messages"], `"finish_reason":"tool_call"`)

	// Bounded: a long reasoning is cut first; huge arguments next.
	long := strings.Repeat("é", 400)
	big := record.Record{Outcome: record.Success("m"), Output: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
		{Type: record.PartReasoning, Content: long},
		{Type: record.PartToolCall, Name: "f", Arguments: record.ArgumentsJSON(`{"a":"` + long + `"}`)},
	}}}
	for _, max := range []int{2000, 1200, 700, 200} {
		a := attrMap(contentAttributes(&big, "chat", max, nil))
		v, _ := a["gen_ai.output.messages"].(string)
		require.NotEmpty(t, v, "max %d", max)
		assert.LessOrEqual(t, len(v), max)
		assert.True(t, json.Valid([]byte(v)), v)
		assert.True(t, strings.ToValidUTF8(v, "?") == v, "cut inside a rune at max %d", max)
		if max < 2000 {
			assert.Equal(t, []string{"gen_ai.output.messages"}, a["llmhistory.content_truncated"])
		}
		if max == 1200 {
			assert.Contains(t, v, `"arguments":{"a":`, "the reasoning is cut before the arguments")
		}
	}
	assert.Empty(t, attrMap(contentAttributes(&big, "chat", 40, nil))["gen_ai.output.messages"], "not even empty texts fit: left out")
}
