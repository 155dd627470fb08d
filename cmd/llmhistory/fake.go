package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// The embedded fake providers answer the way the real APIs do, byte shapes
// included (see the captures in testdata/providers), so the demo runs the
// real SDK clients and the real recorder with no network and no keys.

// fakeOpenAIKey and fakeGeminiKey are what the demo's clients send to the
// fake servers; the servers check them, as the real APIs would, and the
// demo checks they never reach the history file.
const (
	fakeOpenAIKey = "sk-demo-0123456789abcdefghijklmnopqrstuvwxyzABCD"
	fakeGeminiKey = "AIzaSyDemo-0123456789abcdefghijklmnopqrs"
)

// fakeOpenAI serves /v1/chat/completions. Its answer depends on the
// request: an unknown model gets a 404, the first question about the
// weather gets a 429 (so the recorder's retry has something to fold), a
// request offering tools gets a tool call whose code reads the history,
// and a tool result gets the final answer, streamed when asked.
func fakeOpenAI() http.Handler {
	var mu sync.Mutex
	throttled := false
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+fakeOpenAIKey {
			openAIError(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			openAIError(w, http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path, "invalid_request_error", "unknown_url")
			return
		}
		req := gjson.ParseBytes(body)
		model := req.Get("model").String()
		if model != "gpt-4o-mini" {
			openAIError(w, http.StatusNotFound, "The model `"+model+"` does not exist or you do not have access to it.", "invalid_request_error", "model_not_found")
			return
		}
		msgs := req.Get("messages").Array()
		var last gjson.Result
		if len(msgs) > 0 {
			last = msgs[len(msgs)-1]
		}
		content := last.Get("content").String()
		mu.Lock()
		throttle := !throttled && strings.Contains(content, "weather")
		throttled = throttled || throttle
		mu.Unlock()
		if throttle {
			w.Header().Set("retry-after-ms", "40")
			w.Header().Set("x-ratelimit-remaining-requests", "0")
			openAIError(w, http.StatusTooManyRequests, "Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3, Requested 1.", "requests", "rate_limit_exceeded")
			return
		}
		in := len(body) / 4
		switch {
		case last.Get("role").String() == "tool":
			answer := "You asked about packing for Lisbon and the weather in May; pack light layers, a rain jacket and comfortable shoes for the hills."
			if req.Get("stream").Bool() {
				streamOpenAI(w, answer, in)
				return
			}
			openAIAnswer(w, "chatcmpl-demo-final", answer, in)
		case req.Get("tools").IsArray() && last.Get("role").String() == "user":
			code := `asked = conversation_history
  .select { |r| r[:speaker] == "user" }
  .map { |r| r[:args].first }
  .last(3)
asked.count`
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-demo-tool","object":"chat.completion","created":1763800000,"model":"gpt-4o-mini-2024-07-18",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_demo_1","type":"function",`+
				`"function":{"name":"run_ruby","arguments":%q}}],"refusal":null},"finish_reason":"tool_calls"}],`+
				`"usage":{"prompt_tokens":%d,"completion_tokens":38,"total_tokens":%d}}`,
				`{"code":`+quoteJSON(code)+`}`, in, in+38)
		case strings.Contains(content, "weather"):
			openAIAnswer(w, "chatcmpl-demo-weather", "Lisbon in May is mild: 15 to 24 °C, mostly sunny, with the odd shower.", in)
		case strings.Contains(content, "refund take"):
			openAIAnswer(w, "chatcmpl-demo-refund-2", "Refunds reach your card within 3 to 5 working days of our confirmation email.", in)
		case strings.Contains(content, "refund"):
			openAIAnswer(w, "chatcmpl-demo-refund-1", "I'm sorry order 1042 arrived damaged. I've opened a refund; you'll get an email to confirm it today.", in)
		case strings.Contains(content, "sk-"):
			openAIAnswer(w, "chatcmpl-demo-key", "Please never paste API keys into a chat; revoke that one now.", in)
		default:
			openAIAnswer(w, "chatcmpl-demo-1", "For Lisbon in May: light layers, a light jacket for the evenings, and shoes that grip on cobbles.", in)
		}
	})
}

func openAIAnswer(w http.ResponseWriter, id, text string, in int) {
	out := len(text) / 4
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q,"object":"chat.completion","created":1763800000,"model":"gpt-4o-mini-2024-07-18",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, id, quoteJSON(text), in, out, in+out)
}

func streamOpenAI(w http.ResponseWriter, text string, in int) {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	for _, word := range strings.SplitAfter(text, " ") {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-demo-stream\",\"object\":\"chat.completion.chunk\",\"created\":1763800000,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}],\"usage\":null}\n\n", quoteJSON(word))
		if f != nil {
			f.Flush()
		}
	}
	out := len(text) / 4
	io.WriteString(w, "data: {\"id\":\"chatcmpl-demo-stream\",\"object\":\"chat.completion.chunk\",\"created\":1763800000,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n")
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-demo-stream\",\"object\":\"chat.completion.chunk\",\"created\":1763800000,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", in, out, in+out)
	io.WriteString(w, "data: [DONE]\n\n")
}

func openAIError(w http.ResponseWriter, status int, msg, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":%q,"param":null,"code":%q}}`, quoteJSON(msg), typ, code)
}

