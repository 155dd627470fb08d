package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Roles of a [Message].
const (
	RoleSystem    = "system"    // instructions: a system prompt, however the provider takes it
	RoleUser      = "user"      // a person's turn, or the program's on their behalf
	RoleAssistant = "assistant" // the model's turn
	RoleTool      = "tool"      // tool results handed back to the model
)

// Types of a [Part].
const (
	PartText       = "text"               // Content: text
	PartReasoning  = "reasoning"          // Content: the model's reasoning (thinking), "" when the provider hides it
	PartRefusal    = "refusal"            // Content: why the model would not answer
	PartToolCall   = "tool_call"          // ID, Name, Arguments: a tool the model calls
	PartToolResult = "tool_call_response" // ID (and Name): the call it answers; Content: what the tool said; IsError
	PartMedia      = "media"              // MIMEType, and URI (a reference) or Size (inline data left out)
	PartOther      = "other"              // Name: the provider's name of the part; Data: the part as it was sent
)

// Message is one turn of a conversation, the same whatever provider it
// was sent to or came from: a role, and parts. A record's Args are a list
// of them (the request's messages) and its Output is one (the answer);
// the provider packages turn their wire formats into them, and every
// reader of history reads them.
//
// A message has one encoding ([Message.AppendJSON]): a message read from
// a request, and the same turn read from the response that produced it,
// encode to the same bytes. So the answer a record keeps and the next
// call's copy of it are one message to a store that keeps messages by
// their content, and to a comparison of conversations.
type Message struct {
	Role  string `json:"role"` // RoleSystem, RoleUser, RoleAssistant or RoleTool
	Parts []Part `json:"parts"`
}

// Part is one piece of a [Message]; its Type says which of its fields
// are used (see the Part* constants).
type Part struct {
	Type string `json:"type"`
	// ID is a tool call's id, and for a tool result the id of the call it
	// answers, when the provider gives one.
	ID string `json:"id,omitempty"`
	// Name is a tool's name (a call's, or the one a result answers), or
	// for PartOther the provider's name of the part ("cachePoint",
	// "executableCode").
	Name string `json:"name,omitempty"`
	// Content is the text of a text, reasoning, refusal or tool result
	// part. A tool result given as structured data holds its JSON.
	Content string `json:"content,omitempty"`
	// Arguments are a tool call's arguments: JSON, usually an object;
	// a JSON string when what the model wrote is not JSON (a call cut
	// short). A string that holds a JSON object or array, as OpenAI
	// sends arguments, is the same arguments as that object or array.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// MIMEType is media's type ("image/png"), or its kind alone
	// ("image") when that is all the provider says.
	MIMEType string `json:"mime_type,omitempty"`
	// URI references media sent by reference: a URL, a provider's file
	// id, a gs:// or s3:// location. It is never fetched.
	URI string `json:"uri,omitempty"`
	// Size is the length of media's inline data (as sent, base64 and
	// all), which a record does not keep.
	Size int `json:"size,omitempty"`
	// IsError marks a tool result that says the tool failed.
	IsError bool `json:"is_error,omitempty"`
	// Data is a part of a kind this model has no type for, as the
	// provider wrote it (JSON).
	Data json.RawMessage `json:"data,omitempty"`
}

// TextMessage returns a message of one text part.
func TextMessage(role, text string) Message {
	return Message{Role: role, Parts: []Part{{Type: PartText, Content: text}}}
}

// Text returns the text of m's text parts, run together as a provider's
// SDK joins them. A nil message has none.
func (m *Message) Text() string {
	if m == nil {
		return ""
	}
	return m.joined(PartText, "")
}

// Reasoning returns the text of m's reasoning parts, a blank line apart:
// each is a thought of its own.
func (m *Message) Reasoning() string {
	if m == nil {
		return ""
	}
	return m.joined(PartReasoning, "\n\n")
}

