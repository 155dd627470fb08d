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

// A record's Args hold the conversation as the program sent it, in its
// provider's shape: OpenAI chat messages and Responses items, Anthropic
// messages and content blocks, Gemini contents and parts, Bedrock
// Converse content blocks, Ollama messages, or a prompt string. This file
// reads any of them as one kind of message to show; what it does not
// recognize is shown as JSON, never dropped.

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
	partToolResult = "tool_result"
	partMedia      = "media"
	partCode       = "code"
	partJSON       = "json"
)

// message is one turn as the viewer shows it.
type message struct {
	Role  string // roleSystem, roleUser, roleAssistant, roleTool or roleOther
	Label string // the role as written, when it says more (developer, model, function)
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

type rawObject map[string]json.RawMessage

func (o rawObject) str(key string) string {
	v, ok := o[key]
	if !ok {
		return ""
	}
	s, _ := record.String(bytes.TrimSpace(v))
	return s
}

func (o rawObject) isTrue(key string) bool { return string(bytes.TrimSpace(o[key])) == "true" }

func (o rawObject) has(key string) bool {
	v, ok := o[key]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

func (o rawObject) obj(key string) rawObject {
	var m rawObject
	if v, ok := o[key]; ok {
		if json.Unmarshal(v, &m) != nil {
			return nil
		}
	}
	return m
}

func objectOf(raw []byte) (rawObject, bool) {
	var m rawObject
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func arrayOf(raw json.RawMessage) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &a) != nil || a == nil {
		return nil, false
	}
	return a, true
}

// parseMessage reads one element of a record's Args.
func parseMessage(raw []byte) *message {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return &message{Role: roleOther}
	}
	if raw[0] == '"' { // a prompt, an input string
		s, _ := record.String(raw)
		return &message{Role: roleUser, Parts: []*part{textPart(s)}}
	}
	o, ok := objectOf(raw)
	if !ok {
		return &message{Role: roleOther, Parts: []*part{jsonPart(raw)}}
	}
	m := &message{}
	role := o.str("role")
	switch {
	case o.isTrue("system"), o.isTrue("instructions"), o.isTrue("systemInstruction"):
		m.Role = roleSystem
	default:
		m.Role, m.Label = normalRole(role)
	}

	// OpenAI Responses items that are not messages.
	switch typ := o.str("type"); typ {
	case "function_call", "custom_tool_call":
		m.Role = roleAssistant
		args := o["arguments"]
		if !o.has("arguments") {
			args = o["input"]
		}
		m.Parts = append(m.Parts, toolCall(o.str("call_id"), o.str("name"), args))
		return m
	case "function_call_output", "custom_tool_call_output":
		m.Role = roleTool
		m.Parts = append(m.Parts, toolResult(o.str("call_id"), "", o["output"], false))
		return m
	case "reasoning":
		m.Role = roleAssistant
		var texts []string
		if summary, ok := arrayOf(o["summary"]); ok {
			for _, s := range summary {
				if so, ok := objectOf(s); ok && so.str("text") != "" {
					texts = append(texts, so.str("text"))
				}
			}
		}
		if content, ok := arrayOf(o["content"]); ok {
			for _, s := range content {
				if so, ok := objectOf(s); ok && so.str("text") != "" {
					texts = append(texts, so.str("text"))
				}
			}
		}
		t := strings.Join(texts, "\n\n")
		if t == "" && o.has("encrypted_content") {
			t = "[encrypted]"
		}
		m.Parts = append(m.Parts, &part{Kind: partThinking, Text: t})
		return m
	case "", "message":
	default:
		if role == "" {
			if strings.HasSuffix(typ, "_output") {
				m.Role = roleTool
			} else {
				m.Role = roleAssistant
			}
			m.Label = typ
			m.Parts = append(m.Parts, jsonPart(raw))
			return m
		}
	}

	// Reasoning carried beside the content: DeepSeek-style, Ollama's.
	for _, k := range []string{"reasoning_content", "reasoning", "thinking"} {
		if s := o.str(k); s != "" {
			m.Parts = append(m.Parts, &part{Kind: partThinking, Text: s})
		}
	}
	known := false
	if c, ok := o["content"]; ok {
		known = true
		m.Parts = append(m.Parts, contentParts(c)...)
	}
	if ps, ok := arrayOf(o["parts"]); ok { // Gemini
		known = true
		for _, p := range ps {
			if gp := geminiPart(p); gp != nil {
				m.Parts = append(m.Parts, gp)
			}
		}
	}
	if s := o.str("refusal"); s != "" {
		known = true
		m.Parts = append(m.Parts, textPart("Refused: "+s))
	}
	if imgs, ok := arrayOf(o["images"]); ok { // Ollama
		for _, img := range imgs {
			s, _ := record.String(bytes.TrimSpace(img))
			m.Parts = append(m.Parts, mediaPart("image", s))
		}
	}
	if a := o.obj("audio"); a != nil {
		m.Parts = append(m.Parts, &part{Kind: partMedia, MIME: "audio", Text: "audio " + a.str("id")})
	}
	if calls, ok := arrayOf(o["tool_calls"]); ok {
		known = true
		for _, c := range calls {
			co, ok := objectOf(c)
			if !ok {
				continue
			}
			fn := co.obj("function")
			if fn == nil {
				fn = co
			}
			m.Parts = append(m.Parts, toolCall(co.str("id"), fn.str("name"), fn["arguments"]))
		}
	}
	if fc := o.obj("function_call"); fc != nil { // OpenAI's older functions
		known = true
		m.Parts = append(m.Parts, toolCall("", fc.str("name"), fc["arguments"]))
	}
	if id := o.str("tool_call_id"); id != "" || m.Label == "function" {
		// An OpenAI tool message: its content is the result of call id.
		var text strings.Builder
		for _, p := range m.Parts {
			if text.Len() > 0 {
				text.WriteString("\n")
			}
			text.WriteString(p.Text)
		}
		m.Role = roleTool
		m.Parts = []*part{{Kind: partToolResult, ID: id, Name: o.str("name"), Text: text.String()}}
		return m
	}
	if !known && m.Role != roleSystem && len(m.Parts) == 0 {
		m.Role, m.Label = roleOther, ""
		m.Parts = []*part{jsonPart(raw)}
		return m
	}
	if m.Role == roleUser && len(m.Parts) > 0 && allResults(m.Parts) {
		m.Role = roleTool // Anthropic, Gemini, Bedrock: results travel in a user turn
	}
	return m
}

