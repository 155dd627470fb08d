// Package convert holds what the built-in providers share in turning
// their wire formats into the message model (record.Message): the rules
// every provider applies the same way (roles, runs of text, media as a
// reference, a user turn of tool results being the tool's), and the
// builder of a call's Args.
//
// A provider reads each message of its request with gjson views into the
// body and hands it to [Args.Add], which encodes it at once: the
// message's strings may point into the body, and nothing keeps them.
package convert

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Role maps a provider's role onto the model's: developer is a system
// role, model (Gemini) the assistant's, function and ipython a tool's;
// no role, or one the model does not know, is the user's (APIs read a
// turn without a role as the user's).
func Role(role string) string {
	switch role {
	case "system", "developer":
		return record.RoleSystem
	case "assistant", "model":
		return record.RoleAssistant
	case "tool", "function", "ipython":
		return record.RoleTool
	}
	return record.RoleUser
}

// Text appends a text part to parts, run together with a text part just
// before it: a stream sends text a fragment at a time, a response may
// split it into blocks, and an SDK may send it back whole or in blocks.
// One run of text is one part; empty text is none ("content": "" beside
// tool calls).
func Text(parts []record.Part, s string) []record.Part {
	if s == "" {
		return parts
	}
	return run(parts, record.PartText, s)
}

// Reasoning is [Text] for the model's reasoning.
func Reasoning(parts []record.Part, s string) []record.Part {
	return run(parts, record.PartReasoning, s)
}

func run(parts []record.Part, typ, s string) []record.Part {
	if n := len(parts); n > 0 && parts[n-1].Type == typ {
		if s != "" {
			parts[n-1].Content += s
		}
		return parts
	}
	return append(parts, record.Part{Type: typ, Content: s})
}

// Media is a part of media that ref names: a URL, a file id, a gs://
// location, or inline data (a data: URL, which the record does not keep
// but for its size). mime is its type, or its kind alone ("image") when
// that is all the provider says; a data URL's own type wins.
func Media(mime, ref string) record.Part {
	if strings.HasPrefix(ref, "data:") {
		return Inline(mime, ref)
	}
	return record.Part{Type: record.PartMedia, MIMEType: mime, URI: ref}
}

// Inline is a part of inline media, data being what the request sent
// (base64, a data: URL, or the marker the recorder left in place of long
// data): the record keeps its type and size, not its bytes.
func Inline(mime, data string) record.Part {
	if rest, ok := strings.CutPrefix(data, "data:"); ok {
		if head, payload, ok := strings.Cut(rest, ","); ok {
			if t, _, _ := strings.Cut(head, ";"); t != "" {
				mime = t
			}
			data = payload
		}
	}
	return record.Part{Type: record.PartMedia, MIMEType: mime, Size: inlineSize(data)}
}

// inlineSize is the length of inline data: the size an elision marker
// ("[elided 123 bytes]", "[base64 elided: 123 bytes]") keeps, or the
// data's own.
func inlineSize(data string) int {
	if strings.HasSuffix(data, " bytes]") {
		for _, mark := range []string{"[elided ", "[base64 elided: "} {
			if n, ok := strings.CutPrefix(data, mark); ok {
				if v, err := strconv.Atoi(strings.TrimSuffix(n, " bytes]")); err == nil {
					return v
				}
			}
		}
	}
	return len(data)
}

// Other keeps a part the model has no type for, as the provider sent it
// (raw JSON), under the provider's name of it: canonical, as the model
// encodes it, so that a message read from a request and the same one
// read from a response are equal values, not only equal bytes.
func Other(name, raw string) record.Part {
	return record.Part{Type: record.PartOther, Name: name, Data: record.AppendCanonicalJSON(nil, []byte(raw))}
}

// Call is a tool call part; args are the raw JSON of the arguments (an
// object, or a string holding them as OpenAI sends them), kept canonical
// (record.CanonicalArguments).
func Call(id, name, args string) record.Part {
	p := record.Part{Type: record.PartToolCall, ID: id, Name: name}
	if args != "" && args != "null" {
		p.Arguments = record.CanonicalArguments([]byte(args))
	}
	return p
}

// ResultText is a tool result's content as the text of a tool result
// part: a string, or the text of a list of text blocks ({"type": "text"},
// OpenAI's input_text and output_text, Bedrock's {"text"}); any other
// content (an object, an image) as its canonical JSON.
func ResultText(c gjson.Result) string {
	switch {
	case c.Type == gjson.String:
		return c.String()
	case !c.Exists() || c.Type == gjson.Null:
		return ""
	case c.IsArray():
		var b strings.Builder
		text := true
		c.ForEach(func(_, blk gjson.Result) bool {
			var t gjson.Result
			switch {
			case blk.Type == gjson.String:
				t = blk
			case blk.Get("type").Exists():
				switch blk.Get("type").String() {
				case "text", "input_text", "output_text":
					t = blk.Get("text")
				}
			default:
				t = blk.Get("text")
			}
			if t.Type != gjson.String {
				text = false
				return false
			}
			b.WriteString(t.String())
			return true
		})
		if text {
			return b.String()
		}
	}
	return string(record.AppendCanonicalJSON(nil, []byte(c.Raw)))
}

// Results makes a user turn that carries only tool results (Anthropic's,
// Gemini's, Bedrock's) the tool's, as OpenAI's tool messages are.
func Results(m *record.Message) {
	if m.Role != record.RoleUser || len(m.Parts) == 0 {
		return
	}
	for i := range m.Parts {
		if m.Parts[i].Type != record.PartToolResult {
			return
		}
	}
	m.Role = record.RoleTool
}