// Has reports whether m has a part of type typ. A nil message has none.
func (m *Message) Has(typ string) bool {
	if m == nil {
		return false
	}
	for i := range m.Parts {
		if m.Parts[i].Type == typ {
			return true
		}
	}
	return false
}

func (m *Message) joined(typ, sep string) string {
	var only string
	n, count := 0, 0
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Type == typ && p.Content != "" {
			only = p.Content
			n += len(p.Content)
			count++
		}
	}
	if count <= 1 {
		return only
	}
	var b strings.Builder
	b.Grow(n + (count-1)*len(sep))
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Type == typ && p.Content != "" {
			if b.Len() > 0 {
				b.WriteString(sep)
			}
			b.WriteString(p.Content)
		}
	}
	return b.String()
}

// AppendSearchText appends what a full-text search should find of m,
// each piece after a space: the content of its parts (text, reasoning,
// refusals, tool results), tool names, and the string values of tool
// calls' arguments and of parts kept as sent. Types, ids and media
// references are not words anyone searches for.
func (m *Message) AppendSearchText(dst []byte) []byte {
	if m == nil {
		return dst
	}
	word := func(s string) {
		if s != "" {
			if len(dst) > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, s...)
		}
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		word(p.Name)
		word(p.Content)
		for _, raw := range [...][]byte{p.Arguments, p.Data} {
			if len(raw) > 0 && json.Valid(raw) {
				dst = appendStringValues(dst, raw)
			}
		}
	}
	return dst
}

// appendStringValues appends the string values of valid JSON v (a string
// that holds JSON included, as OpenAI sends tool arguments), each after a
// space.
func appendStringValues(dst, v []byte) []byte {
	v = bytes.TrimSpace(v)
	switch v[0] {
	case '"':
		s, _ := String(v)
		if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && (inner[0] == '{' || inner[0] == '[') && json.Valid(inner) {
			return appendStringValues(dst, inner)
		}
		if len(dst) > 0 {
			dst = append(dst, ' ')
		}
		return append(dst, s...)
	case '{':
		EachValidMember(v, func(_, val []byte) bool {
			dst = appendStringValues(dst, val)
			return true
		})
	case '[':
		EachValidElement(v, func(val []byte) bool {
			dst = appendStringValues(dst, val)
			return true
		})
	}
	return dst
}

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	m.Parts = slices.Clone(m.Parts)
	for i := range m.Parts {
		p := &m.Parts[i]
		p.Arguments = cloneBytes(p.Arguments)
		p.Data = cloneBytes(p.Data)
	}
	return m
}

// size is about the bytes m holds, for bounding what a history keeps.
func (m *Message) size() int {
	if m == nil {
		return 0
	}
	n := len(m.Role)
	for i := range m.Parts {
		p := &m.Parts[i]
		n += len(p.Type) + len(p.ID) + len(p.Name) + len(p.Content) + len(p.Arguments) + len(p.MIMEType) + len(p.URI) + len(p.Data) + 8
	}
	return n
}

// MarshalJSON encodes m as [Message.AppendJSON] does.
func (m Message) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, 64)), nil
}

// AppendJSON appends m's encoding to dst: one line of compact JSON,
// members in a fixed order, empty ones left out, Arguments and Data in
// canonical form (object keys sorted, strings escaped one way). Two
// messages that say the same thing encode to the same bytes; it never
// fails (Arguments or Data that are not JSON are written as a JSON
// string holding them).
//
//	{"role":"assistant","parts":[{"type":"text","content":"It is 18 °C in Paris."}]}
func (m *Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":`...)
	dst = appendString(dst, m.Role)
	dst = append(dst, `,"parts":[`...)
	for i := range m.Parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = m.Parts[i].appendJSON(dst)
	}
	return append(dst, "]}"...)
}

