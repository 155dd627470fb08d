package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/record"
)

var _ providers.Renderer = Provider{}

type obj = map[string]any

// topLevel are the kwargs that are members of the request itself; every
// other one is a member of its generationConfig (the reader flattens it
// into the kwargs).
var topLevel = map[string]bool{"safetySettings": true, "safety_settings": true, "cachedContent": true, "cached_content": true}

// RenderRequest writes a generateContent or streamGenerateContent request
// (Gemini API paths, v1beta; a stream with ?alt=sse, as the SDKs ask):
// the system messages as systemInstruction, the others as contents (a
// tool's results as the user's functionResponse parts), the kwargs as
// generationConfig, tools (a function the record names as a declaration
// of that name; a built-in tool as its key) and toolConfig.
func (Provider) RenderRequest(method string, msgs []record.Message, kwargs []byte) (string, []byte, error) {
	if method != MethodGenerateContent && method != MethodStreamGenerateContent {
		return "", nil, fmt.Errorf("%w: %s (gemini renders %s and %s)", providers.ErrNotRenderable, method, MethodGenerateContent, MethodStreamGenerateContent)
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
		return "", nil, fmt.Errorf("%w: no model in the kwargs (Gemini's is in the URL)", providers.ErrNotRenderable)
	}
	body, config := obj{}, obj{}
	for k, v := range kw {
		switch {
		case k == "model":
		case k == "tools":
			body[k] = tools(convert.ToolNames(v))
		case k == "toolConfig":
			var tc struct {
				Mode json.RawMessage `json:"mode"`
			}
			json.Unmarshal(v, &tc)
			body[k] = obj{"functionCallingConfig": obj{"mode": tc.Mode}}
		case topLevel[k]:
			body[k] = v
		default:
			config[k] = v
		}
	}
	body["generationConfig"] = config // genai sends one, empty or not
	var system []obj
	contents := []obj{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == record.RoleSystem {
			system = append(system, parts(m)...)
			continue
		}
		role := "user"
		if m.Role == record.RoleAssistant {
			role = "model"
		}
		contents = append(contents, obj{"role": role, "parts": parts(m)})
	}
	if system != nil {
		body["systemInstruction"] = obj{"role": "user", "parts": system} // the role genai gives it
	}
	body["contents"] = contents
	b, err := providers.MarshalJSON(body)
	path := "/v1beta/models/" + url.PathEscape(strings.TrimPrefix(model, "models/")) + ":generateContent"
	if method == MethodStreamGenerateContent {
		path = strings.TrimSuffix(path, ":generateContent") + ":streamGenerateContent?alt=sse"
	}
	return path, b, err
}

// tools writes the tools a record names: functions as one declaration
// list, built-in tools (googleSearch, codeExecution) by their key.
func tools(names []string) []obj {
	var out []obj
	var decls []obj
	for _, n := range names {
		switch n {
		case "googleSearch", "google_search", "googleSearchRetrieval", "codeExecution", "code_execution", "urlContext", "url_context", "retrieval", "googleMaps", "computerUse", "fileSearch":
			out = append(out, obj{n: obj{}})
		default:
			decls = append(decls, obj{"name": n})
		}
	}
	if decls != nil {
		out = append([]obj{{"functionDeclarations": decls}}, out...)
	}
	return out
}

// parts writes a message's parts as Gemini's.
func parts(m *record.Message) []obj {
	out := []obj{}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case record.PartText, record.PartRefusal:
			out = append(out, obj{"text": p.Content})
		case record.PartReasoning:
			out = append(out, obj{"text": p.Content, "thought": true})
		case record.PartToolCall:
			fc := obj{"name": p.Name, "args": convert.Arguments(p)}
			if p.ID != "" {
				fc["id"] = p.ID
			}
			out = append(out, obj{"functionCall": fc})
		case record.PartToolResult:
			fr := obj{"name": p.Name, "response": resultObject(p.Content)}
			if p.ID != "" {
				fr["id"] = p.ID
			}
			out = append(out, obj{"functionResponse": fr})
		case record.PartMedia:
			if p.URI != "" {
				out = append(out, obj{"fileData": obj{"mimeType": p.MIMEType, "fileUri": p.URI}})
			} else {
				out = append(out, obj{"inlineData": obj{"mimeType": p.MIMEType, "data": convert.Elided(p.Size)}})
			}
		case record.PartOther:
			out = append(out, obj{p.Name: p.Data})
		}
	}
	return out
}

// resultObject is a tool result's content as the object a
// functionResponse's response must be: the content itself when it is a
// JSON object (what a Gemini record holds), else {"output": content}.
func resultObject(content string) any {
	if s := strings.TrimSpace(content); strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return obj{"output": content}
}

// RenderResponse writes a GenerateContentResponse, or the chunks of its
// stream (one per part; the last carries the finish reason and usage).
func (Provider) RenderResponse(method string, a providers.Answer, stream bool) (string, [][]byte, error) {
	if method != MethodGenerateContent && method != MethodStreamGenerateContent {
		return "", nil, fmt.Errorf("%w: %s (gemini renders %s and %s)", providers.ErrNotRenderable, method, MethodGenerateContent, MethodStreamGenerateContent)
	}
	ps := parts(&a.Message)
	response := func(ps []obj, last bool) obj {
		cand := obj{"index": 0, "content": obj{"role": "model", "parts": ps}}
		r := obj{"candidates": []obj{cand}, "modelVersion": a.Model, "responseId": a.ID}
		if last {
			if a.FinishReason != "" {
				cand["finishReason"] = a.FinishReason
			}
			if a.Usage != nil {
				r["usageMetadata"] = usage(a.Usage)
			}
		}
		return r
	}
	if !stream {
		b, err := providers.MarshalJSON(response(ps, true))
		return "application/json", [][]byte{b}, err
	}
	var frames [][]byte
	for i := range max(len(ps), 1) {
		chunk := ps[min(i, len(ps)):min(i+1, len(ps))]
		b, err := providers.MarshalJSON(response(chunk, i >= len(ps)-1))
		if err != nil {
			return "", nil, err
		}
		frames = append(frames, providers.AppendSSE(nil, "", b))
	}
	return "text/event-stream", frames, nil
}

func usage(u *record.Usage) obj {
	out := obj{"promptTokenCount": u.InputTokens, "candidatesTokenCount": u.OutputTokens - u.ReasoningTokens, "totalTokenCount": u.TotalTokens}
	if u.ReasoningTokens > 0 {
		out["thoughtsTokenCount"] = u.ReasoningTokens
	}
	if u.CachedTokens > 0 {
		out["cachedContentTokenCount"] = u.CachedTokens
	}
	return out
}

// RenderError writes Google's error object.
func (Provider) RenderError(status int, message string) []byte {
	s := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}[status]
	if s == "" {
		s = strings.ToUpper(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	b, _ := json.Marshal(obj{"error": obj{"code": status, "message": message, "status": s}})
	return b
}
