package replay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/replay"
)

// Record a call once, then replay it with the provider gone; the recorder
// records the replayed call like a live one, and a changed request is a
// miss that says what changed.
func Example() {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
	}))
	dir, _ := os.MkdirTemp("", "replay-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.jsonl")

	ask := func(client *http.Client, base, question string) (string, error) {
		body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + question + `"}]}`
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	// Record: the call goes to the provider and into the cassette.
	rec, _ := replay.New(path, replay.WithMode(replay.ModeRecord))
	if _, err := ask(rec.Client(), provider.URL, "Hi"); err != nil {
		fmt.Println(err)
	}
	if err := rec.Close(); err != nil {
		fmt.Println(err)
	}
	provider.Close()

	// Replay (the default mode): no provider, the same answer, recorded.
	cassette, _ := replay.New(path)
	recorder := middleware.NewRecorder()
	client := middleware.NewClient(nil, recorder.Middleware(), cassette.Middleware())
	answer, _ := ask(client, "https://api.openai.com", "Hi")
	fmt.Println(strings.Contains(answer, "Hello!"))
	r := recorder.History().Records()[0]
	fmt.Println(r.MethodName, r.Outcome.Status, r.Usage.TotalTokens)

	// A request that was never recorded.
	_, err := ask(client, "https://api.openai.com", "Bye")
	var miss *replay.MissError
	if errors.As(err, &miss) {
		fmt.Println(miss.Differences[0])
	}
	recorder.Close()
	// Output:
	// true
	// openai.chat.completions.create ok 11
	// body.messages.0.content: recorded "Hi", got "Bye"
}
