// Package generic records calls to HTTP endpoints no other provider
// recognizes. It names a call after its method and path ("http.POST
// /v1/rerank"), takes the conversation (messages, contents or input) as
// args and the rest of a JSON body as kwargs, and reads the outcome from
// the status code, a JSON error body and the common usage shapes.
package generic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
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
	if len(body) == 0 || !gjson.ValidBytes(body) {
		return call, true
	}
	root := gjson.ParseBytes(body)
	switch {
	case root.IsArray():
		call.Args, call.Truncated = fitElems(root, call.Truncated)
	case root.IsObject():
		call.Model = root.Get("model").String()
		call.Stream = root.Get("stream").Bool()
		var kw [][]byte
		root.ForEach(func(k, v gjson.Result) bool {
			if isConversation(k.String()) && v.IsArray() {
				call.Args, call.Truncated = fitElems(v, call.Truncated)
				call.Speaker = lastRole(v)
				return true
			}
			kv := append(append([]byte(k.Raw), ':'), v.Raw...)
			kw = append(kw, kv)
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

func fitElems(arr gjson.Result, truncated []string) (json.RawMessage, []string) {
	var elems [][]byte
	arr.ForEach(func(_, v gjson.Result) bool {
		elems = append(elems, []byte(v.Raw))
		return true
	})
	out, cut := providers.FitArray(elems, providers.MaxArgsBytes)
	if cut {
		truncated = append(truncated, "args")
	}
	return out, truncated
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

// lastRole returns the speaker implied by the last turn's role.
func lastRole(arr gjson.Result) string {
	var last gjson.Result
	arr.ForEach(func(_, v gjson.Result) bool { last = v; return true })
	role := last.Get("role").String()
	if role == "" && last.Get("type").String() == "function_call_output" {
		role = "tool"
	}
	return providers.SpeakerForRole(role)
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
	if len(body) > 0 && !resp.Truncated && gjson.ValidBytes(body) {
		root := gjson.ParseBytes(body)
		res.Outcome = record.Success(firstString(root, "object", "kind"))
		if res.Outcome.ValueClass == "" {
			res.Outcome.ValueClass = "json"
		}
		res.Model = firstString(root, "model", "modelVersion")
		res.Outcome.ResponseID = firstString(root, "id", "responseId")
		res.Usage = usage(root)
		res.Finished = true
		return res
	}
	res.Outcome = record.Success("http.response")
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/") {
		res.Outcome.ValueClass = "text"
	}
	return res
}

func parseStream(resp *providers.Response) providers.Result {
	res := providers.Result{Outcome: record.Success("stream")}
	scan := func(b []byte) {
		providers.ScanSSE(b, func(ev providers.Event) bool {
			data := bytes.TrimSpace(ev.Data)
			if string(data) == "[DONE]" {
				res.Finished = true
				return true
			}
			if len(data) == 0 || !gjson.ValidBytes(data) {
				return true
			}
			root := gjson.ParseBytes(data)
			if m := firstString(root, "model", "modelVersion"); m != "" {
				res.Model = m
			}
			if id := firstString(root, "id", "responseId"); id != "" {
				res.Outcome.ResponseID = id
			}
			if u := usage(root); u != nil {
				res.Usage = u // cumulative or final: the last one wins
			}
			return true
		})
	}
	scan(resp.Body)
	if resp.Truncated {
		if i := bytes.Index(resp.Tail, []byte("\n\n")); i >= 0 {
			scan(resp.Tail[i+2:]) // the tail starts mid-event
		}
	}
	return res
}

func firstString(root gjson.Result, paths ...string) string {
	for _, p := range paths {
		if v := root.Get(p); v.Type == gjson.String {
			return v.String()
		}
	}
	return ""
}

// usage reads the common shapes: OpenAI chat (prompt/completion), the
// Responses API (input/output) and Gemini (usageMetadata).
func usage(root gjson.Result) *record.Usage {
	if u := root.Get("usage"); u.IsObject() {
		in := u.Get("prompt_tokens")
		if !in.Exists() {
			in = u.Get("input_tokens")
		}
		out := u.Get("completion_tokens")
		if !out.Exists() {
			out = u.Get("output_tokens")
		}
		return &record.Usage{
			InputTokens:  int(in.Int()),
			OutputTokens: int(out.Int()),
			TotalTokens:  int(u.Get("total_tokens").Int()),
		}
	}
	if u := root.Get("usageMetadata"); u.IsObject() {
		return &record.Usage{
			InputTokens:     int(u.Get("promptTokenCount").Int()),
			OutputTokens:    int(u.Get("candidatesTokenCount").Int()),
			TotalTokens:     int(u.Get("totalTokenCount").Int()),
			CachedTokens:    int(u.Get("cachedContentTokenCount").Int()),
			ReasoningTokens: int(u.Get("thoughtsTokenCount").Int()),
		}
	}
	return nil
}
