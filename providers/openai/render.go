package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/record"
)

var _ providers.Renderer = Provider{}

// obj is a JSON object being rendered; encoding/json writes its keys
// sorted, which is one layout, whatever the record's order.
type obj = map[string]any

// RenderRequest writes a chat completion request (MethodChat): the
// messages as chat messages, the kwargs as its parameters, a tool the
// record names as a function declaration with that name (a record keeps
// tools' names, not their schemas).
func (Provider) RenderRequest(method string, msgs []record.Message, kwargs []byte) (string, []byte, error) {
	if method != MethodChat {
		return "", nil, fmt.Errorf("%w: %s (openai renders %s)", providers.ErrNotRenderable, method, MethodChat)
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
		switch k {
		case "tools":
			var tools []obj
			for _, name := range convert.ToolNames(v) {
				// Parameters the record does not keep: an object of any
				// members (go-openai sends null for none).
				tools = append(tools, obj{"type": "function", "function": obj{"name": name, "parameters": obj{"type": "object"}}})
			}
			body[k] = tools
		case "response_format":
			body[k] = obj{"type": v}
		default:
			body[k] = v
		}
	}
	var wire []obj
	for i := range msgs {
		wire = append(wire, chatMessages(&msgs[i])...)
	}
	body["messages"] = wire
	b, err := providers.MarshalJSON(body)
	return "/v1/chat/completions", b, err
}

// chatMessages writes a message as chat messages: one, or one per result
// for the tool's results.
func chatMessages(m *record.Message) []obj {
	if m.Role == record.RoleTool {
		var out []obj
		for _, p := range m.Parts {
			out = append(out, obj{"role": "tool", "tool_call_id": p.ID, "content": p.Content})
		}
		return out
	}
	out := obj{"role": m.Role}
	var content []obj
	text := ""
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case record.PartText:
			text += p.Content
			content = append(content, obj{"type": "text", "text": p.Content})
		case record.PartReasoning:
			out["reasoning_content"] = p.Content
		case record.PartRefusal:
			out["refusal"] = p.Content
		case record.PartToolCall:
			calls, _ := out["tool_calls"].([]obj)
			out["tool_calls"] = append(calls, toolCall(p))
		case record.PartMedia:
			content = append(content, mediaPart(p))
		case record.PartOther:
			content = append(content, obj{"type": p.Name, "data": p.Data})
		}
	}
	switch {
	case len(content) == 1 && content[0]["type"] == "text" || len(content) == 0 && m.Role != record.RoleAssistant:
		out["content"] = text // the string form, as SDKs send plain text
	case len(content) > 0 && m.Role == record.RoleAssistant && onlyText(content):
		out["content"] = text
	case len(content) > 0:
		out["content"] = content
	}
	return []obj{out}
}

func onlyText(content []obj) bool {
	for _, c := range content {
		if c["type"] != "text" {
			return false
		}
	}
	return true
}

func toolCall(p *record.Part) obj {
	return obj{"id": p.ID, "type": "function", "function": obj{"name": p.Name, "arguments": convert.ArgumentsString(p)}}
}

// mediaPart writes media as the chat API takes it: an image by URL (or
// a data URL of the size the record kept), audio inline, a file by id.
func mediaPart(p *record.Part) obj {
	kind, format, _ := strings.Cut(p.MIMEType, "/")
	ref := p.URI
	if ref == "" {
		ref = "data:" + p.MIMEType + ";base64," + convert.Elided(p.Size)
	}
	switch kind {
	case "image":
		return obj{"type": "image_url", "image_url": obj{"url": ref}}
	case "audio":
		return obj{"type": "input_audio", "input_audio": obj{"format": format, "data": convert.Elided(p.Size)}}
	}
	f := obj{}
	switch {
	case p.URI == "":
		f["file_data"] = convert.Elided(p.Size)
	default:
		f["file_id"] = p.URI
	}
	if p.Name != "" {
		f["filename"] = p.Name
	}
	return obj{"type": "file", "file": f}
}

// RenderResponse writes a chat completion, or the chunks of its stream:
// the role, the text, each tool call, the finish reason, the usage, and
// OpenAI's [DONE].
func (Provider) RenderResponse(method string, a providers.Answer, stream bool) (string, [][]byte, error) {
	if method != MethodChat {
		return "", nil, fmt.Errorf("%w: %s (openai renders %s)", providers.ErrNotRenderable, method, MethodChat)
	}
	msg := chatMessages(&a.Message)[0]
	msg["role"] = "assistant"
	if _, ok := msg["content"]; !ok {
		msg["content"] = nil
	}
	var finish any
	if a.FinishReason != "" {
		finish = a.FinishReason
	}
	if !stream {
		body := obj{"id": a.ID, "object": "chat.completion", "created": 0, "model": a.Model,
			"choices": []obj{{"index": 0, "message": msg, "finish_reason": finish}}}
		if a.Usage != nil {
			body["usage"] = usage(a.Usage)
		}
		b, err := providers.MarshalJSON(body)
		return "application/json", [][]byte{b}, err
	}
	chunk := func(delta obj, finish any) obj {
		return obj{"id": a.ID, "object": "chat.completion.chunk", "created": 0, "model": a.Model,
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	chunks := []obj{chunk(obj{"role": "assistant", "content": ""}, nil)}
	if r, ok := msg["reasoning_content"]; ok {
		chunks = append(chunks, chunk(obj{"reasoning_content": r}, nil))
	}
	if s, ok := msg["content"].(string); ok && s != "" {
		chunks = append(chunks, chunk(obj{"content": s}, nil))
	}
	if r, ok := msg["refusal"]; ok {
		chunks = append(chunks, chunk(obj{"refusal": r}, nil))
	}
	calls, _ := msg["tool_calls"].([]obj)
	for i, c := range calls {
		c["index"] = i
		chunks = append(chunks, chunk(obj{"tool_calls": []obj{c}}, nil))
	}
	chunks = append(chunks, chunk(obj{}, finish))
	if a.Usage != nil {
		chunks = append(chunks, obj{"id": a.ID, "object": "chat.completion.chunk", "created": 0, "model": a.Model,
			"choices": []obj{}, "usage": usage(a.Usage)})
	}
	var frames [][]byte
	for _, c := range chunks {
		b, err := providers.MarshalJSON(c)
		if err != nil {
			return "", nil, err
		}
		frames = append(frames, providers.AppendSSE(nil, "", b))
	}
	frames = append(frames, providers.AppendSSE(nil, "", []byte("[DONE]")))
	return "text/event-stream", frames, nil
}

func usage(u *record.Usage) obj {
	out := obj{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.TotalTokens}
	if u.CachedTokens > 0 {
		out["prompt_tokens_details"] = obj{"cached_tokens": u.CachedTokens}
	}
	if u.ReasoningTokens > 0 {
		out["completion_tokens_details"] = obj{"reasoning_tokens": u.ReasoningTokens}
	}
	return out
}

// RenderError writes OpenAI's error object.
func (Provider) RenderError(status int, message string) []byte {
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == 429:
		typ, code = "rate_limit_exceeded", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	b, _ := json.Marshal(obj{"error": obj{"message": message, "type": typ, "param": nil, "code": code}})
	return b
}
