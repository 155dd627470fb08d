package ollama

import (
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// The message model (record.Message) of Ollama's API. A request's
// messages and an answer's message (or a stream's pieces of it) are read
// by the same function (parts), so that an answer and the copy of it the
// next request sends back are one message.

// ChatMessage reads one message of a chat request ({"role", "content",
// "thinking", "images", "tool_calls"}), or a chat answer's message, as
// the message model.
func ChatMessage(raw []byte) record.Message {
	var b convert.Builder
	return chatMessage(gjson.ParseBytes(raw), &b).Clone()
}

// chatMessage reads a message into b (reset first) and returns it, its
// parts b's until b is reset. A tool's answer is a tool result part.
func chatMessage(v gjson.Result, b *convert.Builder) record.Message {
	b.Reset()
	role := convert.Role(v.Get("role").String())
	if role == record.RoleTool {
		b.Add(record.Part{Type: record.PartToolResult, Name: v.Get("tool_name").String(), Content: convert.ResultText(v.Get("content"))})
	} else {
		parts(v, b)
	}
	m := b.Message(nil)
	m.Role = role
	if m.Parts == nil {
		m.Parts = []record.Part{}
	}
	return m
}

// parts adds a message's parts to b, in one order whatever the order of
// its members: thinking, content, images, tool calls.
func parts(v gjson.Result, b *convert.Builder) {
	var thinking, content, images, calls gjson.Result
	wire.EachMember(v, func(k string, v gjson.Result) bool {
		switch k {
		case "thinking":
			thinking = v
		case "content":
			content = v
		case "images":
			images = v
		case "tool_calls":
			calls = v
		}
		return true
	})
	if thinking.Type == gjson.String && thinking.Str != "" {
		b.Reasoning(thinking.String())
	}
	if content.Type == gjson.String && content.Str != "" {
		b.Text(content.String())
	}
	images.ForEach(func(_, img gjson.Result) bool {
		b.Add(convert.Inline("image", img.String()))
		return true
	})
	calls.ForEach(func(_, c gjson.Result) bool {
		f := c.Get("function")
		b.Add(convert.Call(c.Get("id").String(), f.Get("name").String(), f.Get("arguments").Raw))
		return true
	})
}
