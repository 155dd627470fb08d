package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Method names of the endpoints this provider recognizes.
const (
	MethodChat        = "openai.chat.completions.create"
	MethodResponses   = "openai.responses.create"
	MethodCompletions = "openai.completions.create"
	MethodEmbeddings  = "openai.embeddings.create"
)

// Provider reads the OpenAI API and the servers that speak it: Azure
// OpenAI, and OpenAI-compatible servers under any base URL. It holds no
// state; the zero value is ready to use.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name returns "openai".
func (Provider) Name() string { return "openai" }

// endpoint names the call a path asks for, by its last segments, so that
// any base URL works ("https://api.openai.com/v1", an Azure deployment,
// "http://localhost:8000/v1"). It also returns the Azure deployment, which
// stands for the model when the body names none.
func endpoint(path string) (method, deployment string) {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		method = MethodChat
	case strings.HasSuffix(path, "/responses"):
		method = MethodResponses
	case strings.HasSuffix(path, "/completions"):
		method = MethodCompletions
	case strings.HasSuffix(path, "/embeddings"):
		method = MethodEmbeddings
	default:
		return "", ""
	}
	if _, rest, ok := strings.Cut(path, "/openai/deployments/"); ok {
		deployment, _, _ = strings.Cut(rest, "/")
	}
	return method, deployment
}

// ParseRequest recognizes POSTs to chat completions, the Responses API,
// legacy completions and embeddings.
func (Provider) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if req.Method != "POST" || req.URL == nil {
		return providers.Call{}, false
	}
	method, deployment := endpoint(req.URL.Path)
	if method == "" {
		return providers.Call{}, false
	}
	call := providers.Call{
		Provider:   "openai",
		MethodName: method,
		Model:      deployment,
		Args:       json.RawMessage("[]"),
		Kwargs:     json.RawMessage("{}"),
	}
	body := bytes.TrimSpace(req.Body)
	if req.BodyTruncated {
		if len(body) > 0 {
			call.Truncated = []string{"args", "kwargs"}
		}
		return call, true
	}
	if len(body) == 0 || body[0] != '{' {
		return call, true
	}
	var (
		conversation []byte // messages, input or prompt: a view into the body
		instructions []byte
		kw           kwargs
		// The kwargs are built on the stack, and copied out once whole.
		kwArr [256]byte
		kwBuf = kwArr[:0]
	)
	// One pass validates the body and reads its members; a body that is not
	// valid JSON keeps no args and no kwargs.
	ok := wire.Members(body, func(k, v []byte) bool {
		switch string(k) {
		case "messages":
			if method == MethodChat {
				conversation = v
				return true
			}
		case "input":
			if method == MethodResponses || method == MethodEmbeddings {
				conversation = v
				return true
			}
		case "prompt":
			if method == MethodCompletions {
				conversation = v
				return true
			}
		case "instructions":
			if method == MethodResponses && v[0] == '"' {
				instructions = v
				return true
			}
		case "model":
			if v[0] == '"' {
				// Read from the kwargs below: no copy of its own.
				kw.model, kw.modelRaw, kw.takeModel = true, v, true
				kw.modelAt, kw.modelEnd = 0, 0
			}
		case "stream":
			call.Stream = string(v) == "true"
		}
		kwBuf = kw.add(kwBuf, k, v)
		return true
	})
	if !ok {
		call.Model, call.Stream = deployment, false
		return call, true
	}
	var args convert.Args
	args.Lend(req)
	if instructions != nil {
		// The Responses API's system prompt: first, a system message.
		args.Add(&record.Message{Role: record.RoleSystem, Parts: []record.Part{{Type: record.PartText, Content: wire.Parse(instructions).String()}}})
	}
	if conversation != nil {
		messages(method, conversation, &args)
	}
	var cut bool
	call.Args, cut = args.JSON(req)
	if cut {
		call.Truncated = append(call.Truncated, "args")
	}
	call.Kwargs = kw.json(kwBuf)
	if kw.model {
		call.Model = kw.modelName()
	}
	if len(call.Kwargs) > providers.MaxKwargsBytes {
		call.Model = strings.Clone(call.Model) // not a view into what is dropped
		call.Kwargs = json.RawMessage(`{"…":"[kwargs cut]"}`)
		call.Truncated = append(call.Truncated, "kwargs")
	}
	call.Speaker = args.Speaker()
	return call, true
}

