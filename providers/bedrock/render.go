package bedrock

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/url"
	"strings"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/record"
)

var _ providers.Renderer = Provider{}

type obj = map[string]any

// EventStreamType is the Content-Type of a ConverseStream response.
const EventStreamType = "application/vnd.amazon.eventstream"

func converseMethod(method string) error {
	if method != MethodConverse && method != MethodConverseStream {
		return fmt.Errorf("%w: %s (bedrock renders %s and %s)", providers.ErrNotRenderable, method, MethodConverse, MethodConverseStream)
	}
	return nil
}

// RenderRequest writes a Converse or ConverseStream request: the path
// names the model (/model/ID/converse, /converse-stream), the system
// messages are system blocks, the others messages of content blocks (a
// tool's results as the user's toolResult blocks), the kwargs the
// request's members, a tool the record names as a toolSpec of that name
// with an object schema.
func (Provider) RenderRequest(method string, msgs []record.Message, kwargs []byte) (string, []byte, error) {
	if err := converseMethod(method); err != nil {
		return "", nil, err
	}
	if err := convert.CheckMessages(msgs); err != nil {
		return "", nil, err
	}
	kw, err := convert.Kwargs(kwargs)
	if err != nil {
		return "", nil, err
	}
	var model string
	if json.Unmarshal(kw["model"], &model) != nil || model == "" {
		return "", nil, fmt.Errorf("%w: no model in the kwargs (Bedrock's is in the URL)", providers.ErrNotRenderable)
	}
	body := obj{}
	for k, v := range kw {
		switch k {
		case "model":
		case "toolConfig":
			var tc map[string]json.RawMessage
			json.Unmarshal(v, &tc)
			out := obj{}
			for tk, tv := range tc {
				if tk != "tools" {
					out[tk] = tv
					continue
				}
				var tools []obj
				for _, name := range convert.ToolNames(tv) {
					tools = append(tools, obj{"toolSpec": obj{"name": name, "inputSchema": obj{"json": obj{"type": "object"}}}})
				}
				out[tk] = tools
			}
			body[k] = out
		default:
			body[k] = v
		}
	}
	var system []obj
	wire := []obj{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == record.RoleSystem {
			system = append(system, renderBlocks(m)...)
			continue
		}
		role := "user"
		if m.Role == record.RoleAssistant {
			role = "assistant"
		}
		wire = append(wire, obj{"role": role, "content": renderBlocks(m)})
	}
	if system != nil {
		body["system"] = system
	}
	body["messages"] = wire
	b, err := providers.MarshalJSON(body)
	op := "/converse"
	if method == MethodConverseStream {
		op = "/converse-stream"
	}
	return "/model/" + url.PathEscape(model) + op, b, err
}

// renderBlocks writes a message's parts as Converse content blocks.
func renderBlocks(m *record.Message) []obj {
	out := []obj{}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case record.PartText, record.PartRefusal:
			out = append(out, obj{"text": p.Content})
		case record.PartReasoning:
			out = append(out, obj{"reasoningContent": obj{"reasoningText": obj{"text": p.Content}}})
		case record.PartToolCall:
			out = append(out, obj{"toolUse": obj{"toolUseId": p.ID, "name": p.Name, "input": convert.Arguments(p)}})
		case record.PartToolResult:
			r := obj{"toolUseId": p.ID, "content": []obj{{"text": p.Content}}}
			if p.IsError {
				r["status"] = "error"
			}
			out = append(out, obj{"toolResult": r})
		case record.PartMedia:
			kind, format, _ := strings.Cut(p.MIMEType, "/")
			switch kind {
			case "image", "document", "video", "audio":
			default:
				kind = "document"
			}
			src := obj{"bytes": convert.Elided(p.Size)}
			if p.URI != "" {
				src = obj{"s3Location": obj{"uri": p.URI}}
			}
			b := obj{"source": src}
			if format != "" {
				b["format"] = format
			}
			if p.Name != "" {
				b["name"] = p.Name
			}
			out = append(out, obj{kind: b})
		case record.PartOther:
			out = append(out, obj{p.Name: p.Data})
		}
	}
	return out
}

