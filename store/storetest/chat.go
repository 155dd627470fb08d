package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Chat holds convs conversations of turns calls each with a chat server
// of OpenAI's shape, through client, interleaved as concurrent users
// would: each call sends the system prompt, every earlier turn and a new
// question, and gets an answer of its own. It returns the calls made.
func Chat(t testing.TB, client *http.Client, convs, turns int) int {
	t.Helper()
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		n++
		id := n
		mu.Unlock()
		last := req.Messages[len(req.Messages)-1]["content"]
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":9,"total_tokens":%d}}`,
			id, fmt.Sprintf("answer %d to: %v", id, last), len(body)/4, len(body)/4+9)
	}))
	defer srv.Close()
	rng := rand.New(rand.NewPCG(uint64(convs), uint64(turns)))
	history := make([][]map[string]any, convs)
	for c := range history {
		history[c] = []map[string]any{{"role": "system", "content": "You are the support assistant of an online shop."}}
	}
	left := make([]int, convs)
	for c := range left {
		left[c] = turns
	}
	calls := 0
	for remaining := convs * turns; remaining > 0; remaining-- {
		c := rng.IntN(convs)
		for left[c] == 0 {
			c = (c + 1) % convs
		}
		left[c]--
		msgs := append(history[c], map[string]any{"role": "user", "content": fmt.Sprintf("conversation %d, question %d: %s", c, turns-left[c], Text(rng, 80))})
		body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs})
		resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Choices []struct {
				Message map[string]any `json:"message"`
			} `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || len(out.Choices) == 0 {
			t.Fatalf("chat: %v", err)
		}
		history[c] = append(msgs, out.Choices[0].Message)
		calls++
	}
	return calls
}
