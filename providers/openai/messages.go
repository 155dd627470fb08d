package openai

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// The message model (record.Message) of OpenAI's shapes. A request's
// messages and a response's answer are read by the same functions, so
// that an answer and the copy of it the next request sends back are one
// message: a chat message by chatMessage (a choice's message is one),
// Responses API items by itemParts (a response's output is a list of
// them, as its next input is).

// ChatMessage reads one message of a chat completions request, or the
// message of a choice of its response, as the message model.
func ChatMessage(raw []byte) record.Message {
	var m record.Message
	chatMessage(parse(raw), &m)
	return m
}

// ResponsesItems reads the input items of a Responses API request, or the
// output items of its response, as the message model: consecutive items
// of the assistant (a message, its reasoning, its function calls) are one
// message, as they are one turn.
func ResponsesItems(raw []byte) []record.Message {
	var out []record.Message
	responsesItems(parse(raw), func(m *record.Message) {
		out = append(out, m.Clone())
	})
	return out
}

func parse(raw []byte) gjson.Result { return gjson.ParseBytes(raw) }

// responsesItems reads items (a list of them, or one: a bare string
// input) and gives each message to add, which must not keep it.
func responsesItems(v gjson.Result, add func(*record.Message)) {
	var m record.Message
	if !v.IsArray() {
		itemMessage(v, &m)
		add(&m)
		return
	}
	started := false
	v.ForEach(func(_, item gjson.Result) bool {
		role, _ := itemRole(item)
		if started && (role != record.RoleAssistant || m.Role != record.RoleAssistant) {
			add(&m)
			m.Parts = m.Parts[:0]
		}
		itemMessage(item, &m)
		started = true
		return true
	})
	if started {
		add(&m)
	}
}

// chatMessage reads a chat message into m: a system, developer, user or
// assistant message, a tool's answer (role tool, or function in the
// older form), or a bare string (a prompt). An assistant's parts come in
// one order whatever the order of its members: reasoning, text, refusal,
// tool calls.
func chatMessage(v gjson.Result, m *record.Message) {
	m.Role, m.Parts = record.RoleUser, m.Parts[:0]
	if !v.IsObject() {
		m.Parts = value(m.Parts, v)
		return
	}
	var role, reasoningContent, reasoning, content, refusal, calls, function, callID, name, audio gjson.Result
	wire.EachMember(v, func(k string, v gjson.Result) bool {
		switch k {
		case "role":
			role = v
		case "reasoning_content":
			reasoningContent = v
		case "reasoning":
			reasoning = v
		case "content":
			content = v
		case "refusal":
			refusal = v
		case "tool_calls":
			calls = v
		case "function_call":
			function = v
		case "tool_call_id":
			callID = v
		case "name":
			name = v
		case "audio":
			audio = v
		}
		return true
	})
	m.Role = convert.Role(role.String())
	if m.Role == record.RoleTool {
		// A tool's answer: its content is the result of the call it names.
		res := record.Part{Type: record.PartToolResult, ID: callID.String(), Content: convert.ResultText(content)}
		if role.String() == "function" {
			res.Name = name.String()
		}
		m.Parts = append(m.Parts, res)
		return
	}
	switch {
	case reasoningContent.Type == gjson.String && reasoningContent.Str != "":
		m.Parts = convert.Reasoning(m.Parts, reasoningContent.String())
	case reasoning.Type == gjson.String && reasoning.Str != "":
		m.Parts = convert.Reasoning(m.Parts, reasoning.String())
	}
	m.Parts = contentParts(m.Parts, content)
	if refusal.Type == gjson.String && refusal.String() != "" {
		m.Parts = append(m.Parts, record.Part{Type: record.PartRefusal, Content: refusal.String()})
	}
	if id := audio.Get("id"); id.Exists() {
		m.Parts = append(m.Parts, convert.Media("audio", id.String()))
	}
	calls.ForEach(func(_, c gjson.Result) bool {
		if custom := c.Get("custom"); custom.Exists() {
			m.Parts = append(m.Parts, convert.Call(c.Get("id").String(), custom.Get("name").String(), custom.Get("input").Raw))
			return true
		}
		f := c.Get("function")
		m.Parts = append(m.Parts, convert.Call(c.Get("id").String(), f.Get("name").String(), f.Get("arguments").Raw))
		return true
	})
	if function.IsObject() {
		m.Parts = append(m.Parts, convert.Call("", function.Get("name").String(), function.Get("arguments").Raw))
	}
}

// value reads a bare value: a string is text; anything else (token ids)
// is kept as sent.
func value(parts []record.Part, v gjson.Result) []record.Part {
	if v.Type == gjson.String {
		return convert.Text(parts, v.String())
	}
	return append(parts, convert.Other("input", v.Raw))
}