func allResults(ps []*part) bool {
	for _, p := range ps {
		if p.Kind != partToolResult {
			return false
		}
	}
	return true
}

// normalRole maps a provider's role to one of the four shown, and keeps
// the written one as a label when it says more.
func normalRole(role string) (string, string) {
	switch role {
	case "system":
		return roleSystem, ""
	case "developer":
		return roleSystem, role
	case "user", "":
		return roleUser, ""
	case "assistant":
		return roleAssistant, ""
	case "model":
		return roleAssistant, role
	case "tool", "ipython":
		return roleTool, ""
	case "function":
		return roleTool, role
	}
	return roleUser, role
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

// toolCall is a call's part; args are JSON, or a JSON string holding the
// arguments as the model wrote them.
func toolCall(id, name string, args json.RawMessage) *part {
	p := &part{Kind: partToolCall, ID: id, Name: name}
	args = bytes.TrimSpace(args)
	if len(args) > 0 && args[0] == '"' {
		s, _ := record.String(args)
		if b := []byte(strings.TrimSpace(s)); len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b) {
			p.Args = indentJSON(b)
		} else {
			p.Args = s
		}
	} else if len(args) > 0 && string(args) != "null" {
		p.Args = indentJSON(args)
	}
	return p
}

// toolResult is a result's part; content is a string, content blocks, or
// any JSON.
func toolResult(id, name string, content json.RawMessage, isError bool) *part {
	return &part{Kind: partToolResult, ID: id, Name: name, Text: flatText(content), IsError: isError}
}

// flatText reads content (a string, content blocks, or any JSON) as text.
func flatText(content json.RawMessage) string {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return ""
	}
	switch content[0] {
	case '"':
		s, _ := record.String(content)
		return s
	case '[':
		var texts []string
		blocks, _ := arrayOf(content)
		allText := true
		for _, b := range blocks {
			p := block(b)
			if p == nil {
				continue
			}
			switch p.Kind {
			case partText:
				texts = append(texts, p.Text)
			case partMedia:
				texts = append(texts, mediaLabel(p))
			default:
				allText = false
			}
		}
		if allText {
			return strings.Join(texts, "\n")
		}
	}
	return indentJSON(content)
}

