// Command anthropic wraps the official Anthropic SDK
// (github.com/anthropics/anthropic-sdk-go) with the llmhistory recorder,
// makes a Messages call and a streamed one, and prints their history
// records as JSON lines.
//
// With ANTHROPIC_API_KEY set it calls the Anthropic API (ANTHROPIC_MODEL
// picks the model, the SDK's current Claude Sonnet by default;
// ANTHROPIC_BASE_URL another endpoint); otherwise it starts a fake
// Anthropic server on loopback and calls that, so it runs anywhere:
//
//	go run ./examples/anthropic
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/llmhistory/llmhistory/middleware"
)

func main() {
	if err := run(context.Background(), os.Stdout, os.Getenv("ANTHROPIC_API_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, apiKey string) error {
	rec := middleware.NewRecorder()
	defer rec.Close()

	opts := []option.RequestOption{option.WithHTTPClient(rec.Client(nil))} // the one line that records every call
	model := os.Getenv("ANTHROPIC_MODEL")
	if apiKey != "" {
		// The SDK reads ANTHROPIC_BASE_URL itself.
		opts = append(opts, option.WithAPIKey(apiKey))
	} else {
		srv := httptest.NewServer(fakeAnthropic())
		defer srv.Close()
		// No credential or endpoint from the environment reaches the fake.
		opts = append(opts, option.WithoutEnvironmentDefaults(),
			option.WithAPIKey("sk-ant-fake-key-for-the-embedded-server"), option.WithBaseURL(srv.URL))
		fmt.Fprintln(os.Stderr, "ANTHROPIC_API_KEY is not set: calling an embedded fake server at", srv.URL)
	}
	if model == "" {
		model = anthropic.ModelClaudeSonnet5_5
	}
	client := anthropic.NewClient(opts...)

	ctx = middleware.WithTrace(ctx, "example-conversation")
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello in five words."))}
	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 100, Messages: messages})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "answer:", text(msg))

	messages = append(messages, msg.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("Now count to three.")))
	stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 100, Messages: messages})
	fmt.Fprint(os.Stderr, "streamed: ")
	var streamed anthropic.Message
	for stream.Next() {
		ev := stream.Current()
		if err := streamed.Accumulate(ev); err != nil {
			stream.Close()
			return err
		}
		if d, ok := ev.AsAny().(anthropic.ContentBlockDeltaEvent); ok {
			fmt.Fprint(os.Stderr, d.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		stream.Close()
		return err
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

func text(m *anthropic.Message) string {
	var sb strings.Builder
	for _, b := range m.Content {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// fakeAnthropic answers the Messages API, streamed or not, as Anthropic
// does (the shapes of testdata/providers/anthropic): a message with text
// blocks, stop_reason and usage; or named server-sent events from
// message_start to message_stop, with a ping among them.
func fakeAnthropic() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("request-id", "req_011CFake0123456789abcdef")
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"Not Found"},"request_id":"req_011CFake0123456789abcdef"}`)
			return
		}
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_01FakeHello0123456789","type":"message","role":"assistant","model":"claude-sonnet-5-5",`+
				`"content":[{"type":"text","text":"Hello there, nice to meet!"}],"stop_reason":"end_turn","stop_sequence":null,`+
				`"usage":{"input_tokens":14,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,`+
				`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":9,"service_tier":"standard"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		f, _ := w.(http.Flusher)
		event := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			if f != nil {
				f.Flush()
			}
		}
		event("message_start", `{"type":"message_start","message":{"id":"msg_01FakeCount0123456789","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}}}`)
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, piece := range []string{"One", ", two", ", three."} {
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, piece))
		}
		event("ping", `{"type": "ping"}`)
		event("content_block_stop", `{"type":"content_block_stop","index":0}`)
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":6}}`)
		event("message_stop", `{"type":"message_stop"}`)
	})
}
