// Package generic records calls to HTTP endpoints no other provider
// recognizes. It names a call after its method and path ("http.POST
// /v1/rerank"), takes the conversation (messages, contents or input) as
// args, each element read as a message in the shapes the common APIs
// share (OpenAI's chat messages and Responses items, Gemini's contents),
// and the rest of a JSON body as kwargs, and reads the outcome from the
// status code, a JSON error body and the common usage shapes.
package generic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// Provider recognizes every request; put it last.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name returns "http".
func (Provider) Name() string { return "http" }

// conversationKeys hold the turns of a conversation in the common APIs.
var conversationKeys = []string{"messages", "contents", "input"}

// ParseRequest always recognizes the request.
func (Provider) ParseRequest(req *providers.Request) (providers.Call, bool) {
	path := "/"
	if req.URL != nil && req.URL.Path != "" {
		path = req.URL.Path
	}
	call := providers.Call{
		Provider:   "http",
		MethodName: "http." + req.Method + " " + path,
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
	if len(body) == 0 || !record.ValidJSON(body) {
		return call, true
	}
	root := wire.Parse(body)
	switch {
	case root.IsArray():
		call.Args, _ = messages(req, root, &call.Truncated)
	case root.IsObject():
		// One pass over the top level: the model, the stream flag and the
		// conversation are read on the way, never looked up again.
		var kw [][]byte
		root.ForEach(func(k, v gjson.Result) bool {
			key := k.String()
			switch {
			case isConversation(key) && v.IsArray():
				call.Args, call.Speaker = messages(req, v, &call.Truncated)
				return true
			case key == "model" && v.Type == gjson.String:
				call.Model = wire.Str(v)
			case key == "stream":
				call.Stream = v.Bool()
			}
			kw = append(kw, append(append([]byte(k.Raw), ':'), v.Raw...))
			return true
		})
		call.Kwargs = object(kw)
		if len(call.Kwargs) > providers.MaxKwargsBytes {
			call.Kwargs = json.RawMessage(`{"…":"[kwargs cut]"}`)
			call.Truncated = append(call.Truncated, "kwargs")
		}
	}
	return call, true
}

func isConversation(key string) bool {
	for _, c := range conversationKeys {
		if key == c {
			return true
		}
	}
	return false
}

// messages reads the elements of arr as messages, in the shapes the
// common APIs share: a chat message ({"role", "content"}, OpenAI's and
// those that copy it), a content ({"role", "parts"}, Gemini's), an input
// item of OpenAI's Responses API, a string (a prompt). It returns them
// as args within the request's bound, and who spoke last.
func messages(req *providers.Request, arr gjson.Result, truncated *[]string) (json.RawMessage, string) {
	var args convert.Args
	args.Lend(req)
	arr.ForEach(func(_, v gjson.Result) bool {
		raw := wire.Elide(v.Raw)
		var m record.Message
		switch {
		case v.Get("parts").IsArray():
			m = gemini.Content(raw)
		case v.Get("role").Exists():
			m = openai.ChatMessage(raw)
		case v.Get("type").Exists():
			for _, one := range openai.ResponsesItems(raw) {
				args.Add(&one)
			}
			return true
		case v.Type == gjson.String:
			m = record.Message{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartText, Content: v.String()}}}
		default:
			m = record.Message{Role: record.RoleUser, Parts: []record.Part{convert.Other("element", v.Raw)}}
		}
		args.Add(&m)
		return true
	})
	out, cut := args.JSON(req)
	if cut {
		*truncated = append(*truncated, "args")
	}
	return out, args.Speaker()
}

func object(kvs [][]byte) json.RawMessage {
	out := []byte{'{'}
	for i, kv := range kvs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, kv...)
	}
	return append(out, '}')
}

