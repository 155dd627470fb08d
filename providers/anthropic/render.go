package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/record"
)

var _ providers.Renderer = Provider{}

type obj = map[string]any

// RenderRequest writes a Messages request (MethodCreate): the system
// messages as system text blocks, the others as messages of content
// blocks (a tool's results as the user's tool_result blocks, as the API
// takes them), the kwargs as its parameters, a tool the record names as
// a tool of that name with an empty object schema.
func (Provider) RenderRequest(method string, msgs []record.Message, kwargs []byte) (string, []byte, error) {
	if method != MethodCreate {
		return "", nil, fmt.Errorf("%w: %s (anthropic renders %s)", providers.ErrNotRenderable, method, MethodCreate)
	}
	if err := convert.CheckMessages(msgs); err != nil {
		return "", nil, err
	}
	kw, err := convert.Kwargs(kwargs)
	if err != nil {
		return "", nil, err
	}
	body := obj{}
	for k, v := range kw {
		if k == "tools" {
			var tools []obj
			for _, name := range convert.ToolNames(v) {
				tools = append(tools, obj{"name": name, "input_schema": obj{"type": "object"}})
			}
			body[k] = tools
			continue
		}
		body[k] = v
	}
	var system, wire []obj
	for i := range msgs {
		m := &msgs[i]
		if m.Role == record.RoleSystem {
			system = append(system, blocks(m)...)
			continue
		}
		role := m.Role
		if role == record.RoleTool {
			role = "user"
		}
		wire = append(wire, obj{"role": role, "content": blocks(m)})
	}
	if system != nil {
		body["system"] = system
	}
	body["messages"] = wire
	b, err := providers.MarshalJSON(body)
	return "/v1/messages", b, err
}

// blocks writes a message's parts as content blocks.
func blocks(m *record.Message) []obj {
	out := []obj{}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case record.PartText:
			out = append(out, obj{"type": "text", "text": p.Content})
		case record.PartReasoning:
			if p.Content == "" {
				out = append(out, obj{"type": "redacted_thinking", "data": ""})
			} else {
				out = append(out, obj{"type": "thinking", "thinking": p.Content, "signature": ""})
			}
		case record.PartRefusal:
			out = append(out, obj{"type": "text", "text": p.Content})
		case record.PartToolCall:
			out = append(out, obj{"type": "tool_use", "id": p.ID, "name": p.Name, "input": convert.Arguments(p)})
		case record.PartToolResult:
			// Content as a list of text blocks, as the SDK sends it.
			r := obj{"type": "tool_result", "tool_use_id": p.ID, "content": []obj{{"type": "text", "text": p.Content}}}
			if p.IsError {
				r["is_error"] = true
			}
			out = append(out, r)
		case record.PartMedia:
			out = append(out, media(p))
		case record.PartOther:
			var b obj
			if json.Unmarshal(p.Data, &b) != nil || b == nil {
				b = obj{}
			}
			b["type"] = p.Name
			out = append(out, b)
		}
	}
	return out
}

// media writes an image or a document: by URL or file id, or inline
// data of the size the record kept.
func media(p *record.Part) obj {
	kind := "image"
	if len(p.MIMEType) < 5 || p.MIMEType[:5] != "image" {
		kind = "document"
	}
	var src obj
	switch {
	case p.URI == "":
		src = obj{"type": "base64", "media_type": p.MIMEType, "data": convert.Elided(p.Size)}
	case len(p.URI) > 5 && p.URI[:5] == "file_":
		src = obj{"type": "file", "file_id": p.URI}
	default:
		src = obj{"type": "url", "url": p.URI}
	}
	b := obj{"type": kind, "source": src}
	if p.Name != "" {
		b["title"] = p.Name
	}
	return b
}

