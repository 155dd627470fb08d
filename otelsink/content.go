package otelsink

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// Content says whether a span carries what was said: the input messages,
// the system instructions, the output and the generated program source.
//
// The output message is what the model generated: its text, tool calls
// and reasoning, which a record holds only when its recorder was made
// with middleware.WithOutput. Without it, content capture exports what
// was asked but no gen_ai.output.messages.
type Content int

const (
	// ContentFromEnv, the zero value, reads the environment variable
	// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT when the sink is
	// made (see [EnvCaptureContent] for its values).
	ContentFromEnv Content = iota
	// ContentOff never captures content, whatever the environment says.
	ContentOff
	// ContentOn always captures content, on the spans.
	ContentOn
)

// EnvCaptureContent is the environment variable that says whether spans
// carry content when [Options.Content] is [ContentFromEnv]. Its values
// are those of OpenTelemetry's GenAI instrumentations, case aside:
//
//   - SPAN_ONLY or SPAN_AND_EVENT, as the Python GenAI utilities
//     (opentelemetry-util-genai) define them, and "true", as the
//     instrumentations of other languages do: content on the spans. The
//     sink emits no events, so SPAN_AND_EVENT is SPAN_ONLY here;
//   - EVENT_ONLY: content on events only, so none on the spans (and,
//     since the sink emits no events, none at all: the slog sink through
//     the OpenTelemetry slog bridge carries records as log records);
//   - NO_CONTENT, "false" or unset: none.
//
// Any other value captures nothing and is reported to OpenTelemetry's
// error handler (otel.Handle), as the Python utilities log a warning.
//
// gen_ai.output.messages needs the output in the record: make the
// recorder with middleware.WithOutput.
const EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// OnSpans reports whether spans carry content under c: for
// ContentFromEnv, whether EnvCaptureContent says so now.
func (c Content) OnSpans() bool {
	switch c {
	case ContentOn:
		return true
	case ContentOff:
		return false
	}
	on, err := contentFromEnv(os.Getenv(EnvCaptureContent))
	if err != nil {
		otel.Handle(err)
	}
	return on
}

// contentFromEnv reads a value of EnvCaptureContent.
func contentFromEnv(v string) (onSpans bool, err error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "TRUE", "SPAN_ONLY", "SPAN_AND_EVENT":
		return true, nil
	case "", "FALSE", "NO_CONTENT", "EVENT_ONLY":
		return false, nil
	}
	return false, fmt.Errorf("otelsink: %s=%q is none of SPAN_ONLY, SPAN_AND_EVENT, EVENT_ONLY, NO_CONTENT, true or false: no content is captured",
		EnvCaptureContent, v)
}

// DefaultMaxContentBytes bounds each content attribute.
const DefaultMaxContentBytes = 32 << 10

// The shapes of the GenAI conventions' JSON schemas for input messages,
// output messages and system instructions. A part is a map so that any
// part type of the schema can be written, keys in a stable order.
type (
	part        = map[string]any
	chatMessage struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	outputMessage struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason"`
	}
)

func textPart(s string) part { return part{"type": "text", "content": s} }

// contentAttributes returns the content of r as attributes, redacted,
// each at most max bytes, and the names of those cut to fit. op is the
// record's gen_ai.operation.name: an embeddings call has no messages in
// the conventions, and generates no text, so it gets none of the three
// message attributes.
func contentAttributes(r *record.Record, op string, max int, dst []attribute.KeyValue) []attribute.KeyValue {
	var cut []string
	var system []part
	var msgs []chatMessage
	if op != opEmbeddings {
		system, msgs = messages(r.Args)
	}
	if len(system) > 0 {
		v, c := fitParts(system, max)
		dst = appendContent(dst, semconv.GenAISystemInstructionsKey, v)
		if c {
			cut = append(cut, string(semconv.GenAISystemInstructionsKey))
		}
	}
	if len(msgs) > 0 {
		v, c := fitMessages(msgs, max)
		dst = appendContent(dst, semconv.GenAIInputMessagesKey, v)
		if c {
			cut = append(cut, string(semconv.GenAIInputMessagesKey))
		}
	}
	if parts := outputParts(r); len(parts) > 0 && op != opEmbeddings {
		finish := responseFinishReason(r)
		if finish == "" && !r.Outcome.OK {
			finish = "error"
		}
		v, c := fitOutput([]outputMessage{{Role: "assistant", Parts: parts, FinishReason: finish}}, max)
		dst = appendContent(dst, semconv.GenAIOutputMessagesKey, v)
		if c {
			cut = append(cut, string(semconv.GenAIOutputMessagesKey))
		}
	}
	if r.ProgramSource != "" {
		src := r.ProgramSource
		if len(src) > max {
			src = cutText(src, max)
			cut = append(cut, string(AttrProgramSource))
		}
		dst = append(dst, AttrProgramSource.String(redact.Secrets(src)))
	}
	if len(cut) > 0 {
		dst = append(dst, AttrContentTruncated.StringSlice(cut))
	}
	return dst
}

