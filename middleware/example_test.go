package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

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
	// [{"role":"user","parts":[{"type":"text","content":"Hi"}]}]
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

// With the history preview, each chat request carries the guidance and a
// summary of the conversation's latest calls, as a system message first.
func ExampleWithHistoryPreview() {
	var system []string // what the model received, call by call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct{ Role, Content string }
		}
		json.Unmarshal(body, &req)
		if req.Messages[0].Role == "system" {
			_, preview, _ := strings.Cut(req.Messages[0].Content, "\n\n") // after the guidance
			system = append(system, preview)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","model":"gpt-4o-mini"}`)
	}))
	defer srv.Close()

	clock := func() time.Time { return time.Date(2025, 3, 1, 12, 1, 3, 0, time.UTC) }
	rec := middleware.NewRecorder(middleware.WithHistoryPreview(3), middleware.WithClock(clock))
	defer rec.Close()
	client := rec.Client(nil)

	ctx := middleware.WithTrace(context.Background(), "conversation-1")
	for _, q := range []string{"Hi", "And then?"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"`+q+`"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for _, s := range system {
		fmt.Println(s)
	}
	fmt.Println("guidance recorded:", rec.History().Records()[1].HistoryGuidance)
	// Output:
	// History: 0 records in this conversation (trace conversation-1).
	// History: 1 record in this conversation (trace conversation-1). Latest:
	// - 12:01:03 user openai.chat.completions.create model=gpt-4o-mini ok chat.completion
	// guidance recorded: true
}

// Attribution: whose call it was and which feature made it; and the
// conversation a program never named, found from its messages.
func ExampleWithUser() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","model":"gpt-4o-mini","choices":[{"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	rec := middleware.NewRecorder()
	defer rec.Close()

	ctx := middleware.WithUser(context.Background(), "user-42")
	ctx = middleware.WithTags(ctx, "geo-quiz")
	ctx = middleware.WithMetadata(ctx, "tenant", "acme")
	send := func(messages string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":`+messages+`}`))
		resp, err := rec.Client(nil).Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// No WithTrace: the second call sends the first's answer back.
	send(`[{"role":"user","content":"Capital of France?"}]`)
	send(`[{"role":"user","content":"Capital of France?"},{"role":"assistant","content":"Paris."},{"role":"user","content":"And of Italy?"}]`)

	recs := rec.History().Records()
	fmt.Println(recs[1].UserID, recs[1].Tags, recs[1].Metadata)
	fmt.Println("one conversation:", recs[0].TraceID == recs[1].TraceID, "inferred:", recs[1].TraceInferred)
	// Output:
	// user-42 [geo-quiz] map[tenant:acme]
	// one conversation: true inferred: true
}
