package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

func TestRetriableRule(t *testing.T) {
	want := map[string]bool{
		"rate_limit": true, "quota": false, "auth": false, "permission": false,
		"not_found": false, "invalid_request": false, "context_length": false,
		"content_filter": false, "conflict": true, "server": true, "overloaded": true,
		"timeout": true, "canceled": false, "transport": true, "incomplete": false,
		"decode": false, "unknown": false,
	}
	got := map[string]bool{}
	for _, typ := range record.ErrorTypes() {
		got[typ] = record.Retriable(typ)
	}
	assert.Equal(t, want, got, "the taxonomy or its retriable rule changed: update the table in doc.go too")
	assert.False(t, record.Retriable(""), "no error is not retriable")
	assert.False(t, record.Retriable("something_new"))
}

func TestErrorTypeForStatus(t *testing.T) {
	tests := map[int]string{
		200: "", 304: "", 400: "invalid_request", 401: "auth", 402: "quota", 403: "permission",
		404: "not_found", 408: "timeout", 409: "conflict", 413: "invalid_request", 418: "invalid_request",
		422: "invalid_request", 429: "rate_limit", 499: "canceled", 500: "server", 502: "server",
		503: "overloaded", 504: "timeout", 529: "overloaded", 599: "server", 600: "unknown",
	}
	for status, want := range tests {
		assert.Equal(t, want, record.ErrorTypeForStatus(status), "status %d", status)
	}
}

func TestErrorTypeForRealErrors(t *testing.T) {
	// A port nobody listens on: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := ln.Addr().String()
	ln.Close()
	_, refused := http.Get("http://" + closedAddr)
	require.Error(t, refused)

	// A server that stalls past the client's timeout.
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer stall.Close()
	_, timedOut := (&http.Client{Timeout: 20 * time.Millisecond}).Get(stall.URL)
	require.Error(t, timedOut)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", stall.URL, nil)
	_, canceled := http.DefaultClient.Do(req)
	require.Error(t, canceled)

	// A server that hangs up in the middle of a body.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer cut.Close()
	resp, err := http.Get(cut.URL)
	require.NoError(t, err)
	_, cutErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, cutErr)

	var v struct{ A int }
	decodeErr := json.Unmarshal([]byte(`{"A":`), &v)
	typeErr := json.Unmarshal([]byte(`{"A":"x"}`), &v)

	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"refused", refused, record.ErrorTransport},
		{"client timeout", timedOut, record.ErrorTimeout},
		{"canceled", canceled, record.ErrorCanceled},
		{"wrapped deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), record.ErrorTimeout},
		{"cut body", cutErr, record.ErrorTransport},
		{"syntax", decodeErr, record.ErrorDecode},
		{"type", typeErr, record.ErrorDecode},
		{"other", errors.New("boom"), record.ErrorUnknown},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, record.ErrorTypeForError(tt.err), "%s: %v", tt.name, tt.err)
	}
}
