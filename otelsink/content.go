package otelsink

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// Content says whether a span carries what was said: the input messages,
// the system instructions, the output and the generated program source.
//
// The output message is the answer a record kept: its text, tool calls
// and reasoning, which a recorder keeps unless made with
// middleware.WithoutOutput. Without it, content capture exports what was
// asked but no gen_ai.output.messages.
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
// gen_ai.output.messages needs the answer in the record, which a recorder
// keeps unless made with middleware.WithoutOutput.
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

// outputParts are the parts of the answer a record kept, in its order.
func outputParts(r *record.Record) []part {
	if r.Output == nil {
		return nil
	}
	return conventionParts(r.Output.Parts)
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

// messages reads a record's args (messages of the message model) into the
// conventions' system instructions and input messages: the system
// messages the args begin with are the instructions (the system prompt,
// however the provider took it); the others, system messages later in a
// conversation among them, are input messages.
func messages(args []byte) (system []part, msgs []chatMessage) {
	if len(args) == 0 || args[0] != '[' {
		return nil, nil
	}
	leading := true
	for _, m := range record.Messages(args) {
		if leading && m.Role == record.RoleSystem {
			system = append(system, conventionParts(m.Parts)...)
			continue
		}
		leading = false
		role := m.Role
		if role == "" {
			role = record.RoleUser // an element that is not a message, kept as sent
		}
		msgs = append(msgs, chatMessage{Role: role, Parts: conventionParts(m.Parts)})
	}
	return system, msgs
}

// conventionParts maps a message's parts onto the conventions' part
// types: text, reasoning, tool_call (its arguments as JSON) and
// tool_call_response; media as a uri part when it is referenced, else a
// part of its own type; a refusal as text; anything else under its
// provider's name, as it was sent.
func conventionParts(ps []record.Part) []part {
	out := make([]part, 0, len(ps))
	for i := range ps {
		p := &ps[i]
		switch p.Type {
		case record.PartText, record.PartRefusal:
			out = append(out, textPart(p.Content))
		case record.PartReasoning:
			out = append(out, part{"type": "reasoning", "content": p.Content})
		case record.PartToolCall:
			c := part{"type": "tool_call", "name": p.Name}
			if p.ID != "" {
				c["id"] = p.ID
			}
			if len(p.Arguments) > 0 {
				c["arguments"] = json.RawMessage(record.AppendCanonicalJSON(nil, p.Arguments))
			}
			out = append(out, c)
		case record.PartToolResult:
			r := part{"type": "tool_call_response", "response": p.Content}
			if p.ID != "" {
				r["id"] = p.ID
			}
			out = append(out, r)
		case record.PartMedia:
			m := part{"type": "media", "mime_type": p.MIMEType}
			if p.URI != "" {
				m["type"], m["uri"] = "uri", p.URI
			}
			if modality, _, _ := strings.Cut(p.MIMEType, "/"); modality != "" {
				m["modality"] = modality
			}
			if p.Size > 0 {
				m["size"] = p.Size
			}
			out = append(out, m)
		default:
			t := cmp.Or(p.Name, p.Type)
			g := part{"type": t}
			if len(p.Data) > 0 {
				g["content"] = json.RawMessage(record.AppendCanonicalJSON(nil, p.Data))
			}
			out = append(out, g)
		}
	}
	return out
}
