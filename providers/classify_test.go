package providers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// payload returns a captured payload of the repository's shared corpus,
// named under testdata/providers: "openai/openai_error_429.json".
func payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "providers", filepath.FromSlash(name)))
	require.NoError(t, err)
	return b
}

func TestClassifyError(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     []byte
		wantType string
		wantMsg  string
	}{
		{"openai 429, real", 429, payload(t, "openai/openai_error_429.json"), record.ErrorRateLimit, "Rate limit reached"},
		{"openrouter 429 with integer code, real", 429, payload(t, "openai/openrouter_error_429.json"), record.ErrorRateLimit, "Rate limit exceeded: limit_rpm"},
		{"gemini RESOURCE_EXHAUSTED, real", 429, payload(t, "gemini/gemini_error.json"), record.ErrorRateLimit, ""},
		{"gemini API_KEY_INVALID, real", 400, payload(t, "gemini/gemini_error_400_api_key.json"), record.ErrorAuth, "API key not valid"},
		{"quota", 429, []byte(`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`), record.ErrorQuota, "You exceeded your current quota"},
		{"context length", 400, []byte(`{"error":{"message":"This model's maximum context length is 128000 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`), record.ErrorContextLength, "This model's maximum"},
		{"content filter", 400, []byte(`{"error":{"message":"filtered","code":"content_filter"}}`), record.ErrorContentFilter, "filtered"},
		{"invalid key", 401, []byte(`{"error":{"message":"Incorrect API key","code":"invalid_api_key"}}`), record.ErrorAuth, "Incorrect API key"},
		{"unavailable", 503, []byte(`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`), record.ErrorOverloaded, "overloaded"},
		{"openai overload: a 503 says more than server_error", 503, []byte(`{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`), record.ErrorOverloaded, "The engine is currently overloaded"},
		{"openai 504 with server_error", 504, []byte(`{"error":{"message":"Gateway timeout.","type":"server_error"}}`), record.ErrorTimeout, "Gateway timeout."},
		{"openai 500 with server_error", 500, []byte(`{"error":{"message":"The server had an error","type":"server_error"}}`), record.ErrorServer, "The server had an error"},
		{"deadline", 504, []byte(`{"error":{"code":504,"status":"DEADLINE_EXCEEDED","message":"late"}}`), record.ErrorTimeout, "late"},
		{"cancelled", 499, []byte(`{"error":{"code":499,"status":"CANCELLED","message":"gone"}}`), record.ErrorCanceled, "gone"},
		{"string error", 500, []byte(`{"error":"plain text error"}`), record.ErrorServer, "plain text error"},
		{"anthropic overloaded", 529, []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), record.ErrorOverloaded, "Overloaded"},
		{"html 502", 502, []byte("<html><head><title>502 Bad Gateway</title></head></html>"), record.ErrorServer, "502 Bad Gateway"},
		{"html title after bytes that lowering would grow", 502, []byte("\xff\xffİ<TITLE>Bad Gateway</Title>"), record.ErrorServer, "Bad Gateway"},
		{"text", 503, []byte("\n\nupstream connect error\nmore"), record.ErrorOverloaded, "upstream connect error"},
		{"empty", 404, nil, record.ErrorNotFound, ""},
		{"gemini context length", 400, []byte(`{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`), record.ErrorContextLength, "The input token count"},
		{"error in an array", 429, []byte(`[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}]`), record.ErrorRateLimit, "Resource has been exhausted"},
		{"invalid json", 400, []byte(`{"error":`), record.ErrorInvalidRequest, `{"error":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, msg := providers.ClassifyError(tt.status, tt.body)
			assert.Equal(t, tt.wantType, typ)
			assert.True(t, strings.HasPrefix(msg, tt.wantMsg), "message %q", msg)
		})
	}
}

func TestClassifyErrorClipsHugeMessages(t *testing.T) {
	_, msg := providers.ClassifyError(500, []byte(`{"error":{"message":"`+strings.Repeat("é", 5000)+`"}}`))
	assert.LessOrEqual(t, len(msg), 1030)
	assert.True(t, strings.HasSuffix(msg, "…"))
}

func FuzzClassifyError(f *testing.F) {
	f.Add(429, []byte(`{"error":{"message":"m","code":"insufficient_quota"}}`))
	f.Add(400, []byte(`{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}`))
	f.Add(502, []byte("<title>x</title>"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		typ, msg := providers.ClassifyError(status, body)
		if typ == "" {
			t.Fatal("no error type")
		}
		if len(msg) > 1100 {
			t.Fatalf("message of %d bytes", len(msg))
		}
	})
}
