package bedrock

import (
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// The message model (record.Message) of Bedrock's Converse API (and of
// Amazon Nova's InvokeModel bodies, which are Converse's). A request's
// messages and an answer's message are read by the same function
// (block), so that an answer and the copy of it the next request sends
// back are one message: a toolUse block the model wrote is the same tool
// call when the caller sends it back, its toolResult the tool's turn.

// ConverseMessage reads one message of a Converse request ({"role",
// "content": [blocks]}), or a Converse answer's output message, as the
// message model. A user message that only returns tool results is the
// tool's.
func ConverseMessage(raw []byte) record.Message {
	var b convert.Builder
	return converseMessage(gjson.ParseBytes(raw), &b).Clone()
}

// converseMessage reads a message into b (reset first) and returns it,
// its parts b's until b is reset.
func converseMessage(v gjson.Result, b *convert.Builder) record.Message {
	b.Reset()
	role := record.RoleUser
	wire.EachMember(v, func(k string, v gjson.Result) bool {
		switch k {
		case "role":
			role = convert.Role(v.String())
		case "content":
			blocks(v, b)
		}
		return true
	})
	m := b.Message(nil)
	m.Role = role
	if m.Parts == nil {
		m.Parts = []record.Part{}
	}
	convert.Results(&m)
	return m
}

// blocks reads content: a list of blocks, or a string (what some
// InvokeModel families send).
func blocks(v gjson.Result, b *convert.Builder) {
	if v.Type == gjson.String {
		b.Text(v.String())
		return
	}
	v.ForEach(func(_, blk gjson.Result) bool {
		block(blk, b)
		return true
	})
}

// block reads one content block, keyed by its kind: text, reasoning
// (hidden when redacted), a tool's use and its result, media by
// reference (an S3 location) or inline (its size). A cache point is no
// content; other kinds are kept as sent.
func block(blk gjson.Result, b *convert.Builder) {
	if !blk.IsObject() {
		b.Add(convert.Other("block", blk.Raw))
		return
	}
	wire.EachMember(blk, func(kind string, v gjson.Result) bool {
		switch kind {
		case "text":
			b.Text(v.String())
		case "reasoningContent":
			b.Reasoning(v.Get("reasoningText.text").String())
		case "toolUse":
			b.Add(convert.Call(v.Get("toolUseId").String(), v.Get("name").String(), v.Get("input").Raw))
		case "toolResult":
			b.Add(record.Part{Type: record.PartToolResult, ID: v.Get("toolUseId").String(),
				Content: resultText(v.Get("content")), IsError: v.Get("status").String() == "error"})
		case "image", "document", "video", "audio":
			mime := kind
			if f := v.Get("format").String(); f != "" {
				mime += "/" + f
			}
			src := v.Get("source")
			var p record.Part
			switch {
			case src.Get("s3Location").Exists():
				p = convert.Media(mime, src.Get("s3Location.uri").String())
			case src.Get("bytes").Exists():
				p = convert.Inline(mime, src.Get("bytes").String())
			case src.Get("text").Exists():
				p = convert.Inline(mime, src.Get("text").String())
			default:
				p = convert.Inline(mime, "")
			}
			p.Name = v.Get("name").String()
			b.Add(p)
		case "cachePoint":
		default:
			b.Add(convert.Other(kind, blk.Raw))
		}
		return false // a block is one kind
	})
}

// resultText is a toolResult's content as text: the text of its text
// blocks; one json block as its JSON; anything else as the content's JSON.
func resultText(c gjson.Result) string {
	if c.IsArray() {
		if arr := c.Array(); len(arr) == 1 {
			if j := arr[0].Get("json"); j.Exists() {
				return string(record.AppendCanonicalJSON(nil, []byte(j.Raw)))
			}
		}
	}
	return convert.ResultText(c)
}

// invokeMessage reads one message of an InvokeModel body of a family
// other than Claude's: Amazon Nova's are Converse's; OpenAI's gpt-oss and
// Mistral's are chat messages (a string content, or typed parts).
func invokeMessage(v gjson.Result, b *convert.Builder) record.Message {
	c := v.Get("content")
	if c.Type == gjson.String || c.IsArray() && c.Get("0.type").Exists() {
		return openai.ChatMessage([]byte(v.Raw))
	}
	return converseMessage(v, b)
}