func (p *Part) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, p.Type)
	dst = appendOptString(dst, `,"id":`, p.ID)
	dst = appendOptString(dst, `,"name":`, p.Name)
	dst = appendOptString(dst, `,"content":`, p.Content)
	if args := CanonicalArguments(p.Arguments); args != nil {
		dst = append(dst, `,"arguments":`...)
		dst = append(dst, args...)
	}
	dst = appendOptString(dst, `,"mime_type":`, p.MIMEType)
	dst = appendOptString(dst, `,"uri":`, p.URI)
	if p.Size != 0 {
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(p.Size), 10)
	}
	if p.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	if len(bytes.TrimSpace(p.Data)) > 0 {
		dst = append(dst, `,"data":`...)
		dst = AppendCanonicalJSON(dst, p.Data)
	}
	return append(dst, '}')
}

// CanonicalArguments returns a tool call's arguments (raw JSON: an object,
// or a string holding one as OpenAI sends them) in the form
// [Message.AppendJSON] writes them, which decoding gives back: canonical
// JSON, a string that holds a JSON object or array read as that object or
// array. No arguments, an empty object and null are one thing, none: nil
// (genai sends back a call's empty arguments as no arguments).
func CanonicalArguments(raw []byte) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	out := appendArguments(nil, raw)
	switch string(out) {
	case "{}", "null", `""`:
		return nil
	}
	return out
}

// appendArguments writes a tool call's arguments canonically, a string
// that holds a JSON object or array as that object or array.
func appendArguments(dst, raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if s, ok := String(raw); ok {
			if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && (inner[0] == '{' || inner[0] == '[') && json.Valid(inner) {
				return AppendCanonicalJSON(dst, inner)
			}
		}
	}
	return AppendCanonicalJSON(dst, raw)
}

// ArgumentsJSON returns a tool call's arguments as the model wrote them,
// text that is usually JSON, as [Part].Arguments: the JSON itself when
// it is JSON, else a JSON string holding it; canonical, as
// [CanonicalArguments] gives them.
func ArgumentsJSON(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	if json.Valid([]byte(t)) {
		return CanonicalArguments([]byte(t))
	}
	return appendString(nil, text)
}

// ArgumentsText returns a tool call's arguments as text: the JSON, or
// the string when they are a JSON string; "{}" when there are none.
func (p *Part) ArgumentsText() string {
	raw := CanonicalArguments(p.Arguments)
	if raw == nil {
		return "{}"
	}
	if raw[0] == '"' {
		s, _ := String(raw)
		return s
	}
	return string(raw)
}

// AppendCanonicalJSON appends the JSON value raw in canonical form:
// compact, object keys sorted (a key given twice keeps its last value, as
// encoding/json does), strings decoded and escaped as [Record.AppendJSON]
// escapes them, numbers as written. Two encodings of one value give the
// same bytes. raw that is not valid JSON is written as a JSON string
// holding it; empty raw as null.
func AppendCanonicalJSON(dst, raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if !json.Valid(raw) {
		return appendString(dst, string(raw))
	}
	return appendCanonical(dst, raw)
}

// appendCanonical is AppendCanonicalJSON for valid raw.
func appendCanonical(dst, raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '"':
		s, _ := String(raw)
		return appendString(dst, s)
	case '[':
		dst = append(dst, '[')
		first := true
		EachValidElement(raw, func(v []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendCanonical(dst, v)
			return true
		})
		return append(dst, ']')
	case '{':
		type member struct {
			key string
			val []byte
		}
		var members []member
		EachValidMember(raw, func(k, v []byte) bool {
			members = append(members, member{string(k), v})
			return true
		})
		slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		dst = append(dst, '{')
		first := true
		for i, mb := range members {
			if i+1 < len(members) && members[i+1].key == mb.key {
				continue // a later duplicate wins
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, mb.key)
			dst = append(dst, ':')
			dst = appendCanonical(dst, mb.val)
		}
		return append(dst, '}')
	}
	return append(dst, raw...) // a number, true, false, null
}

// ErrNotMessage is returned when JSON that should be a [Message] is not
// one: not an object with a role and a list of typed parts.
var ErrNotMessage = errors.New("record: not a message")

