package otelsink

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// What Options.ServerAddress may return, and the server it gives.
func TestParseServer(t *testing.T) {
	for given, want := range map[string]server{
		"":                                   {},
		"   ":                                {},
		"api.openai.com":                     {"api.openai.com", 443},
		" api.anthropic.com ":                {"api.anthropic.com", 443},
		"gateway.internal:8443":              {"gateway.internal", 8443},
		"gateway.internal:0":                 {"gateway.internal", 443},
		"gateway.internal:99999":             {"gateway.internal", 443},
		"[::1]:9443":                         {"::1", 9443},
		"[::1]":                              {"::1", 443},
		"http://localhost/v1":                {"localhost", 80},
		"https://my.openai.azure.com/openai": {"my.openai.azure.com", 443},
		"https://[2001:db8::1]:8080/x":       {"2001:db8::1", 8080},
		"/tmp/llm.sock":                      {"/tmp/llm.sock", 0},
		"https://":                           {},
		"://bad":                             {},
	} {
		assert.Equal(t, want, parseServer(given), "%q", given)
	}
}

// The server and the traceparent a request carries.
func TestReadRequest(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "https://generativelanguage.googleapis.com/v1beta/models/x:generateContent", nil)
	info := readRequest(req)
	assert.Equal(t, server{"generativelanguage.googleapis.com", 443}, info.server)
	assert.False(t, info.parent.IsValid())

	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	info = readRequest(req)
	assert.Equal(t, "00f067aa0ba902b7", info.parent.SpanID().String())
	assert.True(t, info.parent.IsRemote())
	assert.False(t, info.parent.IsSampled())

	req.Header.Set("Traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	assert.False(t, readRequest(req).parent.IsValid(), "an all-zero trace ID is no parent")
}

// Any address and any request: no panic, a port in range, a host without
// a scheme.
func FuzzServer(f *testing.F) {
	f.Add("api.openai.com", "https://api.openai.com/v1/chat/completions", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("[::1]:9443", "http://[::1]:8080/v1", "garbage")
	f.Add("https://x:65536/", "http://localhost:0/", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01")
	f.Fuzz(func(t *testing.T, address, rawURL, traceparent string) {
		for _, s := range []server{parseServer(address), fromURL(rawURL)} {
			if s.port < 0 || s.port >= 1<<16 {
				t.Fatalf("port %d out of range", s.port)
			}
			if s.host == "" && s.port != 0 {
				t.Fatalf("a port without a host: %+v", s)
			}
			if strings.Contains(s.host, "://") {
				t.Fatalf("a scheme in the host %q", s.host)
			}
		}
		req := &http.Request{Method: http.MethodPost, Header: http.Header{"Traceparent": {traceparent}}}
		if u, err := url.Parse(rawURL); err == nil {
			req.URL = u
		}
		req = req.WithContext(t.Context())
		if info := readRequest(req); info != nil && info.parent.IsValid() && !info.parent.IsRemote() {
			t.Fatal("a traceparent's span is not remote")
		}
	})
}

func fromURL(raw string) server {
	u, err := url.Parse(raw)
	if err != nil {
		return server{}
	}
	return serverOfURL(u)
}