func mediaLabel(p *part) string {
	s := "[" + cmpOr(p.MIME, "media")
	if p.Elided != "" {
		s += ", " + p.Elided
	}
	if p.URL != "" {
		s += ": " + p.URL
	}
	return s + "]"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// contentParts reads a message's content: a string or a list of blocks.
func contentParts(c json.RawMessage) []*part {
	c = bytes.TrimSpace(c)
	if len(c) == 0 || string(c) == "null" {
		return nil
	}
	switch c[0] {
	case '"':
		s, _ := record.String(c)
		return []*part{textPart(s)}
	case '[':
		blocks, _ := arrayOf(c)
		var out []*part
		for _, b := range blocks {
			if p := block(b); p != nil {
				out = append(out, p)
			}
		}
		return out
	}
	return []*part{jsonPart(c)}
}

// block reads one content block of any provider; nil for one that carries
// nothing to show (a cache point).
func block(raw json.RawMessage) *part {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		s, _ := record.String(raw)
		return textPart(s)
	}
	o, ok := objectOf(raw)
	if !ok {
		return jsonPart(raw)
	}
	switch o.str("type") {
	case "text", "input_text", "output_text":
		return textPart(o.str("text"))
	case "refusal":
		return textPart("Refused: " + o.str("refusal"))
	case "thinking":
		return &part{Kind: partThinking, Text: o.str("thinking")}
	case "redacted_thinking":
		return &part{Kind: partThinking, Text: "[redacted]"}
	case "image_url":
		if u := o.obj("image_url"); u != nil {
			return mediaPart("image", u.str("url"))
		}
		return mediaPart("image", o.str("image_url"))
	case "input_image":
		return mediaPart("image", cmpOr(o.str("image_url"), o.str("file_id")))
	case "input_audio":
		a := o.obj("input_audio")
		p := mediaPart("audio", a.str("data"))
		if f := a.str("format"); f != "" {
			p.MIME = "audio/" + f
		}
		return p
	case "file", "input_file":
		f := o.obj("file")
		if f == nil {
			f = o
		}
		p := mediaPart("file", cmpOr(f.str("file_data"), f.str("file_id")))
		if n := f.str("filename"); n != "" {
			p.Name = n
		}
		return p
	case "image", "document":
		src := o.obj("source")
		p := mediaPart(o.str("type"), cmpOr(src.str("data"), src.str("url")))
		if mt := src.str("media_type"); mt != "" {
			p.MIME = mt
		}
		return p
	case "tool_use", "server_tool_use":
		return toolCall(o.str("id"), o.str("name"), o["input"])
	case "tool_result":
		return toolResult(o.str("tool_use_id"), "", o["content"], o.isTrue("is_error"))
	}
	// Bedrock Converse blocks, keyed by kind.
	switch {
	case o.has("text") && len(o) == 1:
		return textPart(o.str("text"))
	case o.has("toolUse"):
		u := o.obj("toolUse")
		return toolCall(u.str("toolUseId"), u.str("name"), u["input"])
	case o.has("toolResult"):
		r := o.obj("toolResult")
		return toolResult(r.str("toolUseId"), "", r["content"], r.str("status") == "error")
	case o.has("json") && len(o) == 1:
		return jsonPart(o["json"])
	case o.has("reasoningContent"):
		rc := o.obj("reasoningContent")
		if rt := rc.obj("reasoningText"); rt != nil {
			return &part{Kind: partThinking, Text: rt.str("text")}
		}
		return &part{Kind: partThinking, Text: "[redacted]"}
	case o.has("image"), o.has("document"), o.has("video"):
		for _, k := range []string{"image", "document", "video"} {
			if v := o.obj(k); v != nil {
				p := mediaPart(k, "")
				if f := v.str("format"); f != "" {
					p.MIME = k + "/" + f
				}
				p.Elided = elidedIn(string(v["source"]))
				p.Name = v.str("name")
				return p
			}
		}
	case o.has("cachePoint") && len(o) == 1:
		return nil
	}
	return jsonPart(raw)
}