// UnmarshalJSON decodes a message as [Message.AppendJSON] writes it,
// ignoring members it does not know. It fails with an error wrapping
// [ErrNotMessage] unless data is an object whose role is a string and
// whose parts are objects, each with a type.
func (m *Message) UnmarshalJSON(data []byte) error {
	var out Message
	hasRole, hasParts := false, false
	var bad error
	ok := EachMember(data, func(k, v []byte) bool {
		switch string(k) {
		case "role":
			s, isStr := String(v)
			if !isStr {
				bad = errors.New("role is not a string")
				return false
			}
			out.Role, hasRole = s, true
		case "parts":
			hasParts = true
			out.Parts = out.Parts[:0]
			if !EachElement(v, func(e []byte) bool {
				var p Part
				if err := p.decode(e); err != nil {
					bad = err
					return false
				}
				out.Parts = append(out.Parts, p)
				return true
			}) && bad == nil {
				bad = errors.New("parts is not a list")
			}
			if bad != nil {
				return false
			}
		}
		return true
	})
	switch {
	case bad != nil:
		return fmt.Errorf("%w: %v", ErrNotMessage, bad)
	case !ok:
		return fmt.Errorf("%w: not a JSON object", ErrNotMessage)
	case !hasRole || !hasParts:
		return fmt.Errorf("%w: it lacks a role or parts", ErrNotMessage)
	}
	if out.Parts == nil {
		out.Parts = []Part{}
	}
	*m = out
	return nil
}

func (p *Part) decode(b []byte) error {
	var bad error
	str := func(dst *string, name string, v []byte) bool {
		s, ok := String(v)
		if !ok {
			bad = errors.New("part " + name + " is not a string")
			return false
		}
		*dst = s
		return true
	}
	hasType := false
	ok := EachMember(b, func(k, v []byte) bool {
		switch string(k) {
		case "type":
			hasType = true
			return str(&p.Type, "type", v)
		case "id":
			return str(&p.ID, "id", v)
		case "name":
			return str(&p.Name, "name", v)
		case "content":
			return str(&p.Content, "content", v)
		case "mime_type":
			return str(&p.MIMEType, "mime_type", v)
		case "uri":
			return str(&p.URI, "uri", v)
		case "arguments": // in the form AppendJSON writes, as every other member
			p.Arguments = CanonicalArguments(v)
		case "data":
			p.Data = AppendCanonicalJSON(nil, v)
		case "size":
			n, err := strconv.Atoi(string(v))
			if err != nil {
				bad = errors.New("part size is not an integer")
				return false
			}
			p.Size = n
		case "is_error":
			switch string(v) {
			case "true":
				p.IsError = true
			case "false":
				p.IsError = false
			default:
				bad = errors.New("part is_error is not a boolean")
				return false
			}
		}
		return true
	})
	switch {
	case bad != nil:
		return bad
	case !ok:
		return errors.New("a part is not a JSON object")
	case !hasType:
		return errors.New("a part has no type")
	}
	return nil
}

// Messages reads a record's Args as messages. An element that is not a
// message (the mark of earlier messages cut to fit, "…[3 earlier items
// cut]", or a record written before this model) comes back as a message
// with no role and one part of type [PartOther] holding the element as
// written, so that nothing is lost on the way to a reader.
func Messages(args []byte) []Message {
	var out []Message
	EachElement(args, func(el []byte) bool {
		out = append(out, MessageOf(el))
		return true
	})
	return out
}

// MessageOf reads one element of a record's Args as [Messages] does.
func MessageOf(el []byte) Message {
	var m Message
	if m.UnmarshalJSON(el) == nil {
		return m
	}
	return Message{Parts: []Part{{Type: PartOther, Data: bytes.Clone(bytes.TrimSpace(el))}}}
}

// AppendMessages appends the JSON list of msgs, each as
// [Message.AppendJSON] writes it: the form of a record's Args.
func AppendMessages(dst []byte, msgs []Message) []byte {
	dst = append(dst, '[')
	for i := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = msgs[i].AppendJSON(dst)
	}
	return append(dst, ']')
}
