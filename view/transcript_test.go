package view

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/bedrock"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// recorded returns the Args a provider records for a request body sent to
// path: the messages in the message model, as the viewer reads them.
func recorded(p providers.Provider, path, body string) string {
	call, ok := p.ParseRequest(&providers.Request{Method: "POST", URL: &url.URL{Path: path}, Body: []byte(body)})
	if !ok {
		panic("not recognized: " + path)
	}
	return string(call.Args)
}

// chat is OpenAI chat messages (a JSON array) as recorded.
func chat(messages string) string {
	return recorded(openai.Provider{}, "/v1/chat/completions", `{"model":"m","messages":`+messages+`}`)
}

// calls makes a conversation's calls from each call's Args.
func calls(args ...string) []Call {
	out := make([]Call, len(args))
	for i, a := range args {
		r := record.Record{CallID: string(rune('a' + i)), Args: json.RawMessage(a), Outcome: record.Success("x")}
		out[i] = Call{Record: r, Raw: r.AppendJSON(nil)}
	}
	return out
}

// describe writes a transcript as lines: "role: text" for each message
// shown, "[call N]" for each call, tool calls with their results.
func describe(tcs []*turnCall) []string {
	var out []string
	msg := func(prefix string, m *message) {
		if m.Hidden() {
			return
		}
		var parts []string
		for _, p := range m.Parts {
			switch p.Kind {
			case partToolCall:
				s := "call " + p.Name + "#" + p.ID + "(" + strings.Join(strings.Fields(p.Args), "") + ")"
				if p.Result != nil {
					s += " -> " + p.Result.Text
				}
				parts = append(parts, s)
			case partMedia:
				parts = append(parts, "media "+p.MIME+" "+p.Elided+p.URL)
			default:
				parts = append(parts, p.Kind+" "+p.Text)
			}
		}
		out = append(out, prefix+m.Role+": "+strings.Join(parts, " | "))
	}
	for _, tc := range tcs {
		for _, m := range tc.System {
			msg("(system) ", m)
		}
		for _, m := range tc.New {
			msg("", m)
		}
		out = append(out, "[call "+tc.Call.Record.CallID+"]")
		for _, m := range tc.Answer {
			msg("answer ", m)
		}
	}
	return out
}

func TestTranscriptOpenAIToolLoop(t *testing.T) {
	sys := `{"role":"system","content":"Be brief."}`
	u1 := `{"role":"user","content":"Where is order 7?"}`
	a1 := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"id\":7}"}}]}`
	tool := `{"role":"tool","tool_call_id":"call_1","content":"shipped"}`
	a2 := `{"role":"assistant","content":"It has shipped."}`
	u2 := `{"role":"user","content":"Thanks!"}`
	tcs := buildTranscript(calls(
		chat("["+sys+","+u1+"]"),
		chat("["+sys+","+u1+","+a1+","+tool+"]"),
		chat("["+sys+","+u1+","+a1+","+tool+","+a2+","+u2+"]"),
	), 0, 0, 3)
	assert.Equal(t, []string{
		"(system) system: text Be brief.",
		"user: text Where is order 7?",
		"[call a]",
		`answer assistant: call lookup#call_1({"id":7}) -> shipped`,
		"[call b]",
		"answer assistant: text It has shipped.",
		"user: text Thanks!",
		"[call c]",
	}, describe(tcs))
	assert.False(t, tcs[2].AnswerKnown, "the last call's answer is in no record")
}

// A program that rewrites its system prompt on every call (as the
// history preview does) has it shown folded where it changes; the
// conversation still reads as one.
func TestTranscriptSystemChanges(t *testing.T) {
	tcs := buildTranscript(calls(
		chat(`[{"role":"system","content":"v1"},{"role":"system","content":"fixed"},{"role":"user","content":"q1"}]`),
		chat(`[{"role":"system","content":"v2"},{"role":"system","content":"fixed"},{"role":"user","content":"q1"},{"role":"assistant","content":"a1"},{"role":"user","content":"q2"}]`),
	), 0, 0, 2)
	assert.Equal(t, []string{
		"(system) system: text v1", "(system) system: text fixed", "user: text q1", "[call a]",
		"answer assistant: text a1",
		"(system) system: text v2", "user: text q2", "[call b]",
	}, describe(tcs))
	assert.False(t, tcs[0].SystemChanged)
	assert.True(t, tcs[1].SystemChanged)
}

