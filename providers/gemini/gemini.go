package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
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
	MethodGenerateContent       = "gemini.models.generateContent"
	MethodStreamGenerateContent = "gemini.models.streamGenerateContent"
	MethodCountTokens           = "gemini.models.countTokens"
	MethodEmbedContent          = "gemini.models.embedContent"
	MethodBatchEmbedContents    = "gemini.models.batchEmbedContents"
)

// Provider reads the Gemini API (generativelanguage.googleapis.com) and
// the Gemini models of Vertex AI. It holds no state; the zero value is
// ready to use.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name returns "gemini".
func (Provider) Name() string { return "gemini" }

// endpoint reads the method and the model from a path shaped like
//
//	.../{version}/models/{m}:{action}
//	.../{version}/tunedModels/{m}:{action}
//	.../{version}/publishers/google/models/{m}:{action}
//	.../{version}/projects/{p}/locations/{l}/publishers/google/models/{m}:{action}
//
// whatever the host and whatever comes before the version, so that proxies
// and test servers work. It returns "" for any other path.
func endpoint(path string) (method, model string) {
	rest, last := cutLast(path)
	colon := strings.LastIndexByte(last, ':')
	if colon <= 0 {
		return "", ""
	}
	model = last[:colon]
	switch last[colon+1:] {
	case "generateContent":
		method = MethodGenerateContent
	case "streamGenerateContent":
		method = MethodStreamGenerateContent
	case "countTokens":
		method = MethodCountTokens
	case "embedContent":
		method = MethodEmbedContent
	case "batchEmbedContents":
		method = MethodBatchEmbedContents
	default:
		return "", ""
	}
	rest, collection := cutLast(rest)
	rest, seg := cutLast(rest)
	switch {
	case collection == "tunedModels" && isVersion(seg):
	case collection != "models":
		return "", ""
	case isVersion(seg): // the Gemini API
	case seg != "google":
		return "", ""
	default: // Vertex AI: publishers/google/models
		rest, seg = cutLast(rest)
		if seg != "publishers" {
			return "", ""
		}
		rest, seg = cutLast(rest)
		if isVersion(seg) {
			break // express mode, with an API key and no project
		}
		loc := seg
		rest, seg = cutLast(rest)
		if loc == "" || seg != "locations" {
			return "", ""
		}
		rest, seg = cutLast(rest)
		if seg == "" {
			return "", ""
		}
		rest, seg = cutLast(rest)
		if seg != "projects" {
			return "", ""
		}
		if _, seg = cutLast(rest); !isVersion(seg) {
			return "", ""
		}
	}
	return method, model
}

// cutLast splits a path at its last slash.
func cutLast(path string) (rest, last string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// isVersion reports whether a path segment is an API version: v1, v1beta,
// v1alpha, v1beta1.
func isVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' || s[1] < '0' || s[1] > '9' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// ParseRequest recognizes POSTs to generateContent, streamGenerateContent,
// countTokens, embedContent and batchEmbedContents of the Gemini API and of
// Vertex AI.
func (Provider) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if req == nil || req.Method != http.MethodPost || req.URL == nil {
		return providers.Call{}, false
	}
	method, model := endpoint(req.URL.Path)
	if method == "" {
		return providers.Call{}, false
	}
	call := providers.Call{
		Provider:   "gemini",
		MethodName: method,
		Model:      model,
		Stream:     method == MethodStreamGenerateContent,
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
	p := parsed{kw: kwargs{buf: make([]byte, 0, 256)}}
	p.kw.model(model)
	if len(body) > 0 && body[0] == '{' && record.ValidJSON(body) {
		p.object(wire.Parse(body), true)
	}
	var (
		args convert.Args
		b    convert.Builder
	)
	args.Lend(req)
	if p.system.Exists() {
		// The system instruction goes first, a system message whatever
		// role the client gave it.
		m := content(wire.Parse(elide(p.system.Raw)), &b)
		m.Role = record.RoleSystem
		args.Add(&m)
	}
	// Consecutive contents of the model are one turn: genai's chat keeps
	// each chunk of a streamed answer as a content of its own.
	var turn record.Message
	pending := false
	for _, t := range p.turns {
		v := wire.Parse(elide(t.Raw))
		if pending && turn.Role == record.RoleAssistant && v.Get("role").String() == "model" {
			turn = more(v, &b)
			continue
		}
		if pending {
			args.Add(&turn)
		}
		turn, pending = content(v, &b), true
	}
	if pending {
		args.Add(&turn)
	}
	var cut bool
	call.Args, cut = args.JSON(req)
	if cut {
		call.Truncated = append(call.Truncated, "args")
	}
	call.Kwargs = p.kw.json()
	if len(call.Kwargs) > providers.MaxKwargsBytes {
		var kw kwargs
		kw.model(model)
		kw.add(`"…"`, `"[kwargs cut]"`)
		call.Kwargs, p.kw.cut = kw.json(), true
	}
	if p.kw.cut {
		call.Truncated = append(call.Truncated, "kwargs")
	}
	if len(p.turns) > 0 {
		call.Speaker = args.Speaker()
	}
	return call, true
}

// parsed gathers what a request body says, read in one pass over its top
// level. Its contents are views into the body.
type parsed struct {
	turns  []gjson.Result
	system gjson.Result
	kw     kwargs
}

// object reads a request object: the top level of a body or, for
// countTokens, the generateContentRequest it wraps.
func (p *parsed) object(obj gjson.Result, top bool) {
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "contents", "requests":
			if v.IsArray() {
				v.ForEach(func(_, t gjson.Result) bool {
					p.turn(t)
					return true
				})
			} else {
				p.turn(v)
			}
		case "content":
			p.turn(v)
		case "systemInstruction", "system_instruction":
			if v.Type != gjson.Null {
				p.system = v
			}
		case "generationConfig", "generation_config":
			if v.IsObject() {
				v.ForEach(func(k, v gjson.Result) bool {
					p.kw.param(k.Raw, v.Raw)
					return true
				})
			}
		case "tools":
			p.kw.key(`"tools"`)
			p.kw.buf = appendToolNames(p.kw.buf, v)
		case "toolConfig", "tool_config":
			if mode := toolMode(v); mode != "" {
				p.kw.add(`"toolConfig"`, `{"mode":`+mode+`}`)
			}
		case "safetySettings", "safety_settings", "cachedContent", "cached_content":
			p.kw.param(k.Raw, v.Raw)
		case "generateContentRequest", "generate_content_request":
			if top && v.IsObject() {
				p.object(v, false)
			}
		case "model", "labels":
			// The model is the URL's; labels are the caller's own data.
		default:
			switch {
			case v.Type == gjson.String && len(v.Raw) > 256:
				// prose, not a parameter
			case (v.IsObject() || v.IsArray()) && len(v.Raw) > 1024:
			default:
				p.kw.add(k.Raw, v.Raw) // taskType, outputDimensionality, ...
			}
		}
		return true
	})
}

