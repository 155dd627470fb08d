package storebench

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

// ChatServer answers chat completions in OpenAI's shape, each with an
// answer of its own.
type ChatServer struct {
	*httptest.Server
	mu sync.Mutex
	n  int
}

// NewChatServer starts a chat server; the test's cleanup stops it.
func NewChatServer(t testing.TB) *ChatServer {
	c := &ChatServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", 400)
			return
		}
		c.mu.Lock()
		c.n++
		id := c.n
		c.mu.Unlock()
		last := req.Messages[len(req.Messages)-1]["content"]
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":9,"total_tokens":%d}}`,
			id, fmt.Sprintf("answer %d to: %v", id, last), len(body)/4, len(body)/4+9)
	}))
	t.Cleanup(c.Close)
	return c
}

// Chats holds conversations with a chat server through a client: each
// call sends the system prompt, every earlier turn and a new question,
// as an application with a message slice does.
type Chats struct {
	t       testing.TB
	client  *http.Client
	url     string
	rng     *rand.Rand
	history [][]map[string]any
	turns   []int
}

// NewChats returns convs conversations to hold through client.
func NewChats(t testing.TB, srv *ChatServer, client *http.Client, convs int) *Chats {
	c := &Chats{t: t, client: client, url: srv.URL + "/v1/chat/completions", rng: rand.New(rand.NewPCG(uint64(convs), 77)), history: make([][]map[string]any, convs), turns: make([]int, convs)}
	for i := range c.history {
		c.history[i] = []map[string]any{{"role": "system", "content": "You are the support assistant of an online shop."}}
	}
	return c
}

// Call makes the next turn of conversation i.
func (c *Chats) Call(i int) {
	c.t.Helper()
	c.turns[i]++
	msgs := append(c.history[i], map[string]any{"role": "user", "content": fmt.Sprintf("conversation %d, question %d: %s", i, c.turns[i], Text(c.rng, 80))})
	body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs})
	resp, err := c.client.Post(c.url, "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	var out struct {
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || len(out.Choices) == 0 {
		c.t.Fatalf("chat: %v", err)
	}
	c.history[i] = append(msgs, out.Choices[0].Message)
}

// Random makes the next turn of a conversation drawn at random.
func (c *Chats) Random() { c.Call(c.rng.IntN(len(c.history))) }

// Chat holds convs conversations of turns calls each, interleaved as
// concurrent users would, and returns the calls made.
func Chat(t testing.TB, client *http.Client, convs, turns int) int {
	t.Helper()
	c := NewChats(t, NewChatServer(t), client, convs)
	left := make([]int, convs)
	for i := range left {
		left[i] = turns
	}
	for remaining := convs * turns; remaining > 0; remaining-- {
		i := c.rng.IntN(convs)
		for left[i] == 0 {
			i = (i + 1) % convs
		}
		left[i]--
		c.Call(i)
	}
	return convs * turns
}
