package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/bedrock"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

func TestRenderRoundTrip(t *testing.T) {
	msgs, answer := providertest.Conversation("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42)
	answer.ID = "" // Bedrock's is a header's
	kwargs := `{"model":"anthropic.claude-sonnet-5-v1:0","toolConfig":{"tools":["get_weather"],"toolChoice":{"auto":{}}},"inferenceConfig":{"maxTokens":300}}`
	withCalls := answer
	withCalls.Message = msgs[2]
	withCalls.FinishReason = "tool_use"
	reasoned := answer
	reasoned.Message.Parts = append([]record.Part{{Type: record.PartReasoning, Content: "Think."}}, reasoned.Message.Parts...)
	reasoned.Usage = &record.Usage{InputTokens: 10, OutputTokens: 9, TotalTokens: 19, CachedTokens: 4, CacheWriteTokens: 2}
	media := append(msgs[:2:2], record.Message{Role: record.RoleUser, Parts: []record.Part{
		{Type: record.PartText, Content: "What is this?"},
		{Type: record.PartMedia, MIMEType: "image/png", URI: "s3://bucket/a.png"},
		{Type: record.PartMedia, MIMEType: "document/pdf", Size: 99, Name: "terms"}}})
	answer.FinishReason = "end_turn"
	for name, c := range map[string]struct {
		msgs []record.Message
		a    providers.Answer
	}{
		"text":      {msgs, answer},
		"toolCalls": {msgs[:2], withCalls},
		"reasoning": {msgs, reasoned},
		"media":     {media, answer},
	} {
		for _, stream := range []bool{false, true} {
			kw := kwargs
			if stream {
				kw = `{"model":"anthropic.claude-sonnet-5-v1:0"}`
			}
			if diff := providertest.Rendered(bedrock.Provider{}, method(stream), c.msgs, []byte(kw), c.a, stream); diff != "" {
				t.Errorf("%s (stream %v): %s", name, stream, diff)
			}
		}
	}
}

func TestRenderRefusesOtherMethods(t *testing.T) {
	_, _, err := bedrock.Provider{}.RenderRequest(bedrock.MethodInvokeModel, nil, nil)
	if err == nil {
		t.Fatal("InvokeModel rendered (only Converse renders)")
	}
}

func FuzzRender(f *testing.F) {
	f.Add("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42, false)
	f.Add("<b>&</b> \u2028", "x", `"not json"`, 0, true)
	f.Fuzz(func(t *testing.T, text, tool, args string, tokens int, stream bool) {
		if !providertest.Strings(text, tool) || !providertest.Arguments(args) && strings.HasPrefix(strings.TrimSpace(args), "{") || tokens < 0 || tokens > 1<<30 {
			t.Skip()
		}
		msgs, a := providertest.Conversation(text, tool, args, tokens)
		a.ID = ""
		if diff := providertest.Rendered(bedrock.Provider{}, method(stream), msgs, []byte(`{"model":"m"}`), a, stream); diff != "" {
			t.Fatal(diff)
		}
	})
}

func method(stream bool) string {
	if stream {
		return bedrock.MethodConverseStream
	}
	return bedrock.MethodConverse
}

// The AWS SDK reads a rendered ConverseStream (AppendFrame's framing, the
// events' shapes) as it reads Bedrock's: the text, the tool use, the stop
// reason and the usage.
func TestRenderedStreamThroughTheSDK(t *testing.T) {
	a := providers.Answer{Model: "m", FinishReason: "tool_use",
		Message: record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: "Checking."},
			{Type: record.PartToolCall, ID: "tooluse_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
		Usage: &record.Usage{InputTokens: 12, OutputTokens: 5, TotalTokens: 17}}
	_, frames, err := bedrock.Provider{}.RenderResponse(bedrock.MethodConverseStream, a, true)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, reply{status: 200, body: bytes.Join(frames, nil), stream: true})
	out, err := client(srv.URL, srv.Client(), 1).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("m"), Messages: hello("").Messages})
	if err != nil {
		t.Fatal(err)
	}
	var text, input, stop string
	var usage *types.TokenUsage
	stream := out.GetStream()
	for ev := range stream.Events() {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				text += d.Value
			case *types.ContentBlockDeltaMemberToolUse:
				input += *d.Value.Input
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = string(e.Value.StopReason)
		case *types.ConverseStreamOutputMemberMetadata:
			usage = e.Value.Usage
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text != "Checking." || input != `{"city":"Paris"}` || stop != "tool_use" || usage == nil || *usage.InputTokens != 12 || *usage.OutputTokens != 5 {
		t.Errorf("text %q, input %q, stop %q, usage %+v", text, input, stop, usage)
	}
}