// outputParts are the parts of the message a record's response gave, in
// the order the providers give them: the reasoning, the text, the tool
// calls (whose arguments are the JSON the model wrote, or the string
// when it is not JSON).
func outputParts(r *record.Record) []part {
	var parts []part
	if r.Reasoning != "" {
		parts = append(parts, part{"type": "reasoning", "content": r.Reasoning})
	}
	if r.Output != "" {
		parts = append(parts, textPart(r.Output))
	}
	for _, c := range r.ToolCalls {
		p := part{"type": "tool_call", "name": c.Name}
		if c.ID != "" {
			p["id"] = c.ID
		}
		switch {
		case c.Arguments == "":
		case json.Valid([]byte(c.Arguments)):
			p["arguments"] = json.RawMessage(c.Arguments)
		default:
			p["arguments"] = c.Arguments // cut by the recorder, or not JSON
		}
		parts = append(parts, p)
	}
	return parts
}

// fitOutput encodes the output messages in at most max bytes: the texts
// (text and reasoning) are cut first, then the tool calls' arguments, as
// strings; a message that does not fit even so is left out. It reports
// whether anything was cut.
func fitOutput(out []outputMessage, max int) (string, bool) {
	b, _ := json.Marshal(out)
	if len(b) <= max {
		return string(b), false
	}
	parts := out[0].Parts
	cutParts(parts, len(b)-max)
	if b, _ = json.Marshal(out); len(b) <= max {
		return string(b), true
	}
	for _, p := range parts {
		if raw, ok := p["arguments"].(json.RawMessage); ok {
			p["arguments"] = string(raw)
		}
	}
	cutPartsOf(parts, "arguments", len(b)-max)
	if b, _ = json.Marshal(out); len(b) <= max {
		return string(b), true
	}
	return "", true // not even empty texts fit: left out
}

func appendContent(dst []attribute.KeyValue, k attribute.Key, v string) []attribute.KeyValue {
	if v == "" {
		return dst
	}
	// Records are redacted when they are made; they are redacted again
	// here because records read from a file may come from anywhere.
	return append(dst, k.String(redact.Secrets(v)))
}

// cutMark ends a text cut to fit a content attribute.
const cutMark = "…[cut]"