// geminiPart reads one Gemini part; nil for one with nothing to show (a
// thought signature alone).
func geminiPart(raw json.RawMessage) *part {
	o, ok := objectOf(raw)
	if !ok {
		return jsonPart(raw)
	}
	switch {
	case o.has("text"):
		if o.isTrue("thought") {
			return &part{Kind: partThinking, Text: o.str("text")}
		}
		return textPart(o.str("text"))
	case o.has("inlineData"), o.has("inline_data"):
		d := o.obj("inlineData")
		if d == nil {
			d = o.obj("inline_data")
		}
		p := mediaPart("media", d.str("data"))
		p.MIME = cmpOr(d.str("mimeType"), d.str("mime_type"))
		return p
	case o.has("fileData"), o.has("file_data"):
		d := o.obj("fileData")
		if d == nil {
			d = o.obj("file_data")
		}
		return &part{Kind: partMedia, MIME: cmpOr(d.str("mimeType"), d.str("mime_type")), URL: cmpOr(d.str("fileUri"), d.str("file_uri"))}
	case o.has("functionCall"), o.has("function_call"):
		c := o.obj("functionCall")
		if c == nil {
			c = o.obj("function_call")
		}
		return toolCall(c.str("id"), c.str("name"), c["args"])
	case o.has("functionResponse"), o.has("function_response"):
		r := o.obj("functionResponse")
		if r == nil {
			r = o.obj("function_response")
		}
		return toolResult(r.str("id"), r.str("name"), r["response"], false)
	case o.has("executableCode"):
		c := o.obj("executableCode")
		return &part{Kind: partCode, Name: strings.ToLower(c.str("language")), Text: c.str("code")}
	case o.has("codeExecutionResult"):
		r := o.obj("codeExecutionResult")
		return &part{Kind: partToolResult, Name: "code execution", Text: r.str("output"), IsError: r.str("outcome") != "" && r.str("outcome") != "OUTCOME_OK"}
	case len(o) == 1 && (o.has("thoughtSignature") || o.has("thought_signature")):
		return nil
	}
	return jsonPart(raw)
}

// mediaPart is media referenced by s: a data URL or base64 the recorder
// elided, or a URL or file id (shown as text, never fetched).
func mediaPart(kind, s string) *part {
	p := &part{Kind: partMedia, MIME: kind}
	if strings.HasPrefix(s, "data:") {
		if semi := strings.IndexAny(s, ";,"); semi > 5 {
			p.MIME = s[5:semi]
		}
	}
	switch e := elidedIn(s); {
	case e != "":
		p.Elided = e
	case strings.HasPrefix(s, "data:"):
		p.Elided = "inline, " + byteSize(len(s)) + " of data"
	case len(s) > 300:
		p.Elided = "inline, " + byteSize(len(s)) + " of data"
	default:
		p.URL = s
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

// firstUserText returns the text of the first user message of args, cut
// to maxSnippet bytes with its runs of white space made single spaces, and
// whether it found one. It walks the Args without decoding the other
// messages.
func firstUserText(args []byte) (string, bool) {
	var text string
	found := false
	record.EachValidElement(args, func(el []byte) bool {
		if len(el) > 0 && el[0] == '"' {
			text, _ = record.String(el)
			found = true
			return false
		}
		if len(el) == 0 || el[0] != '{' {
			return true
		}
		role, system := "", false
		var content, parts []byte
		record.EachValidMember(el, func(k, v []byte) bool {
			switch string(k) {
			case "role":
				role, _ = record.String(v)
			case "system", "instructions", "systemInstruction":
				system = string(v) == "true"
			case "content":
				content = v
			case "parts":
				parts = v
			case "tool_call_id", "type":
				if string(k) == "tool_call_id" || string(v) != `"message"` {
					system = true // a tool result or a Responses item: not the user's words
				}
			}
			return true
		})
		if system || role != "user" && role != "" {
			return true
		}
		if t, ok := snippetOf(content, parts); ok {
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

// snippetOf finds the first text in a message's content or parts.
func snippetOf(content, parts []byte) (string, bool) {
	if len(content) > 0 && content[0] == '"' {
		s, _ := record.String(content)
		return s, true
	}
	var text string
	found := false
	each := func(list []byte) {
		record.EachValidElement(list, func(b []byte) bool {
			if len(b) > 0 && b[0] == '"' {
				text, _ = record.String(b)
				found = true
				return false
			}
			var t string
			ok, thought := false, false
			record.EachValidMember(b, func(k, v []byte) bool {
				switch string(k) {
				case "text":
					t, ok = record.String(v)
				case "thought":
					thought = string(v) == "true"
				}
				return true
			})
			if ok && !thought {
				text, found = t, true
				return false
			}
			return true
		})
	}
	if len(content) > 0 && content[0] == '[' {
		each(content)
	}
	if !found && len(parts) > 0 && parts[0] == '[' {
		each(parts)
	}
	return text, found
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
