// Command openaigo wraps the official OpenAI Go SDK (github.com/openai/openai-go)
// with the llmhistory recorder, makes a chat completion, a streamed one
// and a Responses API call, and prints their history records as JSON
// lines.
//
// With OPENAI_API_KEY set it calls the OpenAI API (OPENAI_MODEL picks the
// model, gpt-5.6-luna by default: the SDK marks the older small models
// deprecated); otherwise it starts a fake OpenAI server on loopback and
// calls that, so it runs anywhere:
//
//	go run ./examples/openaigo
//
// The line that records is option.WithHTTPClient(rec.Client(nil)): the SDK
// sends every request through the recorder's *http.Client. The SDK's own
// retries (two by default, on 429 and 5xx) go through it too, and each
// call's attempts fold into one record.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/llmhistory/llmhistory/middleware"
)

func main() {
	if err := run(context.Background(), os.Stdout, os.Getenv("OPENAI_API_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "openaigo example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, apiKey string) error {
	rec := middleware.NewRecorder()
	defer rec.Close()

	opts := []option.RequestOption{
		option.WithHTTPClient(rec.Client(nil)), // the one line that records every call
	}
	model := os.Getenv("OPENAI_MODEL")
	if apiKey == "" {
		srv := httptest.NewServer(fakeOpenAI())
		defer srv.Close()
		// No key, endpoint or organization from the environment reaches the fake.
		opts = append(opts, option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-fake-key-for-the-embedded-server"))
		fmt.Fprintln(os.Stderr, "OPENAI_API_KEY is not set: calling an embedded fake server at", srv.URL)
		model = ""
	} else {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	if model == "" {
		model = openai.ChatModelGPT5_6Luna
	}
	client := openai.NewClient(opts...)

	ctx = middleware.WithTrace(ctx, "example-conversation")
	ctx = middleware.WithUser(ctx, "user-42")
	messages := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello in five words.")}
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model, Messages: messages})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "answer:", resp.Choices[0].Message.Content)

	// The next turn carries the answer back, as a chat API requires, and
	// streams its own.
	messages = append(messages, resp.Choices[0].Message.ToParam(), openai.UserMessage("Now count to three."))
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: model, Messages: messages,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	fmt.Fprint(os.Stderr, "streamed: ")
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		for _, c := range chunk.Choices {
			fmt.Fprint(os.Stderr, c.Delta.Content)
		}
	}
	fmt.Fprintln(os.Stderr)
	if err := stream.Err(); err != nil {
		return err
	}
	stream.Close()

	// The Responses API: a call of its own, recorded as
	// openai.responses.create.
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model:        model,
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Name one prime number.")},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "responses:", r.OutputText())

	for _, r := range rec.History().Records() {
		if _, err := out.Write(append(r.AppendJSON(nil), '\n')); err != nil {
			return err
		}
	}
	return nil
}

// fakeOpenAI answers chat completions, streamed or not, and the Responses
// API, as the OpenAI API does.
func fakeOpenAI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/v1/responses":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"resp_fake1","object":"response","created_at":1755690953,"status":"completed","model":"gpt-4o-mini-2024-07-18",`+
				`"output":[{"id":"msg_fake1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Seven.","annotations":[]}]}],`+
				`"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":23}}`)
		case r.URL.Path != "/v1/chat/completions":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`)
		case !strings.Contains(string(body), `"stream":true`):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"chatcmpl-fake1","object":"chat.completion","created":1755690953,"model":"gpt-4o-mini-2024-07-18",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, nice to meet!","refusal":null},"finish_reason":"stop","logprobs":null}],`+
				`"usage":{"prompt_tokens":14,"completion_tokens":7,"total_tokens":21}}`)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			f, _ := w.(http.Flusher)
			for _, delta := range []string{"One", ", two", ", three."} {
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-fake2\",\"object\":\"chat.completion.chunk\",\"created\":1755690953,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}],\"usage\":null}\n\n", delta)
				if f != nil {
					f.Flush()
				}
			}
			io.WriteString(w, "data: {\"id\":\"chatcmpl-fake2\",\"object\":\"chat.completion.chunk\",\"created\":1755690953,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n")
			io.WriteString(w, "data: {\"id\":\"chatcmpl-fake2\",\"object\":\"chat.completion.chunk\",\"created\":1755690953,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":6,\"total_tokens\":36}}\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
		}
	})
}
