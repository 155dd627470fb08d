package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/internal/edittest"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
)

// inserted returns the bytes out has beyond orig when out is orig with one
// contiguous insertion, and whether it is.
func inserted(orig, out []byte) (string, bool) {
	ins, ok := edittest.Insertion(orig, out)
	return string(ins), ok
}

func TestAddGuidance(t *testing.T) {
	const guide = "History is in \"conversation_history\".\nUse it."
	tests := []struct {
		name   string
		url    string
		body   string
		insert string // the one insertion expected
		system string // the system prompt afterwards, as JSON
	}{
		{"no system: a string is added",
			api, `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Hi"}]}`,
			`,"system":"History is in \"conversation_history\".\nUse it."`,
			`"History is in \"conversation_history\".\nUse it."`},
		{"a string: appended inside it, the caller's escapes kept",
			api, "{\n  \"system\": \"Be \\\"brief\\\". \\u00e9\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]\n}\n",
			`\n\nHistory is in \"conversation_history\".\nUse it.`,
			`"Be \"brief\". é\n\nHistory is in \"conversation_history\".\nUse it."`},
		{"an empty string just takes the guidance",
			api, `{"system":"","messages":[]}`,
			`History is in \"conversation_history\".\nUse it.`,
			`"History is in \"conversation_history\".\nUse it."`},
		{"blocks: a text block after the caller's cache breakpoint",
			api, `{"model":"m","system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Hi"}],"max_tokens":5}`,
			`,{"type":"text","text":"History is in \"conversation_history\".\nUse it."}`,
			`[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"History is in \"conversation_history\".\nUse it."}]`},
		{"vertex streamRawPredict",
			vertex + "claude-sonnet-4-5@20250929:streamRawPredict", `{"anthropic_version":"vertex-2023-10-16","messages":[],"stream":true}`,
			`,"system":"History is in \"conversation_history\".\nUse it."`,
			`"History is in \"conversation_history\".\nUse it."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request("POST", tt.url, tt.body)
			out, ok := anthropic.Provider{}.AddGuidance(req, guide)
			require.True(t, ok)
			assert.Equal(t, tt.body, string(req.Body), "the request's body is not modified")
			ins, one := inserted([]byte(tt.body), out)
			require.True(t, one, "one insertion, every other byte kept:\n%s\n%s", tt.body, out)
			assert.Equal(t, tt.insert, ins)
			assert.True(t, json.Valid(out), "%s", out)
			assert.JSONEq(t, tt.system, gjson.GetBytes(out, "system").Raw)
		})
	}
}

func TestAddGuidanceEmptyBlocks(t *testing.T) {
	body := `{"system":[],"messages":[]}`
	out, ok := anthropic.Provider{}.AddGuidance(request("POST", api, body), "G")
	require.True(t, ok)
	ins, one := inserted([]byte(body), out)
	require.True(t, one)
	assert.Equal(t, `{"type":"text","text":"G"}`, ins)
}

func TestAddGuidanceDeclines(t *testing.T) {
	for name, req := range map[string]*providers.Request{
		"count_tokens":        request("POST", "https://api.anthropic.com/v1/messages/count_tokens", `{"model":"m","messages":[]}`),
		"vertex count-tokens": request("POST", vertex+"count-tokens:rawPredict", `{"model":"m","messages":[]}`),
		"not ours":            request("POST", "https://api.openai.com/v1/chat/completions", `{"model":"m","messages":[]}`),
		"GET":                 request("GET", api, `{"messages":[]}`),
		"system null":         request("POST", api, `{"system":null,"messages":[]}`),
		"system an object":    request("POST", api, `{"system":{"text":"x"},"messages":[]}`),
		"system a number":     request("POST", api, `{"system":1,"messages":[]}`),
		"no messages":         request("POST", api, `{"model":"m"}`),
		"an array":            request("POST", api, `[{"messages":[]}]`),
		"invalid JSON":        request("POST", api, `{"messages":[],"system":"x"`),
		"empty":               request("POST", api, ``),
		"cut by the capture":  {Method: "POST", URL: request("POST", api, "").URL, Body: []byte(`{"messages":[]}`), BodyTruncated: true},
		"nil":                 nil,
	} {
		out, ok := anthropic.Provider{}.AddGuidance(req, "G")
		assert.False(t, ok, name)
		assert.Nil(t, out, name)
	}
}

// Whitespace around the object is kept too: sjson would drop it.
func TestAddGuidanceKeepsSurroundingBytes(t *testing.T) {
	body := "\n\t {\"messages\":[]} \r\n"
	out, ok := anthropic.Provider{}.AddGuidance(request("POST", api, body), "G")
	require.True(t, ok)
	ins, one := inserted([]byte(body), out)
	require.True(t, one, "%q", out)
	assert.Equal(t, `,"system":"G"`, ins)
}