// turn notes a content; an element of batchEmbedContents' requests is a
// request, whose content is the turn.
func (p *parsed) turn(t gjson.Result) {
	if c := t.Get("content"); c.Exists() && !t.Get("parts").Exists() {
		if len(p.turns) == 0 {
			// The first request's settings stand for the batch's in the
			// kwargs: what dimensions and task it asked for.
			t.ForEach(func(k, v gjson.Result) bool {
				switch k.String() {
				case "taskType", "task_type", "outputDimensionality", "output_dimensionality", "title":
					p.kw.add(k.Raw, v.Raw)
				}
				return true
			})
		}
		t = c
	}
	p.turns = append(p.turns, t)
}

// elide returns raw with base64 data (inlineData, thought signatures)
// replaced by a marker: raw itself, a view into the body, when there is
// none.
func elide(raw string) []byte {
	out, _ := wire.ElideBase64(wire.View(raw))
	return out
}

// appendToolNames appends the tools of a request as a JSON array: the
// functions by name, the built-in tools (googleSearch, codeExecution,
// urlContext...) by their key.
func appendToolNames(out []byte, tools gjson.Result) []byte {
	out = append(out, '[')
	if !tools.IsArray() {
		return append(out, ']')
	}
	start := len(out)
	add := func(raw string) {
		if len(out) > start {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	tools.ForEach(func(_, t gjson.Result) bool {
		if !t.IsObject() {
			return true
		}
		t.ForEach(func(k, v gjson.Result) bool {
			switch k.String() {
			case "functionDeclarations", "function_declarations":
				if !v.IsArray() {
					return true
				}
				v.ForEach(func(_, fn gjson.Result) bool {
					if name := fn.Get("name"); name.Type == gjson.String {
						add(name.Raw)
					}
					return true
				})
			default:
				add(k.Raw)
			}
			return true
		})
		return true
	})
	return append(out, ']')
}

// toolMode returns the function calling mode of a toolConfig, as JSON, or
// "".
func toolMode(v gjson.Result) string {
	fc := v.Get("functionCallingConfig")
	if !fc.Exists() {
		fc = v.Get("function_calling_config")
	}
	if mode := fc.Get("mode"); mode.Type == gjson.String {
		return mode.Raw
	}
	return ""
}

// maxParam bounds one parameter in kwargs: a long response schema is cut
// rather than crowd out the rest.
const maxParam = providers.MaxKwargsBytes / 4

// kwargs gathers the parameters a request set, in the order it set them.
type kwargs struct {
	buf []byte
	cut bool
}

// key appends a key, as quoted JSON, for a value to follow.
func (k *kwargs) key(quoted string) {
	if len(k.buf) == 0 {
		k.buf = append(k.buf, '{')
	} else {
		k.buf = append(k.buf, ',')
	}
	k.buf = append(k.buf, quoted...)
	k.buf = append(k.buf, ':')
}

// add appends a key (as quoted JSON) and a raw JSON value.
func (k *kwargs) add(quoted, raw string) {
	if raw == "" {
		return
	}
	k.key(quoted)
	k.buf = append(k.buf, raw...)
}

// model appends the model, a string from the URL.
func (k *kwargs) model(m string) {
	k.key(`"model"`)
	k.buf = appendQuoted(k.buf, m)
}

// param adds a parameter as sent, or a marker when it is too long.
func (k *kwargs) param(quoted, raw string) {
	if len(raw) > maxParam {
		k.add(quoted, `"…[`+strconv.Itoa(len(raw))+` bytes cut]"`)
		k.cut = true
		return
	}
	k.add(quoted, raw)
}

func (k *kwargs) json() json.RawMessage {
	if len(k.buf) == 0 {
		return json.RawMessage("{}")
	}
	return append(k.buf, '}')
}

// appendQuoted appends s as a JSON string.
func appendQuoted(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			b, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