// cutText returns s cut to at most n bytes, on a rune boundary, marked.
func cutText(s string, n int) string {
	n -= len(cutMark)
	if n <= 0 {
		return cutMark
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + cutMark
}

// fitMessages encodes msgs, leaving out the earliest ones until the
// encoding fits in max bytes; the latest message alone that does not fit
// has its texts cut. It reports whether anything was left out or cut.
//
// Each message is encoded once: a list's encoding is its elements'
// joined, so the size without the earliest k is known without encoding
// the rest again (which, for a long conversation, cost the square of its
// length: 100 s for 1 MiB of short messages).
func fitMessages(msgs []chatMessage, max int) (string, bool) {
	enc := make([][]byte, len(msgs))
	size := 1 // "[" and "]", less the comma a single element does not have
	for i := range msgs {
		b, err := json.Marshal(&msgs[i])
		if err != nil {
			return "", false // as json.Marshal(msgs) fails
		}
		enc[i] = b
		size += len(b) + 1
	}
	k := 0 // the messages left out
	for ; size > max && k < len(msgs)-1; k++ {
		size -= len(enc[k]) + 1
	}
	if size <= max {
		return joinEncoded(enc[k:], size), k > 0
	}
	last := msgs[len(msgs)-1:]
	cutParts(last[0].Parts, size-max)
	if b, _ := json.Marshal(last); len(b) <= max {
		return string(b), true
	}
	return "", true // a message of no text that does not fit: left out
}

// joinEncoded returns the JSON list of the encoded elements, size bytes.
func joinEncoded(enc [][]byte, size int) string {
	var b strings.Builder
	b.Grow(size)
	b.WriteByte('[')
	for i, e := range enc {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.String()
}

// fitParts is fitMessages for system instructions: a list of parts.
func fitParts(parts []part, max int) (string, bool) {
	b, _ := json.Marshal(parts)
	if len(b) <= max {
		return string(b), false
	}
	cutParts(parts, len(b)-max)
	if b, _ = json.Marshal(parts); len(b) <= max {
		return string(b), true
	}
	return "", true
}

// cutParts shortens the text contents of parts by about excess bytes in
// all, the longest first (the earliest of equal ones). Cutting a text
// changes no other, so the order is known before the first cut: sorted
// once, not looked for again among all the parts for every cut.
func cutParts(parts []part, excess int) { cutPartsOf(parts, "content", excess) }

// cutPartsOf is cutParts for the string member key of the parts.
func cutPartsOf(parts []part, key string, excess int) {
	var order []int // the parts a cut may shorten
	for i, p := range parts {
		if s, ok := p[key].(string); ok && len(s) > 0 && !strings.HasSuffix(s, cutMark) {
			order = append(order, i)
		}
	}
	length := func(i int) int { return len(parts[i][key].(string)) }
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(length(j), length(i)) })
	for _, i := range order {
		if excess <= 0 {
			return
		}
		n := length(i)
		// JSON escaping can make the encoding longer than the text: cut a
		// little more than asked.
		keep := n - excess - excess/8 - len(cutMark)
		if keep < 0 {
			keep = 0
		}
		s := cutText(parts[i][key].(string), keep+len(cutMark))
		parts[i][key] = s
		excess -= n - len(s)
	}
}

// messages reads a record's args, as the providers keep them (each
// provider's turns as sent, system prompts first and marked), into the
// conventions' system instructions and input messages. Text, tool calls,
// tool results and reasoning map onto the schema's parts; anything else
// becomes a part of its own type holding it as sent.
func messages(args []byte) (system []part, msgs []chatMessage) {
	if len(args) == 0 || args[0] != '[' {
		return nil, nil
	}
	gjson.ParseBytes(args).ForEach(func(_, e gjson.Result) bool {
		if !e.IsObject() {
			if e.Type == gjson.String {
				msgs = append(msgs, chatMessage{Role: "user", Parts: []part{textPart(e.String())}})
			} else {
				msgs = append(msgs, chatMessage{Role: "user", Parts: []part{textPart(e.Raw)}})
			}
			return true
		}
		// The providers mark a system prompt given apart from the
		// conversation: OpenAI Responses' instructions, Anthropic's
		// system, Gemini's systemInstruction.
		if e.Get("instructions").Bool() || e.Get("system").Bool() || e.Get("systemInstruction").Bool() {
			system = append(system, partsOf(e)...)
			return true
		}
		m := chatMessage{Role: role(e.Get("role").String())}
		if m.Role == "" {
			m.Role, m.Parts = responsesItem(e)
		} else {
			m.Parts = partsOf(e)
		}
		if m.Role == "tool" {
			if id := e.Get("tool_call_id"); id.Exists() {
				// An OpenAI tool message: its content is the result.
				m.Parts = []part{{"type": "tool_call_response", "id": id.String(), "response": textOf(m.Parts)}}
			}
		}
		msgs = append(msgs, m)
		return true
	})
	return system, msgs
}

func role(r string) string {
	switch r {
	case "model":
		return "assistant" // Gemini
	case "developer":
		return "system" // OpenAI's newer name
	case "function":
		return "tool"
	}
	return r
}

// responsesItem reads an OpenAI Responses input item that has no role.
func responsesItem(e gjson.Result) (string, []part) {
	switch e.Get("type").String() {
	case "function_call", "custom_tool_call":
		p := part{"type": "tool_call", "name": e.Get("name").String(), "arguments": arguments(e.Get("arguments"))}
		if id := e.Get("call_id"); id.Exists() {
			p["id"] = id.String()
		}
		if in := e.Get("input"); in.Exists() {
			p["arguments"] = in.String()
		}
		return "assistant", []part{p}
	case "function_call_output", "custom_tool_call_output":
		return "tool", []part{{"type": "tool_call_response", "id": e.Get("call_id").String(), "response": raw(e.Get("output"))}}
	case "reasoning":
		return "assistant", []part{{"type": "reasoning", "content": summary(e)}}
	}
	return "user", []part{generic(e)}
}

