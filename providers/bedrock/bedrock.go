package bedrock

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Method names of the operations this provider recognizes, as the AWS
// SDKs name them (Converse, ConverseStream, InvokeModel,
// InvokeModelWithResponseStream) in the snake case of the other method
// names.
const (
	MethodConverse          = "bedrock.converse"
	MethodConverseStream    = "bedrock.converse_stream"
	MethodInvokeModel       = "bedrock.invoke_model"
	MethodInvokeModelStream = "bedrock.invoke_model_with_response_stream"
)

// Provider reads the Amazon Bedrock Runtime API. It holds no state; the
// zero value is ready to use.
//
// It does not implement [providers.GuidanceEditor]: the AWS SDK signs
// each request over the SHA-256 of its body (SigV4) before the recorder
// sees it, so a body with guidance added would be refused as a signature
// mismatch.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name returns "bedrock".
func (Provider) Name() string { return "bedrock" }

// endpoint reads the operation and the model ID from a request's path,
// "/model/{modelId}/{operation}" under any host and prefix. The model ID
// is one path segment, URL-escaped: an ARN's ':' and '/' come as %3A and
// %2F, so the path is read escaped and the segment unescaped.
func endpoint(u *url.URL) (method, model string, stream bool) {
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	i := strings.LastIndex(path, "/model/")
	if i < 0 {
		return "", "", false
	}
	escaped, op, ok := strings.Cut(path[i+len("/model/"):], "/")
	if !ok || escaped == "" || strings.Contains(op, "/") {
		return "", "", false
	}
	switch op {
	case "converse":
		method = MethodConverse
	case "converse-stream":
		method, stream = MethodConverseStream, true
	case "invoke":
		method = MethodInvokeModel
	case "invoke-with-response-stream":
		method, stream = MethodInvokeModelStream, true
	default:
		return "", "", false
	}
	model, err := url.PathUnescape(escaped)
	if err != nil || !utf8.ValidString(model) {
		model = escaped
	}
	return method, model, stream
}

// ParseRequest recognizes POSTs to the four operations.
func (Provider) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if req == nil || req.Method != http.MethodPost || req.URL == nil {
		return providers.Call{}, false
	}
	method, model, stream := endpoint(req.URL)
	if method == "" {
		return providers.Call{}, false
	}
	call := providers.Call{Provider: "bedrock", MethodName: method, Model: model, Stream: stream}
	body := bytes.TrimSpace(req.Body)
	if (method == MethodInvokeModel || method == MethodInvokeModelStream) && !req.BodyTruncated && anthropicBody(body) {
		// Claude's Messages API: what the Anthropic provider knows, with
		// the model from the URL leading the kwargs.
		call = anthropic.ReadRequest(req, call)
		call.Provider = "bedrock"
		return call, true
	}
	call.Args, call.Kwargs = json.RawMessage("[]"), json.RawMessage(`{"model":`+quote(model)+`}`)
	if req.BodyTruncated {
		if len(body) > 0 {
			call.Truncated = []string{"args", "kwargs"}
		}
		return call, true
	}
	if len(body) == 0 || body[0] != '{' || !record.ValidJSON(body) {
		return call, true
	}
	if method == MethodConverse || method == MethodConverseStream {
		readConverse(req, &call, body)
	} else {
		readInvoke(req, &call, body)
	}
	return call, true
}

// anthropicBody reports whether an InvokeModel body is in Anthropic's
// Messages form: Bedrock asks Claude's for an anthropic_version
// ("bedrock-2023-05-31").
func anthropicBody(body []byte) bool {
	if len(body) == 0 || body[0] != '{' || !bytes.Contains(body, []byte(`"anthropic_version"`)) {
		return false
	}
	return wire.Parse(body).Get("anthropic_version").Exists() && record.ValidJSON(body)
}

// readConverse reads a Converse or ConverseStream body: the system prompt
// and the messages are the args; inferenceConfig, toolConfig (its tools by
// name), guardrailConfig and the rest are the kwargs, after the model.
func readConverse(req *providers.Request, call *providers.Call, body []byte) {
	var (
		conversation gjson.Result
		system       gjson.Result
		kw           kwargs
	)
	kw.Append(`"model"`, quote(call.Model))
	wire.Parse(body).ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "messages":
			conversation = v
		case "system":
			system = v
		case "requestMetadata":
			// The caller's own data (user and tenant ids), as Anthropic's
			// metadata is.
		case "toolConfig":
			kw.Append(k.Raw, toolConfig(v))
		default:
			kw.add(k, v)
		}
		return true
	})
	var (
		args convert.Args
		b    convert.Builder
	)
	args.Lend(req)
	addSystem(&args, system, &b)
	if conversation.IsArray() {
		conversation.ForEach(func(_, v gjson.Result) bool {
			m := converseMessage(wire.Parse(wire.Elide(v.Raw)), &b)
			args.Add(&m)
			return true
		})
	}
	finish(req, call, &args, &kw)
	if conversation.IsArray() && args.Len() > 0 {
		call.Speaker = args.Speaker()
	}
}

