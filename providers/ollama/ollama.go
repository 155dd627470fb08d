package ollama

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Method names of the endpoints this provider recognizes.
const (
	MethodChat     = "ollama.chat"
	MethodGenerate = "ollama.generate"
	MethodEmbed    = "ollama.embed"
)

// Provider reads Ollama's native API. It holds no state; the zero value
// is ready to use.
type Provider struct{}

var (
	_ providers.Provider       = Provider{}
	_ providers.GuidanceEditor = Provider{}
)

// Name returns "ollama".
func (Provider) Name() string { return "ollama" }

// endpoint names the call a path asks for: /api/chat, /api/generate and
// /api/embed, under any host and prefix. Open WebUI's OpenAI-compatible
// /api/chat/completions is the OpenAI provider's.
func endpoint(path string) string {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/api/chat"):
		return MethodChat
	case strings.HasSuffix(path, "/api/generate"):
		return MethodGenerate
	case strings.HasSuffix(path, "/api/embed"):
		return MethodEmbed
	}
	return ""
}

// ParseRequest recognizes POSTs to the three endpoints.
func (Provider) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if req == nil || req.Method != http.MethodPost || req.URL == nil {
		return providers.Call{}, false
	}
	method := endpoint(req.URL.Path)
	if method == "" {
		return providers.Call{}, false
	}
	call := providers.Call{
		Provider:   "ollama",
		MethodName: method,
		Args:       json.RawMessage("[]"),
		Kwargs:     json.RawMessage("{}"),
		// Chat and generate stream unless the body says "stream": false.
		Stream: method != MethodEmbed,
	}
	body := bytes.TrimSpace(req.Body)
	if req.BodyTruncated {
		if len(body) > 0 {
			call.Truncated = []string{"args", "kwargs"}
		}
		return call, true
	}
	if len(body) == 0 || body[0] != '{' || !record.ValidJSON(body) {
		return call, true
	}
	var (
		conversation gjson.Result
		system       gjson.Result
		prompt       gjson.Result
		images       gjson.Result
		kw           kwargs
	)
	wire.Parse(body).ForEach(func(k, v gjson.Result) bool {
		switch key := k.String(); {
		case key == "messages" && method == MethodChat, key == "input" && method == MethodEmbed:
			conversation = v
			return true
		case key == "prompt" && method == MethodGenerate:
			prompt = v
			return true
		case key == "system" && method == MethodGenerate && v.Type == gjson.String:
			system = v
			return true
		case key == "images" && method == MethodGenerate:
			images = v
			return true
		case key == "model" && v.Type == gjson.String:
			call.Model = wire.Str(v)
		case key == "stream":
			call.Stream = method != MethodEmbed && v.Type != gjson.False
		}
		kw.add(k, v)
		return true
	})
	var (
		args convert.Args
		b    convert.Builder
	)
	args.Lend(req)
	switch method {
	case MethodGenerate:
		generateArgs(&args, &b, system, prompt, images)
	case MethodChat:
		conversation.ForEach(func(_, v gjson.Result) bool {
			m := chatMessage(wire.Parse(wire.Elide(v.Raw)), &b)
			args.Add(&m)
			return true
		})
	default: // the inputs of an embedding, each a user's text
		each := func(v gjson.Result) {
			b.Reset()
			if v.Type == gjson.String {
				b.Text(v.String())
			} else {
				b.Add(convert.Other("input", v.Raw))
			}
			m := b.Message(nil)
			m.Role = record.RoleUser
			args.Add(&m)
		}
		if conversation.IsArray() {
			conversation.ForEach(func(_, v gjson.Result) bool {
				each(v)
				return true
			})
		} else if conversation.Exists() {
			each(conversation)
		}
	}
	var cut bool
	call.Args, cut = args.JSON(req)
	if cut {
		call.Truncated = append(call.Truncated, "args")
	}
	kw.Into(&call)
	call.Speaker = record.SpeakerUser
	if method == MethodChat && args.Len() > 0 {
		call.Speaker = args.Speaker()
	}
	return call, true
}

// generateArgs makes a generate call's args a conversation, as the other
// providers' are: the system prompt first (when it is not empty: Ollama's
// Go client always sends one), then the prompt as the user's turn, with
// its images.
func generateArgs(args *convert.Args, b *convert.Builder, system, prompt, images gjson.Result) {
	if system.Type == gjson.String && system.Str != "" {
		b.Reset()
		b.Text(system.String())
		m := b.Message(nil)
		m.Role = record.RoleSystem
		args.Add(&m)
	}
	if prompt.Exists() || images.Exists() {
		b.Reset()
		if prompt.Type == gjson.String && prompt.Str != "" {
			b.Text(prompt.String())
		}
		images.ForEach(func(_, img gjson.Result) bool {
			b.Add(convert.Inline("image", img.String()))
			return true
		})
		m := b.Message(nil)
		m.Role = record.RoleUser
		if m.Parts == nil {
			m.Parts = []record.Part{}
		}
		args.Add(&m)
	}
}

// kwargs gathers the parameters a request set, in the order it set them.
type kwargs struct{ wire.Params }

func (k *kwargs) add(key, v gjson.Result) {
	raw := v.Raw
	switch key.String() {
	case "tools":
		raw = toolNames(v)
	case "context":
		// generate's token ids of an earlier answer: numbers that mean
		// nothing read, as long as the conversation.
		if v.IsArray() {
			n := 0
			v.ForEach(func(_, _ gjson.Result) bool { n++; return true })
			raw = `"…[` + strconv.Itoa(n) + ` token ids]"`
		}
	default:
		raw = k.Bounded(v)
	}
	k.Append(key.Raw, raw)
}

// toolNames lists tools by their function's name: the declarations are
// long and say little about the call.
func toolNames(list gjson.Result) string {
	if !list.IsArray() {
		return `"…[not a list]"`
	}
	var b strings.Builder
	b.WriteByte('[')
	list.ForEach(func(_, t gjson.Result) bool {
		if n := t.Get("function.name"); n.Type == gjson.String {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(n.Raw)
		}
		return true
	})
	b.WriteByte(']')
	return b.String()
}
