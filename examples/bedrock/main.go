// Command bedrock wraps the AWS SDK's Bedrock Runtime client
// (github.com/aws/aws-sdk-go-v2/service/bedrockruntime) with the llmhistory
// recorder, makes a Converse call and a streamed one (ConverseStream), and
// prints their history records as JSON lines.
//
// With AWS credentials in the environment (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, and AWS_SESSION_TOKEN for a session) it calls
// Amazon Bedrock in AWS_REGION (us-east-1 by default); BEDROCK_MODEL picks
// the model or inference profile (us.amazon.nova-micro-v1:0 by default).
// Otherwise it starts a fake Bedrock on loopback, which answers as Bedrock
// does (JSON, and the binary eventstream framing for the stream), and
// calls that, so it runs anywhere:
//
//	go run ./examples/bedrock
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/llmhistory/llmhistory/middleware"
)

func main() {
	live := os.Getenv("AWS_ACCESS_KEY_ID") != "" && os.Getenv("AWS_SECRET_ACCESS_KEY") != ""
	if err := run(context.Background(), os.Stdout, live); err != nil {
		fmt.Fprintln(os.Stderr, "bedrock example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, live bool) error {
	rec := middleware.NewRecorder()
	defer rec.Close()
	record := func(o *bedrockruntime.Options) { o.HTTPClient = rec.Client(nil) } // the one line that records every call

	var client *bedrockruntime.Client
	model := os.Getenv("BEDROCK_MODEL")
	if live {
		region := os.Getenv("AWS_REGION")
		if region == "" {
			region = "us-east-1"
		}
		cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
		if err != nil {
			return err
		}
		client = bedrockruntime.NewFromConfig(cfg, record)
		if model == "" {
			model = "us.amazon.nova-micro-v1:0"
		}
	} else {
		srv := httptest.NewServer(fakeBedrock())
		defer srv.Close()
		fmt.Fprintln(os.Stderr, "no AWS credentials in the environment: calling an embedded fake Bedrock at", srv.URL)
		// Credentials of the right shape, which the SDK signs with; none
		// is live, and none from the environment reaches the fake.
		client = bedrockruntime.New(bedrockruntime.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String(srv.URL),
			Credentials:  credentials.NewStaticCredentialsProvider("AKIAFAKEEXAMPLEKEYID", "fake/secret/key/for/the/embedded/server", ""),
		}, record)
		model = "us.amazon.nova-micro-v1:0"
	}

	ctx = middleware.WithTrace(ctx, "example-conversation")
	messages := []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Say hello in five words."}}}}
	answer, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId:         aws.String(model),
		Messages:        messages,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(100)},
	})
	if err != nil {
		return err
	}
	reply, ok := answer.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return fmt.Errorf("unexpected output %T", answer.Output)
	}
	fmt.Fprintln(os.Stderr, "answer:", text(reply.Value))

	messages = append(messages, reply.Value, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Now count to three."}}})
	streamed, err := client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId:         aws.String(model),
		Messages:        messages,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(100)},
	})
	if err != nil {
		return err
	}
	stream := streamed.GetStream()
	fmt.Fprint(os.Stderr, "streamed: ")
	for ev := range stream.Events() {
		if d, ok := ev.(*types.ConverseStreamOutputMemberContentBlockDelta); ok {
			if t, ok := d.Value.Delta.(*types.ContentBlockDeltaMemberText); ok {
				fmt.Fprint(os.Stderr, t.Value)
			}
		}
	}
	fmt.Fprintln(os.Stderr)
	if err := stream.Close(); err != nil {
		return err
	}
	if err := stream.Err(); err != nil {
		return err
	}

	for _, r := range rec.History().Records() {
		if _, err := out.Write(append(r.AppendJSON(nil), '\n')); err != nil {
			return err
		}
	}
	return nil
}

func text(m types.Message) string {
	var sb strings.Builder
	for _, b := range m.Content {
		if t, ok := b.(*types.ContentBlockMemberText); ok {
			sb.WriteString(t.Value)
		}
	}
	return sb.String()
}

// fakeBedrock answers Converse and ConverseStream as Bedrock does (the
// shapes of testdata/providers/bedrock): a JSON answer with its stop reason
// and usage; or application/vnd.amazon.eventstream frames, from
// messageStart to metadata, encoded with the SDK's own encoder.
func fakeBedrock() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Amzn-Requestid", "5ef614ca-5045-4baf-995e-e27fb4cad3a7")
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/converse"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"metrics":{"latencyMs":412},"output":{"message":{"content":[{"text":"Hello there, nice to meet!"}],"role":"assistant"}},`+
				`"stopReason":"end_turn","usage":{"inputTokens":14,"outputTokens":9,"serverToolUsage":{},"totalTokens":23}}`)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/converse-stream"):
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			f, _ := w.(http.Flusher)
			enc := eventstream.NewEncoder()
			event := func(name string, payload any) {
				b, _ := json.Marshal(payload)
				var h eventstream.Headers
				h.Set(":event-type", eventstream.StringValue(name))
				h.Set(":content-type", eventstream.StringValue("application/json"))
				h.Set(":message-type", eventstream.StringValue("event"))
				var buf bytes.Buffer
				enc.Encode(&buf, eventstream.Message{Headers: h, Payload: b})
				w.Write(buf.Bytes())
				if f != nil {
					f.Flush()
				}
			}
			event("messageStart", map[string]any{"role": "assistant", "p": "abcdefgh"})
			for _, piece := range []string{"One", ", two", ", three."} {
				event("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]string{"text": piece}, "p": "abcd"})
			}
			event("contentBlockStop", map[string]any{"contentBlockIndex": 0, "p": "abcdefghij"})
			event("messageStop", map[string]any{"stopReason": "end_turn", "p": "abcdef"})
			event("metadata", map[string]any{"usage": map[string]int{"inputTokens": 30, "outputTokens": 6, "totalTokens": 36}, "metrics": map[string]int{"latencyMs": 388}})
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Amzn-ErrorType", "UnknownOperationException:http://internal.amazon.com/coral/com.amazon.coral.service/")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Unknown operation"}`)
		}
	})
}