// addSystem adds the system prompt (a list of blocks, or a string), first,
// as a system message.
func addSystem(args *convert.Args, system gjson.Result, b *convert.Builder) {
	if !system.Exists() {
		return
	}
	b.Reset()
	blocks(wire.Parse(wire.Elide(system.Raw)), b)
	m := b.Message(nil)
	m.Role = record.RoleSystem
	if m.Parts == nil {
		m.Parts = []record.Part{}
	}
	args.Add(&m)
}

// readInvoke reads an InvokeModel body that is not Anthropic's: each
// model family has its own (Amazon Nova's and Titan's, Meta Llama's,
// Mistral's, Cohere's, OpenAI's gpt-oss). What holds the conversation or
// the prompt is the args: messages (after a system prompt, if any), or a
// prompt, inputText, message, texts or input, each a user's text; the
// rest is the kwargs, after the model from the URL.
func readInvoke(req *providers.Request, call *providers.Call, body []byte) {
	var (
		conversation, prompts gjson.Result
		system                gjson.Result
		kw                    kwargs
	)
	kw.Append(`"model"`, quote(call.Model))
	wire.Parse(body).ForEach(func(k, v gjson.Result) bool {
		switch key := k.String(); {
		case key == "messages" && v.IsArray():
			conversation = v
		case key == "system" && (v.IsArray() || v.Type == gjson.String):
			system = v
		case (key == "prompt" || key == "inputText" || key == "message") && v.Type == gjson.String,
			(key == "texts" || key == "input") && (v.IsArray() || v.Type == gjson.String):
			prompts = v
		default:
			kw.add(k, v)
		}
		return true
	})
	var (
		args convert.Args
		b    convert.Builder
	)
	args.Lend(req)
	addSystem(&args, system, &b)
	conversation.ForEach(func(_, v gjson.Result) bool {
		m := invokeMessage(wire.Parse(wire.Elide(v.Raw)), &b)
		args.Add(&m)
		return true
	})
	prompt := func(v gjson.Result) {
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
	if prompts.IsArray() {
		prompts.ForEach(func(_, v gjson.Result) bool {
			prompt(wire.Parse(wire.Elide(v.Raw)))
			return true
		})
	} else if prompts.Exists() {
		prompt(wire.Parse(wire.Elide(prompts.Raw)))
	}
	finish(req, call, &args, &kw)
	call.Speaker = record.SpeakerUser
	if conversation.Exists() && args.Len() > 0 {
		call.Speaker = args.Speaker()
	}
}

// finish fits the args and kwargs into their bounds.
func finish(req *providers.Request, call *providers.Call, args *convert.Args, kw *kwargs) {
	var cut bool
	call.Args, cut = args.JSON(req)
	if cut {
		call.Truncated = append(call.Truncated, "args")
	}
	kw.Into(call)
}

// toolConfig keeps the tools by name (a toolSpec's, or a system tool's)
// and the tool choice; the specs and their schemas are long and say little
// about the call.
func toolConfig(v gjson.Result) string {
	if !v.IsObject() {
		return `"…[not an object]"`
	}
	var k kwargs
	v.ForEach(func(key, val gjson.Result) bool {
		if key.String() != "tools" {
			k.add(key, val)
			return true
		}
		var b strings.Builder
		b.WriteByte('[')
		val.ForEach(func(_, t gjson.Result) bool {
			name := t.Get("toolSpec.name")
			if name.Type != gjson.String {
				name = t.Get("systemTool.name")
			}
			if name.Type == gjson.String {
				if b.Len() > 1 {
					b.WriteByte(',')
				}
				b.WriteString(name.Raw)
			}
			return true
		})
		b.WriteByte(']')
		k.Append(key.Raw, b.String())
		return true
	})
	return string(k.JSON())
}

// kwargs gathers the parameters a request set, in the order it set them.
type kwargs struct{ wire.Params }

// add appends a parameter, or a marker of its size when it is long.
func (k *kwargs) add(key, v gjson.Result) {
	k.Append(key.Raw, k.Bounded(v))
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
	return string(b)
}
