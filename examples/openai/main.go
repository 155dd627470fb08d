// Command openai wraps a go-openai client with the llmhistory recorder,
// makes a chat call and a streamed one, and prints their history records
// as JSON lines.
//
// With OPENAI_API_KEY set it calls the OpenAI API (OPENAI_MODEL picks the
// model, gpt-4o-mini by default); otherwise it starts a fake OpenAI server
// on loopback and calls that, so it runs anywhere:
//
//	go run ./examples/openai
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llmhistory/llmhistory/middleware"
)

func main() {
	if err := run(context.Background(), os.Stdout, os.Getenv("OPENAI_API_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "openai example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, apiKey string) error {
	rec := middleware.NewRecorder()
	defer rec.Close()

	cfg := openai.DefaultConfig(apiKey)
	model := os.Getenv("OPENAI_MODEL")
	if apiKey == "" {
		srv := httptest.NewServer(fakeOpenAI())
		defer srv.Close()
		cfg = openai.DefaultConfig("sk-fake-key-for-the-embedded-server")
		cfg.BaseURL = srv.URL + "/v1"
		fmt.Fprintln(os.Stderr, "OPENAI_API_KEY is not set: calling an embedded fake server at", srv.URL)
	}
	if model == "" {
		model = openai.GPT4oMini
	}
	cfg.HTTPClient = rec.Client(nil) // the one line that records every call
	client := openai.NewClientWithConfig(cfg)

	ctx = middleware.WithTrace(ctx, "example-conversation")
	messages := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Say hello in five words."}}
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: model, Messages: messages})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "answer:", resp.Choices[0].Message.Content)

	messages = append(messages, resp.Choices[0].Message,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "Now count to three."})
	stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: model, Messages: messages, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return err
	}
	fmt.Fprint(os.Stderr, "streamed: ")
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			stream.Close()
			return err
		}
		for _, c := range chunk.Choices {
			fmt.Fprint(os.Stderr, c.Delta.Content)
		}
	}
	stream.Close()
	fmt.Fprintln(os.Stderr)

	for _, r := range rec.History().Records() {
		if _, err := out.Write(append(r.AppendJSON(nil), '\n')); err != nil {
			return err
		}
	}
	return nil
}

// fakeOpenAI answers chat completions, streamed or not, as the OpenAI API
// does.
func fakeOpenAI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"chatcmpl-fake1","object":"chat.completion","created":1755690953,"model":"gpt-4o-mini-2024-07-18",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, nice to meet!"},"finish_reason":"stop"}],`+
				`"usage":{"prompt_tokens":14,"completion_tokens":7,"total_tokens":21}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f, _ := w.(http.Flusher)
		for _, delta := range []string{"One", ", two", ", three."} {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-fake2\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}],\"usage\":null}\n\n", delta)
			if f != nil {
				f.Flush()
			}
		}
		io.WriteString(w, "data: {\"id\":\"chatcmpl-fake2\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n")
		io.WriteString(w, "data: {\"id\":\"chatcmpl-fake2\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":6,\"total_tokens\":36}}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
}
