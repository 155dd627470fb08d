package anthropic

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Method names of the endpoints this provider recognizes. A streamed
// Messages call is MethodCreate too, with "stream": true in its kwargs, as
// the SDKs name it: messages.create(stream=True).
const (
	MethodCreate      = "anthropic.messages.create"
	MethodCountTokens = "anthropic.messages.count_tokens"
)

// Provider reads the Anthropic Messages API: at api.anthropic.com, on any
// server that speaks it under another base URL, and Claude on Vertex AI.
// It holds no state; the zero value is ready to use.
type Provider struct{}

var (
	_ providers.Provider       = Provider{}
	_ providers.GuidanceEditor = Provider{}
)

// Name returns "anthropic".
func (Provider) Name() string { return "anthropic" }

// endpoint names the call a path asks for. The Messages API is recognized
// by its last segments under any base URL ("https://api.anthropic.com/v1",
// "http://localhost:4000/anthropic/v1", a gateway's "/messages"); Claude
// on Vertex AI by its rawPredict and streamRawPredict actions on a model of
// the anthropic publisher, whose {m} segment is the model. An OpenAI
// Assistants thread's messages (/threads/{t}/messages) are not ours.
func endpoint(path string) (method, model string, stream bool) {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		return MethodCountTokens, "", false
	case strings.HasSuffix(path, "/messages"):
		if strings.Contains(path, "/threads/") {
			return "", "", false
		}
		return MethodCreate, "", false
	}
	// Vertex AI: .../publishers/anthropic/models/{m}:rawPredict
	const publisher = "/publishers/anthropic/models/"
	i := strings.LastIndex(path, publisher)
	if i < 0 {
		return "", "", false
	}
	m, action, ok := strings.Cut(path[i+len(publisher):], ":")
	if !ok || m == "" || strings.Contains(m, "/") {
		return "", "", false
	}
	switch action {
	case "rawPredict":
		if m == "count-tokens" {
			return MethodCountTokens, "", false // the model is in the body
		}
		return MethodCreate, m, false
	case "streamRawPredict":
		return MethodCreate, m, true
	}
	return "", "", false
}

// ParseRequest recognizes POSTs to the Messages API and its token counter.
func (Provider) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if req == nil || req.Method != http.MethodPost || req.URL == nil {
		return providers.Call{}, false
	}
	method, urlModel, stream := endpoint(req.URL.Path)
	if method == "" {
		return providers.Call{}, false
	}
	return ReadRequest(req, providers.Call{
		Provider:   "anthropic",
		MethodName: method,
		Model:      urlModel,
		Stream:     stream,
	}), true
}

// ReadRequest reads the body of a Messages request into call, whose
// Provider, MethodName and Stream the caller has set. When call.Model is
// set, the URL named the model (Claude on Vertex AI and on Amazon Bedrock,
// whose bodies have none): it leads the kwargs, as it would in the body,
// unless the body names one too. It is the reading ParseRequest does, for
// a provider that carries Messages bodies under URLs of its own
// (providers/bedrock's InvokeModel).
func ReadRequest(req *providers.Request, call providers.Call) providers.Call {
	urlModel := call.Model
	call.Args, call.Kwargs = json.RawMessage("[]"), json.RawMessage("{}")
	body := bytes.TrimSpace(req.Body)
	if req.BodyTruncated {
		if len(body) > 0 {
			call.Truncated = []string{"args", "kwargs"}
		}
		return call
	}
	if len(body) == 0 || body[0] != '{' || !record.ValidJSON(body) {
		if urlModel != "" {
			call.Kwargs = json.RawMessage(`{"model":` + quote(urlModel) + `}`)
		}
		return call
	}
	var (
		conversation gjson.Result
		system       gjson.Result
		bodyModel    bool
		kw           kwargs
	)
	wire.Parse(body).ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "messages":
			conversation = v
			return true
		case "system":
			system = v
			return true
		case "model":
			if v.Type == gjson.String {
				call.Model, bodyModel = wire.Str(v), true
			}
		case "stream":
			call.Stream = call.Stream || v.Type == gjson.True
		}
		kw.add(k, v)
		return true
	})
	var (
		args convert.Args
		m    record.Message
	)
	args.Lend(req)
	if system.Exists() {
		// The system prompt: first, a system message.
		systemMessage(wire.Parse(wire.Elide(system.Raw)), &m)
		args.Add(&m)
	}
	elems, _ := wire.ElidedElements(conversation)
	if !conversation.Exists() {
		elems = nil
	}
	for _, e := range elems {
		message1(wire.Parse(e), &m)
		args.Add(&m)
	}
	var cut bool
	call.Args, cut = args.JSON(req)
	if cut {
		call.Truncated = append(call.Truncated, "args")
	}
	if urlModel != "" && !bodyModel {
		// Vertex AI takes the model from the URL; it leads the kwargs, as
		// it would in the body.
		kw.Prepend(`"model"`, quote(urlModel))
	}
	kw.Into(&call)
	if len(elems) > 0 {
		call.Speaker = args.Speaker()
	}
	return call
}

// kwargs gathers the parameters a request set, in the order it set them.
type kwargs struct{ wire.Params }

func (k *kwargs) add(key, v gjson.Result) {
	var raw string
	switch name := key.String(); name {
	case "metadata":
		return // the caller's own data: user ids
	case "tools":
		raw = names(v, "name", "type")
	case "mcp_servers":
		// Each server's declaration may hold its authorization_token.
		raw = names(v, "name", "url")
	case "output_config":
		raw = outputConfig(v)
	default:
		raw = k.Bounded(v)
	}
	k.Append(key.Raw, raw) // the key as written, escapes and all
}

// names lists the elements of an array by the first of the given fields
// that is a string: tools by name (custom and server tools all have one;
// an MCP toolset only its type), MCP servers by name. The declarations
// themselves are long and say little about the call.
func names(list gjson.Result, fields ...string) string {
	if !list.IsArray() {
		return `"…[not a list]"`
	}
	var b strings.Builder
	b.WriteByte('[')
	list.ForEach(func(_, e gjson.Result) bool {
		for _, f := range fields {
			if n := e.Get(f); n.Type == gjson.String {
				if b.Len() > 1 {
					b.WriteByte(',')
				}
				b.WriteString(n.Raw)
				break
			}
		}
		return true
	})
	b.WriteByte(']')
	return b.String()
}

// outputConfig keeps output_config's settings (effort) and its format's
// type, not the JSON schema it may carry.
func outputConfig(v gjson.Result) string {
	if !v.IsObject() {
		return v.Raw
	}
	var k kwargs
	v.ForEach(func(key, val gjson.Result) bool {
		if key.String() == "format" && val.IsObject() {
			k.Append(key.Raw, val.Get("type").Raw)
		} else if len(val.Raw) <= wire.MaxParamString {
			k.Append(key.Raw, val.Raw)
		}
		return true
	})
	return string(k.JSON())
}

// quote returns s as a JSON string.
func quote(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			b, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
			return string(b)
		}
	}
	return `"` + s + `"`
}