// RenderResponse writes a Message, or the events of its stream:
// message_start, each block's start, delta and stop, message_delta with
// the stop reason and usage, message_stop.
func (Provider) RenderResponse(method string, a providers.Answer, stream bool) (string, [][]byte, error) {
	if method != MethodCreate {
		return "", nil, fmt.Errorf("%w: %s (anthropic renders %s)", providers.ErrNotRenderable, method, MethodCreate)
	}
	content := blocks(&a.Message)
	var stop any
	if a.FinishReason != "" {
		stop = a.FinishReason
	}
	msg := obj{"id": a.ID, "type": "message", "role": "assistant", "model": a.Model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage(a.Usage)}
	if !stream {
		b, err := providers.MarshalJSON(msg)
		return "application/json", [][]byte{b}, err
	}
	start := obj{"id": a.ID, "type": "message", "role": "assistant", "model": a.Model, "content": []obj{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(inputOnly(a.Usage))}
	type event struct {
		name string
		data obj
	}
	events := []event{{"message_start", obj{"type": "message_start", "message": start}}}
	for i, blk := range content {
		var first, delta obj
		switch blk["type"] {
		case "text":
			first, delta = obj{"type": "text", "text": ""}, obj{"type": "text_delta", "text": blk["text"]}
		case "thinking":
			first, delta = obj{"type": "thinking", "thinking": "", "signature": ""}, obj{"type": "thinking_delta", "thinking": blk["thinking"]}
		case "tool_use":
			first = obj{"type": "tool_use", "id": blk["id"], "name": blk["name"], "input": obj{}}
			delta = obj{"type": "input_json_delta", "partial_json": string(blk["input"].(json.RawMessage))}
		default:
			first = blk
		}
		events = append(events, event{"content_block_start", obj{"type": "content_block_start", "index": i, "content_block": first}})
		if delta != nil {
			events = append(events, event{"content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": delta}})
		}
		events = append(events, event{"content_block_stop", obj{"type": "content_block_stop", "index": i}})
	}
	out := obj{"output_tokens": 0}
	if a.Usage != nil {
		out["output_tokens"] = a.Usage.OutputTokens
	}
	events = append(events,
		event{"message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": out}},
		event{"message_stop", obj{"type": "message_stop"}})
	var frames [][]byte
	for _, e := range events {
		b, err := providers.MarshalJSON(e.data)
		if err != nil {
			return "", nil, err
		}
		frames = append(frames, providers.AppendSSE(nil, e.name, b))
	}
	return "text/event-stream", frames, nil
}

// inputOnly is the usage message_start carries: the prompt's tokens, the
// output's to come.
func inputOnly(u *record.Usage) *record.Usage {
	if u == nil {
		return nil
	}
	in := *u
	in.OutputTokens, in.ReasoningTokens = 0, 0
	return &in
}

// usage writes Anthropic's counts, whose input_tokens leave out the
// tokens read from and written to the cache.
func usage(u *record.Usage) obj {
	if u == nil {
		return obj{"input_tokens": 0, "output_tokens": 0}
	}
	out := obj{"input_tokens": u.InputTokens - u.CachedTokens - u.CacheWriteTokens, "output_tokens": u.OutputTokens}
	if u.CachedTokens > 0 {
		out["cache_read_input_tokens"] = u.CachedTokens
	}
	if u.CacheWriteTokens > 0 {
		out["cache_creation_input_tokens"] = u.CacheWriteTokens
	}
	if u.CacheWrite1hTokens > 0 {
		out["cache_creation"] = obj{"ephemeral_1h_input_tokens": u.CacheWrite1hTokens,
			"ephemeral_5m_input_tokens": u.CacheWriteTokens - u.CacheWrite1hTokens}
	}
	return out
}

// RenderError writes Anthropic's error object.
func (Provider) RenderError(status int, message string) []byte {
	typ := "invalid_request_error"
	switch {
	case status == 429:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	case status == 404:
		typ = "not_found_error"
	}
	b, _ := json.Marshal(obj{"type": "error", "error": obj{"type": typ, "message": message}})
	return b
}
