package view

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/record"
)

// A record's Args hold the conversation as the program sent it, each
// message read by its provider into the message model (record.Message),
// and its Output the answer, a message of the same model. This file shows
// them; it knows no provider's shape.

// Roles a message is shown with.
const (
	roleSystem    = "system"
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
	roleOther     = "other" // an element that is not a message
)

// Kinds of part.
const (
	partText       = "text"
	partThinking   = "thinking"
	partToolCall   = "tool_call"
	partToolResult = "tool_response"
	partMedia      = "media"
	partCode       = "code"
	partJSON       = "json"
)

// message is one turn as the viewer shows it.
type message struct {
	Role  string // roleSystem, roleUser, roleAssistant, roleTool or roleOther
	Label string // what the message is, when the role does not say it all ("answer")
	Parts []*part
}

// part is one piece of a message.
type part struct {
	Kind    string
	Text    string // text, thinking, a tool result's content, code, JSON
	Name    string // a tool's name; a code block's language
	ID      string // a tool call's id, which its result names
	Args    string // a tool call's arguments, indented when JSON
	MIME    string // media type, when known
	URL     string // media referenced, not embedded (shown as text, never loaded)
	Elided  string // "elided, 12.3 KB of data": inline data the recorder left out
	IsError bool   // a tool result that says it failed
	Result  *part  // a tool call's result, when the conversation holds it
	Paired  bool   // a tool result shown with its call
}

// Hidden reports whether every part of m is shown elsewhere (tool results
// shown with their calls).
func (m *message) Hidden() bool {
	if len(m.Parts) == 0 {
		return false
	}
	for _, p := range m.Parts {
		if !p.Paired {
			return false
		}
	}
	return true
}

// Text is the message's plain text: its text parts, joined.
func (m *message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == partText {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// parseMessage reads one element of a record's Args: a message of the
// message model (record.Message), which every provider's messages are
// read into when they are recorded. An element that is not one (the mark
// of earlier messages cut, a record written before the model) is shown
// as it was written, never dropped.
func parseMessage(raw []byte) *message {
	return viewOf(record.MessageOf(raw))
}

// viewOf is a message as the viewer shows it.
func viewOf(rm record.Message) *message {
	m := &message{Role: rm.Role}
	switch rm.Role {
	case record.RoleSystem, record.RoleUser, record.RoleAssistant, record.RoleTool:
	default:
		m.Role = roleOther
	}
	for i := range rm.Parts {
		if p := partOf(&rm.Parts[i]); p != nil {
			m.Parts = append(m.Parts, p)
		}
	}
	return m
}

// partOf is one part as the viewer shows it.
func partOf(p *record.Part) *part {
	switch p.Type {
	case record.PartText:
		return textPart(p.Content)
	case record.PartRefusal:
		return &part{Kind: partText, Text: "Refused: " + p.Content}
	case record.PartReasoning:
		t := p.Content
		if t == "" {
			t = "[hidden by the provider]"
		}
		return &part{Kind: partThinking, Text: t}
	case record.PartToolCall:
		return toolCall(p.ID, p.Name, p.Arguments)
	case record.PartToolResult:
		return &part{Kind: partToolResult, ID: p.ID, Name: p.Name, Text: jsonOrText(p.Content), IsError: p.IsError}
	case record.PartMedia:
		m := &part{Kind: partMedia, MIME: p.MIMEType, Name: p.Name, URL: p.URI}
		if p.URI == "" {
			m.Elided = "inline, " + byteSize(p.Size) + " of data, not kept"
		}
		return m
	}
	// A part of a kind the model has no type for, or an element that is
	// not a message: as it was written.
	if d := bytes.TrimSpace(p.Data); len(d) > 0 && d[0] == '"' {
		s, _ := record.String(d)
		return textPart(s)
	}
	j := jsonPart(p.Data)
	j.Name = p.Name
	return j
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func textPart(s string) *part {
	if e := elidedIn(s); e != "" && len(s) < 200 {
		return &part{Kind: partMedia, Elided: e}
	}
	return &part{Kind: partText, Text: s}
}

// jsonPart shows raw JSON, indented.
func jsonPart(raw []byte) *part { return &part{Kind: partJSON, Text: indentJSON(raw)} }

func indentJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// jsonOrText is s indented when it is a JSON object or array (a tool
// result given as structured data), else s.
func jsonOrText(s string) string {
	if t := strings.TrimSpace(s); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		return indentJSON([]byte(t))
	}
	return s
}

// toolCall is a call's part; args are JSON, or a JSON string holding the
// arguments as the model wrote them.
func toolCall(id, name string, args json.RawMessage) *part {
	p := &part{Kind: partToolCall, ID: id, Name: name}
	args = bytes.TrimSpace(args)
	if len(args) > 0 && args[0] == '"' {
		s, _ := record.String(args)
		p.Args = jsonOrText(s)
	} else if len(args) > 0 && string(args) != "null" {
		p.Args = indentJSON(args)
	}
	return p
}

var elidedPattern = regexp.MustCompile(`\[(?:elided|base64 elided:) (\d+) bytes\]`)

// elidedIn describes the elision marker the recorder left in s, if any.
func elidedIn(s string) string {
	m := elidedPattern.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	return "elided by the recorder, " + byteSize(n) + " of data"
}

func byteSize(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " bytes"
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " kB"
	}
	return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + " MB"
}

// firstUserText returns the text of the first user message of args that
// has text, cut to maxSnippet bytes with its runs of white space made
// single spaces, and whether it found one. It decodes only the messages
// of the user it looks at.
func firstUserText(args []byte) (string, bool) {
	var text string
	found := false
	record.EachValidElement(args, func(el []byte) bool {
		if roleOf(el) != record.RoleUser {
			return true
		}
		m := record.MessageOf(el)
		if t := m.Text(); t != "" {
			text, found = t, true
			return false
		}
		return true
	})
	if !found {
		return "", false
	}
	return snippet(text), true
}

// roleOf reads a message's role without decoding the rest of it.
func roleOf(el []byte) string {
	if len(el) == 0 || el[0] != '{' {
		return ""
	}
	var role string
	record.EachValidMember(el, func(k, v []byte) bool {
		if string(k) == "role" {
			role, _ = record.String(v)
			return false
		}
		return true
	})
	return role
}

// maxSnippet bounds the first user message a conversation summary keeps.
const maxSnippet = 240

func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxSnippet {
		return s
	}
	n := maxSnippet
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