// fakeGemini serves generateContent and streamGenerateContent?alt=sse as
// the Gemini API does: a JSON response, or server-sent events with CRLF
// frames, a cumulative usageMetadata on every chunk and no [DONE].
func fakeGemini() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if r.Header.Get("x-goog-api-key") != fakeGeminiKey {
			geminiError(w, http.StatusBadRequest, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
			return
		}
		in := len(body) / 4
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":generateContent"):
			text := "Packing for Lisbon in May, and the weather then."
			if strings.Contains(gjson.GetBytes(body, "contents.0.parts.0.text").String(), "Translate") {
				text = "Onde fica a estação de comboios?"
			}
			out := len(text) / 4
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			fmt.Fprintf(w, `{"candidates":[{"content":{"parts":[{"text":%s}],"role":"model"},"finishReason":"STOP","index":0}],`+
				`"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"totalTokenCount":%d},`+
				`"modelVersion":"gemini-2.5-flash","responseId":"demo-gemini-1"}`, quoteJSON(text), in, out, in+out)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			w.Header().Set("Content-Type", "text/event-stream")
			f, _ := w.(http.Flusher)
			pieces := []string{"Leve camadas leves, ", "um casaco para a chuva ", "e sapatos confortáveis."}
			for i, text := range pieces {
				finish, usage := "", fmt.Sprintf(`"promptTokenCount":%d,"totalTokenCount":%d`, in, in)
				if i == len(pieces)-1 {
					finish, usage = `,"finishReason":"STOP"`, fmt.Sprintf(`"promptTokenCount":%d,"candidatesTokenCount":17,"totalTokenCount":%d`, in, in+17)
				}
				fmt.Fprintf(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":%s}],\"role\":\"model\"}%s,\"index\":0}],"+
					"\"usageMetadata\":{%s},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"demo-gemini-2\"}\r\n\r\n", quoteJSON(text), finish, usage)
				if f != nil {
					f.Flush()
				}
			}
		default:
			geminiError(w, http.StatusNotFound, "Not found: "+r.URL.Path, "NOT_FOUND")
		}
	})
}

func geminiError(w http.ResponseWriter, status int, msg, code string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%s,"status":%q}}`, status, quoteJSON(msg), code)
}

// quoteJSON quotes s as a JSON string.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// fakeAnthropicKey is what the demo's Claude client sends to the fake
// Anthropic server: the shape of a key, and no key.
const fakeAnthropicKey = "sk-ant-api03-DEMOxNotAKeyx0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL-DEMOAA"

// fakeAnthropic serves the Messages API (POST /v1/messages) as Anthropic
// does (see testdata/providers/anthropic): the key in x-api-key, an
// anthropic-version header, a message with text content blocks, stop_reason
// and usage with its cache fields, and errors as {"type":"error",...}.
func fakeAnthropic() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		w.Header().Set("request-id", "req_011CDemo0123456789abcdef")
		if r.Header.Get("x-api-key") != fakeAnthropicKey {
			anthropicError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
			return
		}
		if r.Header.Get("anthropic-version") == "" {
			anthropicError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			anthropicError(w, http.StatusNotFound, "not_found_error", "Not Found")
			return
		}
		req := gjson.ParseBytes(body)
		model := req.Get("model").String()
		if !strings.HasPrefix(model, "claude-") {
			anthropicError(w, http.StatusNotFound, "not_found_error", "model: "+model)
			return
		}
		text := "The list covers Lisbon in May; add sunscreen and a small umbrella, and it is complete."
		if strings.Contains(req.Get("messages.0.content.0.text").String(), "complaint") {
			text = "Order 1042 arrived damaged: refund opened, the customer wants to know when the money arrives."
		}
		in, out := len(body)/4, len(text)/4
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_01DemoQ8vZ2mXwY7kLp3RtN5","type":"message","role":"assistant","model":%s,`+
			`"content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,`+
			`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":%d,"service_tier":"standard"}}`,
			quoteJSON(model), quoteJSON(text), in, out)
	})
}

func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%s},"request_id":"req_011CDemo0123456789abcdef"}`, typ, quoteJSON(msg))
}
