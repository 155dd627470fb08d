package redact_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/redact"
)

func TestSecrets(t *testing.T) {
	tests := []struct{ in, want string }{
		{"key sk-abcdefghijklmnopqrstuvwx end", "key [REDACTED] end"},
		{"sk-proj-abc_DEF-0123456789abcdefgh", "[REDACTED]"},
		{"short sk-abc stays", "short sk-abc stays"},
		{"task-abcdefghijklmnopqrstuvwxyz is a word", "task-abcdefghijklmnopqrstuvwxyz is a word"},
		{"AIzaSyA1234567890abcdefghijklmnopqrstu", "[REDACTED]"},
		{`"Authorization: Bearer eyJhbGciOi.J9.abc"`, `"Authorization: Bearer [REDACTED]"`},
		{"bearer abcdefgh12", "bearer [REDACTED]"},
		{"GET https://x/v1?alt=sse&key=secret123&x=1 failed", "GET https://x/v1?alt=sse&key=[REDACTED]&x=1 failed"},
		{"monkey=banana is not a parameter", "monkey=banana is not a parameter"},
		{"ya29.a0AfH6SMBxxxxxxxxxxxxxxxxxx", "[REDACTED]"},
		{"nothing here", "nothing here"},
		// A token that swallows the next prefix: the secret after it is
		// redacted as well, by the same pattern or by another.
		{"Bearer abcdefghBearer secret12345", "Bearer [REDACTED] [REDACTED]"},
		{"bearer abcdefghBearer secret12345", "bearer [REDACTED] [REDACTED]"},
		{"Bearer abcdefghbearer secret12345", "Bearer [REDACTED] [REDACTED]"},
		{"sk-abcdefghijklmnopqrstuvwx-sk-abcdefghijklmnopqrstuvwx", "[REDACTED]"},
		{"?key=abc&key=def", "?key=[REDACTED]&key=[REDACTED]"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, redact.Secrets(tt.in), tt.in)
	}
}

// AWS's credentials are known by name: a session token header, and a
// presigned URL's signature, credential and token parameters.
func TestAWSCredentialNames(t *testing.T) {
	assert.True(t, redact.IsCredentialHeader("x-amz-security-token"))
	for _, p := range []string{"X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token"} {
		assert.True(t, redact.IsSecretParam(p), p)
	}
}

func TestCredentialValues(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer tok-0123456789")
	h.Set("Api-Key", "0123456789abcdef0123456789abcdef")
	h.Set("Cookie", "session=cookie-value-1; theme=dark")
	h.Set("Set-Cookie", "ignored=set-cookie-value") // a response's, never sent
	h.Set("Content-Type", "application/json")
	u, _ := url.Parse("https://h/v1?key=query%3Dsecret1&x=not-a-secret")
	got := redact.CredentialValues(h, u)
	assert.ElementsMatch(t, []string{"tok-0123456789", "0123456789abcdef0123456789abcdef", "cookie-value-1", "query%3Dsecret1", "query=secret1"}, got)
}

func TestSafeURL(t *testing.T) {
	u, _ := url.Parse("https://user:pw@h/v1/keys/0123456789abcdef/sk-abcdefghijklmnopqrstuvwx?alt=sse&key=abc")
	got := redact.SafeURL(u, "0123456789abcdef")
	assert.Equal(t, "/v1/keys/[REDACTED]/[REDACTED]", got.Path)
	assert.Equal(t, "alt=sse", got.RawQuery)
	assert.Nil(t, got.User)
	assert.Equal(t, "https://user:pw@h/v1/keys/0123456789abcdef/sk-abcdefghijklmnopqrstuvwx?alt=sse&key=abc", u.String(), "u is unchanged")
	clean, _ := url.Parse("https://h/v1/chat?alt=sse")
	assert.Same(t, clean, redact.SafeURL(clean), "nothing to take out: u itself")
	assert.Nil(t, redact.SafeURL(nil))
}
