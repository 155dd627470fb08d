package anthropic

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Value classes of a successful call.
const (
	ClassMessage     = "message"      // a Message, the "type" of its object
	ClassCountTokens = "count_tokens" // a token count, {"input_tokens": n}
)

// ParseResponse reads a response: an error body, a Message, a token count,
// or a stream of Message events.
func (Provider) ParseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	method := MethodCreate
	if call != nil && call.MethodName != "" {
		method = call.MethodName
	}
	res := parseResponse(method, call != nil && call.Stream, resp)
	wire.Detach(&res)
	return res
}

func parseResponse(method string, stream bool, resp *providers.Response) providers.Result {
	if resp == nil {
		return providers.Result{Outcome: record.Success(valueClass(method))}
	}
	if resp.StatusCode >= 400 {
		typ, msg := classify(resp.StatusCode, resp.Body)
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
	}
	if method == MethodCreate && (resp.Stream || stream) {
		return parseStream(resp)
	}
	body := bytes.TrimSpace(resp.Body)
	switch {
	case resp.Truncated:
		// Longer than the capture: the call worked; the stop reason and the
		// usage follow the content, so the tail may still hold them.
		m := message{class: valueClass(method)}
		m.tail(resp.Tail)
		return m.result()
	case len(body) == 0:
		return providers.Result{Outcome: record.Success(valueClass(method))}
	case !record.ValidJSON(body):
		// No SDK can decode it: cut on its way, or not JSON at all.
		return wire.Undecodable(body)
	}
	root := wire.Parse(body)
	if method == MethodCountTokens {
		return countTokens(root, body)
	}
	m := message{class: ClassMessage}
	m.object(root, body)
	return m.result()
}

// valueClass is what a successful call of a method returns.
func valueClass(method string) string {
	if method == MethodCountTokens {
		return ClassCountTokens
	}
	return ClassMessage
}

// countTokens reads {"input_tokens": n}. The count answers the call; it is
// not tokens spent (counting is free), so it is not the record's usage,
// which is summed and priced.
func countTokens(root gjson.Result, body []byte) providers.Result {
	if root.Get("type").String() == "error" {
		typ, msg := classify(500, body)
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
	}
	return providers.Result{Outcome: record.Success(ClassCountTokens), Finished: root.IsObject()}
}

// message assembles a Message, from one object or from the events of a
// stream. The strings it holds are views into the body until wire.Detach
// copies them; the text is built in a buffer of its own.
type message struct {
	class    string
	id       string
	model    string
	reason   string           // stop_reason
	refusal  string           // what stop_details says of a refusal
	parts    []record.Part    // a whole Message's content
	usage    wire.UsageReader // a field a later event carries replaces the earlier value
	finished bool
	failed   bool
	errType  string
	errMsg   string
}

// object reads a whole Message (or an error object sent with a 2xx).
func (m *message) object(root gjson.Result, raw []byte) {
	var typ, content, usage gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "type":
			typ = v
		case "id":
			m.id = v.String()
		case "model":
			m.model = v.String()
		case "stop_reason":
			if v.Type == gjson.String {
				m.reason, m.finished = v.String(), true
			}
		case "stop_details":
			m.refusal = stopDetails(v)
		case "content":
			content = v
		case "usage":
			usage = v
		}
		return true
	})
	if typ.String() == "error" {
		m.fail(classify(500, raw))
		return
	}
	m.parts = contentParts(m.parts, content)
	m.usage.Read(usage)
}

// blockFields reads the members of a content block that the whole
// Message and a stream's content_block_start share, in one walk.
func blockFields(b gjson.Result) (typ, text, id, name, input, thinking gjson.Result) {
	b.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "type":
			typ = v
		case "text":
			text = v
		case "id":
			id = v
		case "name":
			name = v
		case "input":
			input = v
		case "thinking":
			thinking = v
		}
		return true
	})
	return typ, text, id, name, input, thinking
}

// tail reads what the end of a body cut by the recorder still holds: a
// Message's stop_reason and usage come after its content. The last
// occurrence of each key is the top level's, which ends the body.
func (m *message) tail(b []byte) {
	if v := lastValue(b, `"usage"`); len(v) > 0 && v[0] == '{' {
		m.usage.Read(wire.Parse(v))
	}
	if v := lastValue(b, `"stop_reason"`); len(v) > 0 && v[0] == '"' {
		m.reason, m.finished = wire.Parse(v).String(), true
	}
}

// lastValue returns the JSON value after the last occurrence of key in b
// (a quoted key), or nil when there is none or it is not whole.
func lastValue(b []byte, key string) []byte {
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	end := valueEnd(rest)
	if end <= 0 || !record.ValidJSON(rest[:end]) {
		return nil
	}
	return rest[:end]
}

// valueEnd returns the length of the JSON value b starts with, or -1 when
// b ends first. gjson's Parse would take the rest of b as the value.
func valueEnd(b []byte) int {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
				if depth == 0 {
					return i + 1
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a scalar inside an object
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i // the end of a number, true, false or null
			}
		}
	}
	return -1
}

func (m *message) fail(typ, msg string) {
	m.failed, m.finished = true, true
	m.errType, m.errMsg = typ, msg
}

// result settles the outcome.
func (m *message) result() providers.Result {
	res := providers.Result{
		Outcome:  record.Success(m.class),
		Model:    m.model,
		Finished: m.finished,
	}
	if len(m.parts) > 0 {
		res.Output = record.Message{Role: record.RoleAssistant, Parts: m.parts}
	}
	m.usage.Into(&res)
	switch {
	case m.failed:
		res.Outcome = record.Failure(m.errType)
		res.ErrorMessage = m.errMsg
	case m.reason == "refusal":
		// The model's safety classifiers stopped the answer.
		res.Outcome = record.Failure(record.ErrorContentFilter)
		res.ErrorMessage = "the response was stopped by a refusal"
		if m.refusal != "" {
			res.ErrorMessage += ": " + m.refusal
		}
	}
	res.Outcome.ResponseID = m.id
	res.Outcome.FinishReason = m.reason
	return res
}

// stopDetails reads what a refusal's stop_details says: its category and
// explanation, either of which may be null.
func stopDetails(v gjson.Result) string {
	if !v.IsObject() {
		return ""
	}
	category, explanation := v.Get("category"), v.Get("explanation")
	switch {
	case category.Type == gjson.String && explanation.Type == gjson.String:
		return category.String() + " (" + explanation.String() + ")"
	case category.Type == gjson.String:
		return category.String()
	case explanation.Type == gjson.String:
		return explanation.String()
	}
	return ""
}