func summary(e gjson.Result) string {
	var b strings.Builder
	e.Get("summary").ForEach(func(_, s gjson.Result) bool {
		b.WriteString(s.Get("text").String())
		return true
	})
	return b.String()
}

// partsOf reads the parts of a message: OpenAI's and Anthropic's content
// (a string or blocks), Gemini's parts, and OpenAI's tool_calls.
func partsOf(e gjson.Result) []part {
	var out []part
	if c := e.Get("content"); c.Exists() {
		switch {
		case c.Type == gjson.String:
			out = append(out, textPart(c.String()))
		case c.IsArray():
			c.ForEach(func(_, b gjson.Result) bool {
				out = append(out, block(b))
				return true
			})
		case c.Type != gjson.Null:
			out = append(out, block(c))
		}
	}
	e.Get("parts").ForEach(func(_, p gjson.Result) bool {
		out = append(out, geminiPart(p))
		return true
	})
	e.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		p := part{"type": "tool_call", "name": tc.Get("function.name").String(), "arguments": arguments(tc.Get("function.arguments"))}
		if id := tc.Get("id"); id.Exists() {
			p["id"] = id.String()
		}
		out = append(out, p)
		return true
	})
	if out == nil {
		out = []part{}
	}
	return out
}

// block reads one content block of OpenAI or Anthropic.
func block(b gjson.Result) part {
	if b.Type == gjson.String {
		return textPart(b.String())
	}
	switch t := b.Get("type").String(); t {
	case "text", "input_text", "output_text":
		return textPart(b.Get("text").String())
	case "refusal":
		return textPart(b.Get("refusal").String())
	case "tool_use":
		return part{"type": "tool_call", "id": b.Get("id").String(), "name": b.Get("name").String(), "arguments": raw(b.Get("input"))}
	case "tool_result":
		return part{"type": "tool_call_response", "id": b.Get("tool_use_id").String(), "response": raw(b.Get("content"))}
	case "thinking":
		return part{"type": "reasoning", "content": b.Get("thinking").String()}
	}
	return generic(b)
}

// geminiPart reads one Gemini part.
func geminiPart(p gjson.Result) part {
	switch {
	case p.Get("text").Exists():
		if p.Get("thought").Bool() {
			return part{"type": "reasoning", "content": p.Get("text").String()}
		}
		return textPart(p.Get("text").String())
	case p.Get("functionCall").Exists():
		fc := p.Get("functionCall")
		out := part{"type": "tool_call", "name": fc.Get("name").String(), "arguments": raw(fc.Get("args"))}
		if id := fc.Get("id"); id.Exists() {
			out["id"] = id.String()
		}
		return out
	case p.Get("functionResponse").Exists():
		fr := p.Get("functionResponse")
		out := part{"type": "tool_call_response", "response": raw(fr.Get("response"))}
		if id := fr.Get("id"); id.Exists() {
			out["id"] = id.String()
		}
		return out
	}
	return generic(p)
}

// generic keeps a part the schema has no type for as sent, under its own
// type (or its first key, for Gemini's inlineData, fileData, ...).
func generic(p gjson.Result) part {
	t := p.Get("type").String()
	if t == "" && p.IsObject() {
		p.ForEach(func(k, _ gjson.Result) bool {
			t = k.String()
			return false
		})
	}
	if t == "" {
		t = "unknown"
	}
	return part{"type": t, "content": raw(p)}
}

// arguments reads OpenAI's tool call arguments, a string of JSON: as the
// JSON it holds when it is valid, else as the string.
func arguments(v gjson.Result) any {
	if v.Type == gjson.String && gjson.Valid(v.String()) {
		return json.RawMessage(v.String())
	}
	return raw(v)
}

// raw is a JSON value as sent: a string as itself, anything else as JSON.
func raw(v gjson.Result) any {
	switch {
	case !v.Exists():
		return nil
	case v.Type == gjson.String:
		return v.String()
	}
	return json.RawMessage(v.Raw)
}

// textOf joins the texts of parts: the response of an OpenAI tool message.
func textOf(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		if s, ok := p["content"].(string); ok && p["type"] == "text" {
			b.WriteString(s)
		}
	}
	return b.String()
}
