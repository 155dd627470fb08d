package ollama

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
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
		args         [][]byte
		last         gjson.Result
		system       gjson.Result
		prompt       gjson.Result
		images       gjson.Result
		kw           kwargs
		conversation bool
	)
	wire.Parse(body).ForEach(func(k, v gjson.Result) bool {
		switch key := k.String(); {
		case key == "messages" && method == MethodChat:
			args, last = wire.ElidedElements(v)
			conversation = true
			return true
		case key == "input" && method == MethodEmbed:
			args, _ = wire.ElidedElements(v)
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
	if method == MethodGenerate {
		args = generateArgs(system, prompt, images)
	}
	var cut bool
	call.Args, cut = wire.FitArrayInto(req.Scratch, args, req.ArgsLimit())
	if cut {
		call.Truncated = append(call.Truncated, "args")
	}
	kw.Into(&call)
	call.Speaker = record.SpeakerUser
	if conversation && last.IsObject() {
		if s := wire.SpeakerForRole(last.Get("role").String()); s != "" {
			call.Speaker = s
		}
	}
	return call, true
}

// generateArgs makes a generate call's args a conversation, as the other
// providers' are: the system prompt first, marked as such (when it is not
// empty: Ollama's Go client always sends one), then the prompt as the
// user's turn, with its images elided.
func generateArgs(system, prompt, images gjson.Result) [][]byte {
	var args [][]byte
	if system.Type == gjson.String && system.Str != "" {
		turn := append([]byte(`{"system":true,"role":"system","content":`), system.Raw...)
		args = append(args, append(turn, '}'))
	}
	if prompt.Exists() || images.Exists() {
		turn := []byte(`{"role":"user","content":`)
		if prompt.Exists() {
			turn = append(turn, prompt.Raw...)
		} else {
			turn = append(turn, `""`...)
		}
		if images.Exists() {
			turn = append(turn, `,"images":`...)
			turn = append(turn, wire.Elide(images.Raw)...)
		}
		args = append(args, append(turn, '}'))
	}
	return args
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
