package anthropic

import (
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// The message model (record.Message) of the Messages API. A request's
// messages and a response's content are read by the same function
// (contentParts), so that an answer and the copy of it the next request
// sends back are one message.

// Message reads one message of a Messages request ({"role", "content"}),
// or a response's Message, as the message model. A user message that
// only returns tool results is the tool's.
func Message(raw []byte) record.Message {
	var m record.Message
	message1(gjson.ParseBytes(raw), &m)
	return m
}

// message1 reads a message into m.
func message1(v gjson.Result, m *record.Message) {
	m.Role, m.Parts = record.RoleUser, m.Parts[:0]
	if !v.IsObject() {
		m.Parts = append(m.Parts, convert.Other("message", v.Raw))
		return
	}
	var content gjson.Result
	wire.EachMember(v, func(k string, v gjson.Result) bool {
		switch k {
		case "role":
			m.Role = convert.Role(v.String())
		case "content":
			content = v
		}
		return true
	})
	m.Parts = contentParts(m.Parts, content)
	convert.Results(m)
}

// systemMessage reads the system prompt, a string or text blocks.
func systemMessage(v gjson.Result, m *record.Message) {
	m.Role, m.Parts = record.RoleSystem, contentParts(m.Parts[:0], v)
}

// contentParts reads content: a string, or a list of content blocks.
func contentParts(parts []record.Part, c gjson.Result) []record.Part {
	switch {
	case c.Type == gjson.String:
		return convert.Text(parts, c.String())
	case !c.IsArray():
		return parts
	}
	c.ForEach(func(_, b gjson.Result) bool {
		parts = blockPart(parts, b)
		return true
	})
	return parts
}

// blockPart reads one content block. Thinking is reasoning (a redacted
// block's, hidden); the calls Anthropic runs itself (server_tool_use,
// mcp_tool_use) are tool calls as tool_use is; blocks of other kinds
// (their results, citations' search results) are kept as sent.
func blockPart(parts []record.Part, b gjson.Result) []record.Part {
	if b.Type == gjson.String {
		return convert.Text(parts, b.String())
	}
	typ := b.Get("type").String()
	switch typ {
	case "text":
		return convert.Text(parts, b.Get("text").String())
	case "thinking": // each block a part: blocks are thoughts apart
		return append(parts, record.Part{Type: record.PartReasoning, Content: b.Get("thinking").String()})
	case "redacted_thinking":
		return append(parts, record.Part{Type: record.PartReasoning})
	case "tool_use", "server_tool_use", "mcp_tool_use":
		return append(parts, convert.Call(b.Get("id").String(), b.Get("name").String(), b.Get("input").Raw))
	case "tool_result":
		return append(parts, record.Part{Type: record.PartToolResult, ID: b.Get("tool_use_id").String(),
			Content: convert.ResultText(b.Get("content")), IsError: b.Get("is_error").Bool()})
	case "image", "document":
		src := b.Get("source")
		var p record.Part
		switch src.Get("type").String() {
		case "base64", "text":
			p = convert.Inline(src.Get("media_type").String(), src.Get("data").String())
		case "url":
			p = convert.Media(typ, src.Get("url").String())
		case "file":
			p = convert.Media(typ, src.Get("file_id").String())
		default:
			p = convert.Other(typ, b.Raw)
		}
		if p.MIMEType == "" {
			p.MIMEType = typ
		}
		if t := b.Get("title"); t.Type == gjson.String {
			p.Name = t.String()
		}
		return append(parts, p)
	}
	return append(parts, convert.Other(typ, b.Raw))
}