// ParseResponse reads the status, a JSON error body, the model and the
// usage in the shapes OpenAI-compatible and Gemini-like APIs use.
func (Provider) ParseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	var res providers.Result
	if resp.StatusCode >= 400 {
		typ, msg := providers.ClassifyError(resp.StatusCode, resp.Body)
		res.Outcome = record.Failure(typ)
		res.ErrorMessage = msg
		res.Finished = true
		return res
	}
	if resp.Stream {
		return parseStream(resp)
	}
	body := bytes.TrimSpace(resp.Body)
	if len(body) > 0 && !resp.Truncated && record.ValidJSON(body) {
		f := topFields(wire.Parse(body))
		res.Outcome = record.Success(wire.Str(f.class))
		if res.Outcome.ValueClass == "" {
			res.Outcome.ValueClass = "json"
		}
		res.Model, res.Outcome.ResponseID = wire.Str(f.model), wire.Str(f.id)
		f.setUsage(&res)
		res.Finished = true
		// The answer, in the common shapes: an OpenAI-compatible choice's
		// message, a Gemini-like candidate's content.
		switch {
		case f.answer.Get("parts").IsArray():
			res.Output = gemini.Content([]byte(f.answer.Raw))
		case f.answer.IsObject():
			res.Output = openai.ChatMessage([]byte(f.answer.Raw))
		}
		return res
	}
	ct := resp.ContentType
	if len(body) > 0 && !resp.Truncated && resp.EOF && strings.Contains(strings.ToLower(ct), "json") {
		// It says it is JSON and is not: no client can decode it.
		return wire.Undecodable(body)
	}
	res.Outcome = record.Success("http.response")
	if strings.HasPrefix(ct, "text/") {
		res.Outcome.ValueClass = "text"
	}
	return res
}

// fields are what the generic provider reads of a response object, as
// views into the body: copy with wire.Str what is kept.
type fields struct {
	class, model, id gjson.Result
	answer           gjson.Result // the first choice's message, or the first candidate's content
	usage            *record.Usage
	usageCut         bool // a count was out of range: no usage, "usage" truncated
}

// setUsage puts f's usage into res: the last one read wins.
func (f *fields) setUsage(res *providers.Result) {
	res.Usage = f.usage
	if f.usageCut {
		res.Cut("usage")
	}
}

// topFields reads the fields in one pass over the top level, so a long
// body is walked once, not once per field.
func topFields(root gjson.Result) fields {
	var f fields
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "object", "kind":
			if !f.class.Exists() && v.Type == gjson.String {
				f.class = v
			}
		case "model", "modelVersion":
			if !f.model.Exists() && v.Type == gjson.String {
				f.model = v
			}
		case "id", "responseId":
			if !f.id.Exists() && v.Type == gjson.String {
				f.id = v
			}
		case "choices":
			f.answer = v.Get("0.message")
		case "candidates":
			f.answer = v.Get("0.content")
		case "usage", "usageMetadata":
			var u wire.UsageReader // every provider's shape, one meaning
			u.Read(v)
			f.usage, f.usageCut = u.Usage(), u.OutOfRange()
		}
		return true
	})
	return f
}

// usageMark is in the names of both usage fields, "usage" and
// "usageMetadata".
var usageMark = []byte(`sage`)

func parseStream(resp *providers.Response) providers.Result {
	res := providers.Result{Outcome: record.Success("stream")}
	scan := func(b []byte) {
		wire.ScanSSE(b, func(ev wire.Event) bool {
			data := bytes.TrimSpace(ev.Data)
			if string(data) == "[DONE]" {
				res.Finished = true
				return true
			}
			// Read: the first event, for the model and id, and the events
			// that carry usage (OpenAI's "usage", Gemini's "usageMetadata",
			// both hold the bytes "sage"). The others are deltas this
			// provider does not assemble, and are skipped unparsed.
			wanted := res.Model == "" || bytes.Contains(data, usageMark)
			if !wanted || len(data) == 0 || !record.ValidJSON(data) {
				return true
			}
			f := topFields(wire.Parse(data))
			if res.Model == "" && f.model.Exists() {
				res.Model = wire.Str(f.model)
			}
			if res.Outcome.ResponseID == "" && f.id.Exists() {
				res.Outcome.ResponseID = wire.Str(f.id)
			}
			if f.usage != nil || f.usageCut {
				f.setUsage(&res) // cumulative or final: the last one wins
			}
			return true
		})
	}
	scan(resp.Body)
	if resp.Truncated {
		if i := wire.FrameStart(resp.Tail); i >= 0 {
			scan(resp.Tail[i:]) // the tail starts mid-event
		}
	}
	return res
}