// Args builds a call's Args, message by message, as the JSON array it
// will be: each message is encoded as it is added. The zero value is
// ready to use; [Args.Lend] builds in the buffer a request lends.
type Args struct {
	buf     []byte // "[" and the messages, a comma apart
	ends    []int  // where each message ends in buf
	scratch *[]byte
	last    string // the role of the last message
}

// Lend makes a build in the buffer req lends (req.Scratch), when it lends
// one, left grown in it.
func (a *Args) Lend(req *providers.Request) {
	if req.Scratch != nil && len(a.ends) == 0 {
		a.scratch, a.buf = req.Scratch, (*req.Scratch)[:0]
	}
}

// Add encodes m as the next message of the request. m may point into the
// body: nothing of it is kept.
func (a *Args) Add(m *record.Message) {
	if len(a.ends) == 0 {
		a.buf = append(a.buf[:0], '[')
	} else {
		a.buf = append(a.buf, ',')
	}
	a.buf = m.AppendJSON(a.buf)
	a.ends = append(a.ends, len(a.buf))
	a.last = m.Role
}

// Len is how many messages were added.
func (a *Args) Len() int { return len(a.ends) }

// Speaker is who spoke last: the speaker of the last message's role
// (wire.SpeakerForRole), "" when there is none.
func (a *Args) Speaker() string {
	if len(a.ends) == 0 {
		return ""
	}
	return wire.SpeakerForRole(a.last)
}

// JSON returns the messages as a JSON array within req's bound of Args
// (the latest kept when they do not all fit, behind a marker, as
// wire.FitArray keeps them), and whether it cut.
func (a *Args) JSON(req *providers.Request) (json.RawMessage, bool) {
	if len(a.ends) == 0 {
		return json.RawMessage("[]"), false
	}
	if len(a.buf)+1 <= req.ArgsLimit() {
		a.buf = append(a.buf, ']')
		if a.scratch != nil {
			*a.scratch = a.buf
		}
		return a.buf, false
	}
	elems := make([][]byte, len(a.ends))
	start := 1
	for i, end := range a.ends {
		elems[i] = a.buf[start:end]
		start = end + 1
	}
	return wire.FitArray(elems, req.ArgsLimit()) // not in the lent buffer: the messages are there
}

// Builder assembles an answer's parts from a response's pieces or a
// stream's fragments, in order: text run together with the text just
// before it and reasoning with reasoning, as [Text] runs them, any other
// part on its own. Runs are written into one buffer, grown by doubling,
// so that a stream of many small fragments costs its length, not its
// square. The zero value is ready to use.
type Builder struct {
	parts []record.Part
	buf   []byte // the runs' text, one after the other
	start int    // where the open run begins in buf
	open  bool
	// closedAt is where the last run closed, 0 when another part came
	// after it: a run is continued only when nothing came between.
	closedAt int
}

// Lend has the builder write its runs into the buffer scratch lends
// (providers.Response.Scratch), left grown in *scratch by
// [Builder.Message].
// The parts then point into it until wire.Detach copies them out.
func (b *Builder) Lend(scratch *[]byte) {
	if scratch != nil {
		b.buf = (*scratch)[:0]
	}
}

// Text adds text to the answer; empty text adds nothing, as [Text].
func (b *Builder) Text(s string) {
	if s != "" {
		b.run(record.PartText, s)
	}
}

// Reasoning adds reasoning to the answer.
func (b *Builder) Reasoning(s string) { b.run(record.PartReasoning, s) }

func (b *Builder) run(typ, s string) {
	if n := len(b.parts); n > 0 && b.parts[n-1].Type == typ && (b.open || b.closedAt == len(b.buf) && b.closedAt > 0) {
		// The open run, or the last one, closed by Message with nothing
		// written after it: more of the same turn continues it.
		b.open = true
		b.buf = wire.Append(b.buf, s)
		return
	}
	b.close()
	b.parts = append(b.parts, record.Part{Type: typ})
	b.open, b.start, b.closedAt = true, len(b.buf), 0
	b.buf = wire.Append(b.buf, s)
}

// Add adds a part of another type.
func (b *Builder) Add(p record.Part) {
	b.close()
	b.closedAt = 0
	b.parts = append(b.parts, p)
}

func (b *Builder) close() {
	if !b.open {
		return
	}
	b.open, b.closedAt = false, len(b.buf)
	// A view of the buffer: a later run is written after it, or into a
	// new array when the buffer grows, never over it.
	b.parts[len(b.parts)-1].Content = wire.Own(b.buf[b.start:len(b.buf):len(b.buf)])
}

// Len is how many parts were added.
func (b *Builder) Len() int { return len(b.parts) }

// Message returns the answer as a message of the assistant, with no
// parts when nothing was added, and gives the grown buffer back to
// scratch when one was lent.
func (b *Builder) Message(scratch *[]byte) record.Message {
	b.close()
	if scratch != nil && cap(b.buf) > 0 {
		*scratch = b.buf[:0]
	}
	if len(b.parts) == 0 {
		return record.Message{}
	}
	return record.Message{Role: record.RoleAssistant, Parts: b.parts}
}

// Reset empties the builder for the next message, keeping its buffers:
// the parts of the last one must be used (encoded) before.
func (b *Builder) Reset() {
	b.parts, b.buf, b.open, b.closedAt = b.parts[:0], b.buf[:0], false, 0
}