func TestTranscriptAnthropic(t *testing.T) {
	messages := func(m string) string {
		return recorded(anthropic.Provider{}, "/v1/messages", `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"You see."}],"messages":`+m+`}`)
	}
	image := `{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"[base64 elided: 20480 bytes]"}},{"type":"text","text":"What is it?"}]}`
	tcs := buildTranscript(calls(
		messages(`[`+image+`]`),
		messages(`[`+image+`,`+
			`{"role":"assistant","content":[{"type":"thinking","thinking":"Looks like a boat.","signature":"x"},{"type":"tool_use","id":"toolu_1","name":"zoom","input":{"x":1}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a sailing boat"}],"is_error":false}]}]`),
	), 0, 0, 2)
	assert.Equal(t, []string{
		"(system) system: text You see.",
		"user: media image/png inline, 20.5 kB of data, not kept | text What is it?",
		"[call a]",
		`answer assistant: thinking Looks like a boat. | call zoom#toolu_1({"x":1}) -> a sailing boat`,
		"[call b]",
	}, describe(tcs))
}

func TestTranscriptGemini(t *testing.T) {
	contents := func(c string) string {
		return recorded(gemini.Provider{}, "/v1beta/models/g:generateContent", `{"contents":`+c+`}`)
	}
	tcs := buildTranscript(calls(
		contents(`[{"role":"user","parts":[{"text":"Weather?"},{"inlineData":{"mimeType":"audio/wav","data":"[base64 elided: 5000 bytes]"}}]}]`),
		contents(`[{"role":"user","parts":[{"text":"Weather?"},{"inlineData":{"mimeType":"audio/wav","data":"[base64 elided: 5000 bytes]"}}]},`+
			`{"role":"model","parts":[{"text":"I should look.","thought":true},{"functionCall":{"name":"weather","args":{"city":"Lisbon"}}},{"thoughtSignature":"abc"}]},`+
			`{"role":"user","parts":[{"functionResponse":{"name":"weather","response":{"temp":21}}}]}]`),
	), 0, 0, 2)
	assert.Equal(t, []string{
		"user: text Weather? | media audio/wav inline, 5.0 kB of data, not kept",
		"[call a]",
		`answer assistant: thinking I should look. | call weather#({"city":"Lisbon"}) -> {` + "\n  \"temp\": 21\n}",
		"[call b]",
	}, describe(tcs))
}

func TestTranscriptResponses(t *testing.T) {
	input := func(in string) string {
		return recorded(openai.Provider{}, "/v1/responses", `{"model":"m","instructions":"Be exact.","input":`+in+`}`)
	}
	tcs := buildTranscript(calls(
		input(`"What is 2+2?"`),
		input(`[{"role":"user","content":"What is 2+2?"},`+
			`{"type":"reasoning","summary":[{"type":"summary_text","text":"Add them."}]},`+
			`{"type":"function_call","call_id":"fc_1","name":"add","arguments":"{\"a\":2,\"b\":2}"},`+
			`{"type":"function_call_output","call_id":"fc_1","output":"4"}]`),
	), 0, 0, 2)
	assert.Equal(t, []string{
		"(system) system: text Be exact.",
		"user: text What is 2+2?",
		"[call a]",
		`answer assistant: thinking Add them. | call add#fc_1({"a":2,"b":2}) -> 4`,
		"[call b]",
	}, describe(tcs))
}

func TestTranscriptBedrock(t *testing.T) {
	args := recorded(bedrock.Provider{}, "/model/m/converse", `{"messages":[`+
		`{"role":"user","content":[{"text":"Hi"},{"image":{"format":"png","source":{"bytes":"[base64 elided: 900 bytes]"}}},{"cachePoint":{"type":"default"}}]},`+
		`{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Greet."}}},{"toolUse":{"toolUseId":"tu1","name":"wave","input":{}}}]},`+
		`{"role":"user","content":[{"toolResult":{"toolUseId":"tu1","content":[{"text":"waved"}],"status":"error"}}]}]}`)
	tcs := buildTranscript(calls(args), 0, 0, 1)
	assert.Equal(t, []string{
		"user: text Hi | media image/png inline, 900 bytes of data, not kept",
		"assistant: thinking Greet. | call wave#tu1() -> waved",
		"[call a]",
	}, describe(tcs))
	require.True(t, tcs[0].New[1].Parts[1].Result.IsError)
}

