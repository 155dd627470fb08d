// Package providertest holds what the built-in providers' tests share in
// reading what a provider made of a body: the answer's tool calls and
// refusal, as their tests compare them, and the check that an answer and
// the copy of it the next request sends back are one message
// ([SentBack]).
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Calls returns the tool calls of an answer, their arguments as text
// (canonical JSON, or the text the model wrote when it is not JSON); nil
// when it has none.
func Calls(m record.Message) []providers.ToolCall {
	var out []providers.ToolCall
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Type == record.PartToolCall {
			out = append(out, providers.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.ArgumentsText()})
		}
	}
	return out
}

// Refusal returns the text of an answer's refusals.
func Refusal(m record.Message) string {
	var s string
	for _, p := range m.Parts {
		if p.Type == record.PartRefusal {
			s += p.Content
		}
	}
	return s
}

// SentBack checks the one meaning of a message across a turn: the answer
// first's record kept, converted into the message model from the
// response, is the same message, byte for byte, as the element of
// second's args that the caller sent it back as (the one right after
// first's own messages). It returns what differs, "" when nothing does.
func SentBack(first, second record.Record) string {
	if first.Output == nil {
		return "the first record kept no answer"
	}
	n := len(record.Messages(first.Args))
	msgs := record.Messages(second.Args)
	if len(msgs) <= n {
		return "the second call sent " + strconv.Itoa(len(msgs)) + " messages, not more than the first's " + strconv.Itoa(n)
	}
	var got []byte
	i := 0
	record.EachValidElement(second.Args, func(el []byte) bool {
		if i == n {
			got = el
			return false
		}
		i++
		return true
	})
	want := first.Output.AppendJSON(nil)
	if string(got) != string(want) {
		return "the answer kept:\n  " + string(want) + "\nthe message sent back:\n  " + string(got)
	}
	return ""
}

// Rendered checks the round trip of a renderer: the request rendered from
// msgs and kwargs, parsed by p, gives msgs back; the answer rendered
// (whole, and as a stream when stream is set), parsed by p, gives its
// message, usage and finish reason back. It returns the first difference,
// or "".
func Rendered(p interface {
	providers.Provider
	providers.Renderer
}, method string, msgs []record.Message, kwargs []byte, a providers.Answer, stream bool) string {
	path, body, err := p.RenderRequest(method, msgs, kwargs)
	if err != nil {
		return "RenderRequest: " + err.Error()
	}
	u, err := url.Parse("https://provider.invalid" + path)
	if err != nil {
		return "path " + path + ": " + err.Error()
	}
	call, ok := p.ParseRequest(&providers.Request{Method: "POST", URL: u, Body: body})
	if !ok {
		return "the rendered request is not recognized: " + path
	}
	if call.MethodName != method {
		return fmt.Sprintf("method: rendered %s, parsed %s", method, call.MethodName)
	}
	// A recorder keeps no inline data: a long base64 string anywhere in a
	// request (an image, a file; a tool's argument that looks like one)
	// is recorded as a marker of its size (wire.ElideBase64), so the
	// round trip gives the messages with the same strings elided.
	want := argsJSON(msgs)
	if elided, ok := wire.ElideBase64(want); ok {
		want = elided
	}
	if got, want := string(call.Args), string(want); got != want {
		return "messages:\n got  " + got + "\n want " + want + "\n body " + string(body)
	}
	ctype, frames, err := p.RenderResponse(method, a, stream)
	if err != nil {
		return "RenderResponse: " + err.Error()
	}
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, ContentType: ctype, Body: bytes.Join(frames, nil), Stream: stream, EOF: true})
	if got, want := string(res.Output.AppendJSON(nil)), string(a.Message.AppendJSON(nil)); got != want {
		return "answer:\n got  " + got + "\n want " + want + "\n body " + string(bytes.Join(frames, nil))
	}
	if !reflect.DeepEqual(res.Usage, a.Usage) {
		return fmt.Sprintf("usage: got %v, want %v", res.Usage, a.Usage)
	}
	if res.Outcome.FinishReason != a.FinishReason {
		return fmt.Sprintf("finish reason: got %q, want %q", res.Outcome.FinishReason, a.FinishReason)
	}
	if a.ID != "" && res.Outcome.ResponseID != a.ID {
		return fmt.Sprintf("response id: got %q, want %q", res.Outcome.ResponseID, a.ID)
	}
	return ""
}

func argsJSON(msgs []record.Message) []byte {
	b := []byte{'['}
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = msgs[i].AppendJSON(b)
	}
	return append(b, ']')
}

// Conversation is a tool loop made of the given strings, for a renderer's
// round trip (and its fuzz target): a system prompt, a question, an
// answer that says text and calls a tool, the tool's result, and the
// answer to come, with usage and finish reason.
func Conversation(text, tool, args string, tokens int) ([]record.Message, providers.Answer) {
	call := record.Part{Type: record.PartToolCall, ID: "call_" + strconv.Itoa(tokens), Name: tool, Arguments: record.CanonicalArguments([]byte(args))}
	msgs := []record.Message{
		record.TextMessage(record.RoleSystem, "Be brief. "+text),
		{Role: record.RoleUser, Parts: convert.Text(nil, text)}, // no part for no text, as a reader makes it
		{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: "Checking: " + text}, call}},
		{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartToolResult, ID: call.ID, Content: "result: " + text}}},
	}
	u := &record.Usage{InputTokens: tokens, OutputTokens: 7, TotalTokens: tokens + 7}
	return msgs, providers.Answer{ID: "resp_1", Model: "model-1", Message: record.TextMessage(record.RoleAssistant, "It is "+text), Usage: u}
}

// Arguments reports whether args are tool call arguments a model writes:
// a JSON object or array, or a string (what the model wrote when it was
// not JSON). A bare number or boolean is none of the providers' forms.
func Arguments(args string) bool {
	b := bytes.TrimSpace([]byte(args))
	return json.Valid(b) && len(b) > 0 && (b[0] == '{' || b[0] == '[' || b[0] == '"')
}

// Strings reports whether ss are strings a record can hold: UTF-8 (a
// record is JSON, and its strings are read from JSON).
func Strings(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