// contentParts reads a message's content: a string, or a list of parts
// of the chat API (text, image_url, input_audio, file, refusal) or of the
// Responses API (input_text, output_text, input_image, input_file,
// input_audio, refusal).
func contentParts(parts []record.Part, c gjson.Result) []record.Part {
	switch {
	case c.Type == gjson.String:
		return convert.Text(parts, c.String())
	case !c.IsArray():
		return parts
	}
	c.ForEach(func(_, p gjson.Result) bool {
		parts = contentPart(parts, p)
		return true
	})
	return parts
}

func contentPart(parts []record.Part, p gjson.Result) []record.Part {
	if p.Type == gjson.String {
		return convert.Text(parts, p.String())
	}
	typ := p.Get("type").String()
	switch typ {
	case "text", "input_text", "output_text":
		return convert.Text(parts, p.Get("text").String())
	case "refusal":
		return append(parts, record.Part{Type: record.PartRefusal, Content: p.Get("refusal").String()})
	case "image_url":
		u := p.Get("image_url")
		if u.IsObject() {
			u = u.Get("url")
		}
		return append(parts, convert.Media("image", u.String()))
	case "input_image":
		if id := p.Get("file_id"); id.Type == gjson.String {
			return append(parts, convert.Media("image", id.String()))
		}
		return append(parts, convert.Media("image", p.Get("image_url").String()))
	case "input_audio":
		a := p.Get("input_audio")
		if !a.Exists() {
			a = p
		}
		mime := "audio"
		if f := a.Get("format").String(); f != "" {
			mime += "/" + f
		}
		return append(parts, convert.Inline(mime, a.Get("data").String()))
	case "file", "input_file":
		f := p.Get("file")
		if !f.Exists() {
			f = p
		}
		var part record.Part
		switch {
		case f.Get("file_data").Exists():
			part = convert.Inline("file", f.Get("file_data").String())
		case f.Get("file_url").Exists():
			part = convert.Media("file", f.Get("file_url").String())
		default:
			part = convert.Media("file", f.Get("file_id").String())
		}
		part.Name = f.Get("filename").String()
		return append(parts, part)
	}
	return append(parts, convert.Other(typ, p.Raw))
}

// itemRole is the role of a Responses API item, and whether it has one
// at all (a message) rather than being one by its type.
func itemRole(item gjson.Result) (string, bool) {
	if !item.IsObject() {
		return record.RoleUser, false
	}
	if r := item.Get("role"); r.Exists() {
		return convert.Role(r.String()), true
	}
	typ := item.Get("type").String()
	switch {
	case typ == "reasoning", strings.HasSuffix(typ, "_call"):
		return record.RoleAssistant, false
	case strings.HasSuffix(typ, "_output"):
		return record.RoleTool, false
	}
	return record.RoleUser, false
}

// itemMessage reads a Responses API item into m, adding its parts to m's
// when m is the assistant's turn it continues.
func itemMessage(item gjson.Result, m *record.Message) {
	role, _ := itemRole(item)
	m.Role = role
	if !item.IsObject() {
		m.Parts = value(m.Parts, item)
		return
	}
	switch typ := item.Get("type").String(); typ {
	case "", "message":
		m.Parts = contentParts(m.Parts, item.Get("content"))
	case "function_call":
		m.Parts = append(m.Parts, convert.Call(item.Get("call_id").String(), item.Get("name").String(), item.Get("arguments").Raw))
	case "custom_tool_call":
		m.Parts = append(m.Parts, convert.Call(item.Get("call_id").String(), item.Get("name").String(), item.Get("input").Raw))
	case "function_call_output", "custom_tool_call_output":
		m.Parts = append(m.Parts, record.Part{Type: record.PartToolResult, ID: item.Get("call_id").String(), Content: convert.ResultText(item.Get("output"))})
	case "reasoning":
		m.Parts = append(m.Parts, record.Part{Type: record.PartReasoning, Content: reasoningText(item)})
	default:
		m.Parts = append(m.Parts, convert.Other(typ, item.Raw))
	}
}

// reasoningText is the text of a reasoning item: its summary's parts
// (what OpenAI shows of its models' reasoning) and its content's (what
// servers of open models send whole), a blank line apart.
func reasoningText(item gjson.Result) string {
	var b strings.Builder
	read := func(_, part gjson.Result) bool {
		if t := part.Get("type").String(); t == "summary_text" || t == "reasoning_text" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(part.Get("text").String())
		}
		return true
	}
	item.Get("summary").ForEach(read)
	item.Get("content").ForEach(read)
	return b.String()
}
