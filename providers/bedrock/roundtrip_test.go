package bedrock_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

// twoRecords returns the records of a tool loop's two calls.
func twoRecords(t *testing.T, rec *middleware.Recorder) (first, second record.Record) {
	t.Helper()
	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 2)
	return rs[0], rs[1]
}

// converseLoop makes a Converse tool loop through the SDK with no trace
// given: the question, the model's answer (a tool use) sent back as the
// SDK gave it, the tool's result, and the next call.
func converseLoop(t *testing.T, rec *middleware.Recorder, url string) {
	t.Helper()
	c := client(url, rec.Client(nil), 1)
	in := hello("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	first, err := c.Converse(context.Background(), in)
	require.NoError(t, err)
	answer := first.Output.(*types.ConverseOutputMemberMessage).Value
	in.Messages = append(in.Messages, answer)
	var results []types.ContentBlock
	for _, b := range answer.Content {
		if use, ok := b.(*types.ContentBlockMemberToolUse); ok {
			results = append(results, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: use.Value.ToolUseId,
				Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"temp": 72, "sky": "sunny"})}},
			}})
		}
	}
	require.NotEmpty(t, results, "the model asked for a tool")
	in.Messages = append(in.Messages, types.Message{Role: types.ConversationRoleUser, Content: results})
	_, err = c.Converse(context.Background(), in)
	require.NoError(t, err)
}

// One meaning of a message across a turn: the Converse answer a record
// keeps (a tool use) is the message the next request carries when the
// caller sends back the message the SDK gave it.
func TestAnswerSentBackConverse(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, body: testdata(t, "converse_tool_use_cache_write.json")}, reply{status: 200, body: testdata(t, "converse.json")})
	rec := newRecorder(t)
	converseLoop(t, rec, srv.URL)
	first, second := twoRecords(t, rec)
	if diff := providertest.SentBack(first, second); diff != "" {
		t.Fatal(diff)
	}
	assert.Equal(t, record.SpeakerTool, second.Speaker, "a user turn of tool results is the tool speaking")
}

// A Bedrock tool loop without WithTrace is one inferred conversation: the
// first call's answer, read from the response, and the same turn sent
// back, read from the next request, are one message. (Before the message
// model, the answer hashed apart from the toolUse the next request
// carried, and the loop split in two conversations.)
func TestToolLoopIsOneConversation(t *testing.T) {
	for _, opts := range [][]middleware.Option{nil, {middleware.WithoutOutput()}} {
		srv, _ := serve(t, reply{status: 200, body: testdata(t, "converse_tool_use_cache_write.json")}, reply{status: 200, body: testdata(t, "converse.json")})
		rec := newRecorder(t, opts...)
		converseLoop(t, rec, srv.URL)
		first, second := twoRecords(t, rec)
		require.NotEmpty(t, first.TraceID)
		assert.True(t, first.TraceInferred)
		assert.True(t, second.TraceInferred)
		assert.Equal(t, first.TraceID, second.TraceID, "one conversation, whether or not the record keeps the answer")
	}
}

// ConverseStream: the caller puts the message together from the stream's
// deltas, as its documentation shows, and sends it back.
func TestAnswerSentBackConverseStream(t *testing.T) {
	stream := frames(t, jsonlEvents(t, "converse_stream_tool_use.jsonl"))
	srv, _ := serve(t, reply{status: 200, body: stream, stream: true}, reply{status: 200, body: stream, stream: true})
	rec := newRecorder(t)
	c := client(srv.URL, rec.Client(nil), 1)
	in := hello("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	converse := func() types.Message {
		out, err := c.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: in.ModelId, System: in.System, Messages: in.Messages})
		require.NoError(t, err)
		var (
			blocks []types.ContentBlock
			text   strings.Builder
			input  strings.Builder
			use    *types.ToolUseBlockStart
		)
		s := out.GetStream()
		for ev := range s.Events() {
			switch e := ev.(type) {
			case *types.ConverseStreamOutputMemberContentBlockStart:
				if u, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
					use = &u.Value
				}
			case *types.ConverseStreamOutputMemberContentBlockDelta:
				switch d := e.Value.Delta.(type) {
				case *types.ContentBlockDeltaMemberText:
					text.WriteString(d.Value)
				case *types.ContentBlockDeltaMemberToolUse:
					input.WriteString(*d.Value.Input)
				}
			case *types.ConverseStreamOutputMemberContentBlockStop:
				switch {
				case use != nil:
					var args map[string]any
					require.NoError(t, json.Unmarshal([]byte(input.String()), &args))
					blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: use.ToolUseId, Name: use.Name, Input: document.NewLazyDocument(args)}})
					use = nil
					input.Reset()
				case text.Len() > 0:
					blocks = append(blocks, &types.ContentBlockMemberText{Value: text.String()})
					text.Reset()
				}
			}
		}
		require.NoError(t, s.Close())
		require.NoError(t, s.Err())
		return types.Message{Role: types.ConversationRoleAssistant, Content: blocks}
	}
	answer := converse()
	in.Messages = append(in.Messages, answer, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
		&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: answer.Content[1].(*types.ContentBlockMemberToolUse).Value.ToolUseId,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "72 and sunny"}}}}}})
	converse()
	first, second := twoRecords(t, rec)
	if diff := providertest.SentBack(first, second); diff != "" {
		t.Fatal(diff)
	}
	assert.Equal(t, first.TraceID, second.TraceID, "one conversation")
}

// InvokeModel with Claude's Messages body: the caller sends back the
// content the body gave it, as Anthropic's API takes it.
func TestAnswerSentBackInvokeModelClaude(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, body: testdata(t, "invoke_anthropic_tool_use.json")}, reply{status: 200, body: anthropicPayload(t, "message.json")})
	rec := newRecorder(t)
	c := client(srv.URL, rec.Client(nil), 1)
	messages := []any{map[string]any{"role": "user", "content": "Calculate 15 * 8"}}
	invoke := func() map[string]any {
		body, err := json.Marshal(map[string]any{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 512, "messages": messages})
		require.NoError(t, err)
		out, err := c.InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
			ModelId: aws.String("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), Body: body, ContentType: aws.String("application/json")})
		require.NoError(t, err)
		var got map[string]any
		require.NoError(t, json.Unmarshal(out.Body, &got))
		return got
	}
	got := invoke()
	messages = append(messages, map[string]any{"role": "assistant", "content": got["content"]})
	var results []any
	for _, b := range got["content"].([]any) {
		if b := b.(map[string]any); b["type"] == "tool_use" {
			results = append(results, map[string]any{"type": "tool_result", "tool_use_id": b["id"], "content": "120"})
		}
	}
	messages = append(messages, map[string]any{"role": "user", "content": results})
	invoke()
	first, second := twoRecords(t, rec)
	if diff := providertest.SentBack(first, second); diff != "" {
		t.Fatal(diff)
	}
}