// messages reads the conversation of a request (its messages, input or
// prompt, raw) into args: each chat message, the Responses API's items,
// or each prompt or input, a string being one. Inline data (base64) is
// elided before it is read.
func messages(method string, conversation []byte, args *convert.Args) {
	var m record.Message
	each := func(fn func(v gjson.Result)) {
		if conversation[0] != '[' {
			fn(wire.Parse(elide(conversation)))
			return
		}
		record.EachValidElement(conversation, func(e []byte) bool {
			fn(wire.Parse(elide(e)))
			return true
		})
	}
	switch method {
	case MethodChat:
		each(func(v gjson.Result) {
			chatMessage(v, &m)
			args.Add(&m)
		})
	case MethodResponses:
		responsesItems(wire.Parse(elide(conversation)), args.Add)
	default: // prompts, embedding inputs
		each(func(v gjson.Result) {
			m.Role, m.Parts = record.RoleUser, value(m.Parts[:0], v)
			args.Add(&m)
		})
	}
}

// elide returns raw with base64 data replaced by a marker: raw itself, a
// view into the body, when there is none.
func elide(raw []byte) []byte {
	out, _ := wire.ElideBase64(raw)
	return out
}

// kwargs gathers the parameters a request set, in the order it set them.
type kwargs struct {
	buf []byte // the object, once json made it
	// model is set when the request named a model (a JSON string);
	// modelAt and modelEnd bound its raw value in buf, which the call's
	// Model is read from.
	model             bool
	modelAt, modelEnd int
	modelRaw          []byte // the raw value, a view into the body
	takeModel         bool   // the next add is of the model's value
}

// modelName returns the model the request named: a view into the kwargs
// JSON when its raw value has no escape (the kwargs are never written
// again, and the call keeps both), else a decoded copy.
func (k *kwargs) modelName() string {
	if k.modelEnd > k.modelAt {
		raw := k.buf[k.modelAt:k.modelEnd]
		if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			return ownString(raw[1 : len(raw)-1])
		}
		s, _ := record.String(raw)
		return s
	}
	s, _ := record.String(k.modelRaw)
	return s
}

// skipParams are never kept. Every other parameter is (OpenAI-compatible
// servers add their own, such as top_k), except long prose and large
// structures, which are content rather than settings.
var skipParams = map[string]bool{
	"metadata":   true, // the caller's own data
	"logit_bias": true,
	"prediction": true, // a whole predicted output
}

// add appends a parameter to the object in buf (its members so far,
// opened, not closed) and returns it.
func (k *kwargs) add(buf, key, rawValue []byte) []byte {
	takeModel := k.takeModel
	k.takeModel = false
	if skipParams[string(key)] {
		return buf
	}
	name := string(key) // no allocation: the switch below compares it
	quoted := ""        // the key as written, or a name of ours
	v := wire.Parse(rawValue)
	var raw string
	switch name {
	case "tools", "functions":
		raw, quoted = toolNames(v), `"tools"`
	case "response_format":
		raw = v.Get("type").Raw
	case "text":
		raw, quoted = v.Get("format.type").Raw, `"text_format"`
	case "tool_choice", "stream_options", "reasoning", "stop", "include", "modalities", "function_call":
		raw = v.Raw
	default:
		switch {
		case v.Type == gjson.String && len(v.Raw) > 256:
			return buf // prose, not a parameter
		case v.IsObject() || v.IsArray():
			if len(v.Raw) > 1024 {
				return buf
			}
		}
		raw = v.Raw
	}
	if raw == "" {
		return buf
	}
	if len(buf) == 0 {
		buf = append(buf, '{')
	} else {
		buf = append(buf, ',')
	}
	if quoted != "" {
		buf = append(buf, quoted...)
	} else {
		buf = appendKey(buf, key)
	}
	buf = append(buf, ':')
	at := len(buf)
	buf = append(buf, raw...)
	if takeModel {
		k.modelAt, k.modelEnd = at, len(buf)
	}
	return buf
}

// appendKey appends key as a JSON string: quoted as is when it needs no
// escape, the common case.
func appendKey(dst, key []byte) []byte {
	for _, c := range key {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return append(dst, wire.JSONText("", string(key), "")...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"')
}

// json returns the kwargs object built in buf in a slice of its own,
// exactly as long as it is: a record keeps it, in the history for a
// thousand calls, while buf (on the stack) had room for any request's.
// The model name is read from it afterwards.
func (k *kwargs) json(buf []byte) json.RawMessage {
	if len(buf) == 0 {
		return json.RawMessage("{}")
	}
	out := make([]byte, len(buf)+1)
	copy(out, buf)
	out[len(buf)] = '}'
	k.buf = out[:len(buf)]
	return out
}

// toolNames lists tools by name (functions) or type (built-in tools), as
// a JSON array: the declarations themselves are long and say little about
// the call.
func toolNames(tools gjson.Result) string {
	var names []string
	tools.ForEach(func(_, t gjson.Result) bool {
		for _, path := range []string{"function.name", "name", "type"} {
			if n := t.Get(path); n.Type == gjson.String {
				names = append(names, n.Raw)
				return true
			}
		}
		return true
	})
	return "[" + strings.Join(names, ",") + "]"
}