// RenderResponse writes a Converse response, or a ConverseStream's
// events in AWS's eventstream framing: messageStart, each block's start
// (a tool use's), delta and stop, messageStop with the stop reason, and
// metadata with the usage.
func (Provider) RenderResponse(method string, a providers.Answer, stream bool) (string, [][]byte, error) {
	if err := converseMethod(method); err != nil {
		return "", nil, err
	}
	content := renderBlocks(&a.Message)
	if !stream {
		body := obj{"output": obj{"message": obj{"role": "assistant", "content": content}},
			"stopReason": a.FinishReason, "usage": usage(a.Usage), "metrics": obj{"latencyMs": 0}}
		b, err := providers.MarshalJSON(body)
		return "application/json", [][]byte{b}, err
	}
	type event struct {
		name string
		data obj
	}
	events := []event{{"messageStart", obj{"role": "assistant"}}}
	for i := range a.Message.Parts {
		p := &a.Message.Parts[i]
		var delta obj
		switch p.Type {
		case record.PartText, record.PartRefusal:
			delta = obj{"text": p.Content}
		case record.PartReasoning:
			delta = obj{"reasoningContent": obj{"text": p.Content}}
		case record.PartToolCall:
			events = append(events, event{"contentBlockStart", obj{"contentBlockIndex": i,
				"start": obj{"toolUse": obj{"toolUseId": p.ID, "name": p.Name}}}})
			delta = obj{"toolUse": obj{"input": string(convert.Arguments(p))}}
		default:
			return "", nil, fmt.Errorf("%w: a %s part in a ConverseStream answer", providers.ErrNotRenderable, p.Type)
		}
		events = append(events,
			event{"contentBlockDelta", obj{"contentBlockIndex": i, "delta": delta}},
			event{"contentBlockStop", obj{"contentBlockIndex": i}})
	}
	events = append(events, event{"messageStop", obj{"stopReason": a.FinishReason}})
	if a.Usage != nil {
		events = append(events, event{"metadata", obj{"usage": usage(a.Usage), "metrics": obj{"latencyMs": 0}}})
	}
	var frames [][]byte
	for _, e := range events {
		b, err := providers.MarshalJSON(e.data)
		if err != nil {
			return "", nil, err
		}
		frames = append(frames, AppendFrame(nil, [][2]string{
			{":event-type", e.name}, {":content-type", "application/json"}, {":message-type", "event"}}, b))
	}
	return EventStreamType, frames, nil
}

func usage(u *record.Usage) obj {
	if u == nil {
		return obj{"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
	}
	// Bedrock's inputTokens leave out the cache's reads and writes.
	out := obj{"inputTokens": u.InputTokens - u.CachedTokens - u.CacheWriteTokens, "outputTokens": u.OutputTokens, "totalTokens": u.TotalTokens}
	if u.CachedTokens > 0 {
		out["cacheReadInputTokens"] = u.CachedTokens
	}
	if u.CacheWriteTokens > 0 {
		out["cacheWriteInputTokens"] = u.CacheWriteTokens
	}
	return out
}

// RenderError writes Bedrock's error body; the error's type goes in the
// X-Amzn-ErrorType header, which a caller sets ([ErrorType] names it).
func (Provider) RenderError(status int, message string) []byte {
	b, _ := json.Marshal(obj{"message": message})
	return b
}

// ErrorType is the X-Amzn-ErrorType of an error status, as Bedrock names
// it.
func ErrorType(status int) string {
	switch {
	case status == 429:
		return "ThrottlingException"
	case status == 404:
		return "ResourceNotFoundException"
	case status == 403:
		return "AccessDeniedException"
	case status == 503:
		return "ServiceUnavailableException"
	case status >= 500:
		return "InternalServerException"
	}
	return "ValidationException"
}

// AppendFrame appends one eventstream message (see eventstream.go's
// layout) with string headers, in order, and payload.
func AppendFrame(dst []byte, headers [][2]string, payload []byte) []byte {
	var h []byte
	for _, kv := range headers {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7) // a string
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	start := len(dst)
	total := preludeLen + len(h) + len(payload) + crcLen
	dst = binary.BigEndian.AppendUint32(dst, uint32(total))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(h)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:start+8]))
	dst = append(dst, h...)
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}