// What is not a message (a record written before the message model, the
// mark of messages cut) is shown as it was written, never dropped.
func TestTranscriptNotMessages(t *testing.T) {
	tcs := buildTranscript(calls(`["…[2 earlier items cut]",42,{"role":"user","content":"an old record's"},null]`), 0, 0, 1)
	assert.Equal(t, []string{
		"other: text …[2 earlier items cut]",
		"other: json 42",
		"other: json {\n  \"role\": \"user\",\n  \"content\": \"an old record's\"\n}",
		"other: json null",
		"[call a]",
	}, describe(tcs))
}

// The answer a record kept answers a call that no later call continues.
func TestTranscriptRecordedAnswer(t *testing.T) {
	cs := calls(chat(`[{"role":"user","content":"Plan it."}]`))
	cs[0].Record.Output = &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
		{Type: record.PartReasoning, Content: "Think."},
		{Type: record.PartText, Content: "Step one."},
		{Type: record.PartToolCall, ID: "t1", Name: "plan", Arguments: json.RawMessage("{}")},
	}}
	tcs := buildTranscript(cs, 0, 0, 1)
	assert.Equal(t, []string{
		"user: text Plan it.", "[call a]", "answer assistant: thinking Think. | text Step one. | call plan#t1({})",
	}, describe(tcs))
	assert.True(t, tcs[0].AnswerKnown)
}

// A call that repeats another (the program retried it) adds nothing.
func TestTranscriptRepeatedCall(t *testing.T) {
	a := chat(`[{"role":"user","content":"Again?"}]`)
	tcs := buildTranscript(calls(a, a), 0, 0, 2)
	assert.Equal(t, []string{"user: text Again?", "[call a]", "[call b]"}, describe(tcs))
}

func TestFirstUserText(t *testing.T) {
	args := func(msgs ...record.Message) string { return string(record.AppendMessages(nil, msgs)) }
	user, system := record.TextMessage(record.RoleUser, "Real"), record.TextMessage(record.RoleSystem, "s")
	media := record.Message{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartMedia, MIMEType: "image/png", Size: 9}}}
	result := record.Message{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartToolResult, ID: "c", Content: "no"}}}
	for in, want := range map[string]string{
		args(system, record.TextMessage(record.RoleUser, "  Hello\n\tthere  ")): "Hello there",
		args(media, user):  "Real",
		args(result, user): "Real",
		args(record.Message{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartReasoning, Content: "hmm"}, {Type: record.PartText, Content: "Look"}}}): "Look",
		`["…[1 earlier items cut]",` + args(user)[1:]: "Real",
	} {
		got, ok := firstUserText([]byte(in))
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{`[]`, args(record.TextMessage(record.RoleAssistant, "x")), args(media), `[42]`, `not json`} {
		_, ok := firstUserText([]byte(in))
		assert.False(t, ok, in)
	}
	long, _ := firstUserText([]byte(args(record.TextMessage(record.RoleUser, strings.Repeat("é", 400)))))
	assert.LessOrEqual(t, len(long), maxSnippet+len("…"))
	assert.True(t, strings.HasSuffix(long, "…"))
}

// A call that continues none (the program asked afresh after a failure)
// does not show the system prompt again when it is the one before.
func TestTranscriptStartsOverKeepsPrompt(t *testing.T) {
	cs := calls(
		chat(`[{"role":"system","content":"fixed"},{"role":"user","content":"q1"}]`),
		chat(`[{"role":"system","content":"fixed"},{"role":"user","content":"q2"}]`),
		chat(`[{"role":"system","content":"other"},{"role":"user","content":"q3"}]`),
	)
	cs[0].Record.Outcome = record.Failure(record.ErrorRateLimit)
	assert.Equal(t, []string{
		"(system) system: text fixed", "user: text q1", "[call a]",
		"user: text q2", "[call b]",
		"(system) system: text other", "user: text q3", "[call c]",
	}, describe(buildTranscript(cs, 0, 0, 3)))
}
