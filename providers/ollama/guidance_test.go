package ollama_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/ollama"
)

func TestAddGuidance(t *testing.T) {
	for _, tc := range []struct{ path, body, want string }{
		{"/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"m","messages":[{"role":"system","content":"G"},{"role":"user","content":"hi"}]}`},
		{"/api/chat", `{"model":"m","messages":[ ]}`, `{"model":"m","messages":[{"role":"system","content":"G"} ]}`},
		{"/api/generate", `{"model":"m","prompt":"p","system":""}`, `{"model":"m","prompt":"p","system":"G"}`},
		{"/api/generate", `{"model":"m","prompt":"p","system":"Be brief."}`, `{"model":"m","prompt":"p","system":"Be brief.\n\nG"}`},
		{"/api/generate", `{"model":"m","prompt":"p"}`, `{"model":"m","prompt":"p","system":"G"}`},
	} {
		out, ok := ollama.Provider{}.AddGuidance(&providers.Request{Method: "POST", URL: &url.URL{Path: tc.path}, Body: []byte(tc.body)}, "G")
		assert.True(t, ok, tc.body)
		assert.Equal(t, tc.want, string(out))
	}
	for _, tc := range []struct{ path, body string }{
		{"/api/embed", `{"model":"m","input":"x"}`},
		{"/api/chat", `{"model":"m","messages":"x"}`},
		{"/api/generate", `{"system":1}`},
		{"/api/chat", `not json`},
	} {
		_, ok := ollama.Provider{}.AddGuidance(&providers.Request{Method: "POST", URL: &url.URL{Path: tc.path}, Body: []byte(tc.body)}, "G")
		assert.False(t, ok, tc.body)
	}
}
