package middleware_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/llmhistory/llmhistory/middleware"
)

// One line wraps a client; every call becomes one record.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","model":"gpt-4o-mini","usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
	}))
	defer srv.Close()

	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil) // or: cfg.HTTPClient = rec.Client(nil) for go-openai and genai

	ctx := middleware.WithTrace(context.Background(), "conversation-1")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`))
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	r := rec.History().Records()[0]
	fmt.Println(r.MethodName, r.Speaker, r.TraceID)
	fmt.Println(r.Outcome.Status, r.Outcome.ValueClass, r.Usage.TotalTokens)
	fmt.Println(string(r.Args))
	// Output:
	// openai.chat.completions.create user conversation-1
	// ok chat.completion 11
	// [{"role":"user","content":"Hi"}]
}

// Retry inside the recorder: three attempts, one record.
func ExampleRetry() {
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts++; attempts < 3 {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()

	rec := middleware.NewRecorder()
	defer rec.Close()
	client := &http.Client{Transport: middleware.Chain(nil,
		rec.Middleware(),
		middleware.Retry(middleware.RetryPolicy{BaseDelay: 1}),
	)}
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	r := rec.History().Records()[0]
	fmt.Println(len(rec.History().Records()), r.Attempts, r.Outcome.Status)
	// Output:
	// 1 3 ok
}

func ExampleRedact() {
	fmt.Println(middleware.Redact("calling https://host/v1?key=abc123 with Bearer sk-abcdefghijklmnopqrstuvwxyz"))
	// Output:
	// calling https://host/v1?key=[REDACTED] with Bearer [REDACTED]
}
