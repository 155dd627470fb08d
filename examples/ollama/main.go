// Command ollama wraps Ollama's Go client (github.com/ollama/ollama/api)
// with the llmhistory recorder, makes a streamed chat, a second turn of
// it answered at once, and an embedding, and prints their history records
// as JSON lines.
//
// With OLLAMA_HOST set, or an Ollama answering on localhost:11434, it
// calls that Ollama (OLLAMA_MODEL picks the chat model, llama3.2 by
// default; OLLAMA_EMBED_MODEL the embedding one, nomic-embed-text); the
// models must be pulled. Otherwise it starts a fake Ollama on loopback and
// calls that, so it runs anywhere:
//
//	go run ./examples/ollama
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/llmhistory/llmhistory/middleware"
)

func main() {
	if err := run(context.Background(), os.Stdout, localOllama()); err != nil {
		fmt.Fprintln(os.Stderr, "ollama example:", err)
		os.Exit(1)
	}
}

// localOllama returns the Ollama to call: OLLAMA_HOST, or the default
// localhost:11434 when one answers there; "" when there is none.
func localOllama() string {
	if h := os.Getenv("OLLAMA_HOST"); h != "" {
		if !strings.Contains(h, "://") {
			h = "http://" + h
		}
		return h
	}
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://localhost:11434/api/version")
	if err != nil {
		return ""
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return "http://localhost:11434"
}

func run(ctx context.Context, out io.Writer, base string) error {
	rec := middleware.NewRecorder()
	defer rec.Close()

	model, embedModel := os.Getenv("OLLAMA_MODEL"), os.Getenv("OLLAMA_EMBED_MODEL")
	if base == "" {
		srv := httptest.NewServer(fakeOllama())
		defer srv.Close()
		base, model, embedModel = srv.URL, "", ""
		fmt.Fprintln(os.Stderr, "no Ollama on localhost:11434 and OLLAMA_HOST is not set: calling an embedded fake Ollama at", srv.URL)
	}
	if model == "" {
		model = "llama3.2"
	}
	if embedModel == "" {
		embedModel = "nomic-embed-text"
	}
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	client := api.NewClient(u, rec.Client(nil)) // the one line that records every call

	ctx = middleware.WithTrace(ctx, "example-conversation")
	messages := []api.Message{{Role: "user", Content: "Say hello in five words."}}
	var answer strings.Builder
	fmt.Fprint(os.Stderr, "streamed: ")
	err = client.Chat(ctx, &api.ChatRequest{Model: model, Messages: messages, Options: map[string]any{"temperature": 0}}, func(r api.ChatResponse) error {
		answer.WriteString(r.Message.Content)
		fmt.Fprint(os.Stderr, r.Message.Content)
		return nil
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}

	messages = append(messages, api.Message{Role: "assistant", Content: answer.String()}, api.Message{Role: "user", Content: "Now count to three."})
	stream := false
	err = client.Chat(ctx, &api.ChatRequest{Model: model, Messages: messages, Stream: &stream}, func(r api.ChatResponse) error {
		fmt.Fprintln(os.Stderr, "answer:", r.Message.Content)
		return nil
	})
	if err != nil {
		return err
	}

	emb, err := client.Embed(ctx, &api.EmbedRequest{Model: embedModel, Input: "Hello world"})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "embedding of", len(emb.Embeddings[0]), "dimensions")

	for _, r := range rec.History().Records() {
		if _, err := out.Write(append(r.AppendJSON(nil), '\n')); err != nil {
			return err
		}
	}
	return nil
}

// fakeOllama answers /api/chat and /api/embed as Ollama does (the shapes
// of testdata/providers/ollama): newline-delimited JSON for a stream, one
// object otherwise, the last with "done": true, done_reason and the
// counts.
func fakeOllama() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		const at = `"created_at":"2026-03-09T20:20:30.22491889Z"`
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/chat" && strings.Contains(string(body), `"stream":false`):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"model":"llama3.2",`+at+`,"message":{"role":"assistant","content":"One, two, three."},"done":true,"done_reason":"stop",`+
				`"total_duration":812345678,"load_duration":2154458,"prompt_eval_count":30,"prompt_eval_duration":38767583,"eval_count":6,"eval_duration":319786334}`)
		case r.Method == http.MethodPost && r.URL.Path == "/api/chat":
			w.Header().Set("Content-Type", "application/x-ndjson")
			f, _ := w.(http.Flusher)
			for _, piece := range []string{"Hello", " there", ", nice", " to", " meet!"} {
				fmt.Fprintf(w, `{"model":"llama3.2",%s,"message":{"role":"assistant","content":%q},"done":false}`+"\n", at, piece)
				if f != nil {
					f.Flush()
				}
			}
			io.WriteString(w, `{"model":"llama3.2",`+at+`,"message":{"role":"assistant","content":""},"done_reason":"stop","done":true,`+
				`"total_duration":171946792,"load_duration":38473250,"prompt_eval_count":14,"prompt_eval_duration":27608250,"eval_count":9,"eval_duration":105611917}`+"\n")
		case r.Method == http.MethodPost && r.URL.Path == "/api/embed":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[-0.006746773,-0.0013343222,-0.17155783,0.008378815]],"total_duration":22283583,"load_duration":7451083,"prompt_eval_count":2}`)
		default:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"404 page not found"}`)
		}
	})
}
