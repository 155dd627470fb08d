package anthropic_test

import (
	"context"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

// One meaning of a message across a turn: the answer a record keeps,
// read from a Message (whole, or put together from its stream), is the
// message the next request carries when the caller sends it back the
// SDK's way (Message.ToParam), with the tool's result after it.
func TestAnswerSentBack(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		stream      bool
	}{
		{"thinking and a tool call", "message_thinking_tool_use.json", false},
		{"a tool call", "message_tool_use.json", false},
		{"a stream of two tool calls", "stream_tool_use.sse", true},
		{"a stream with thinking", "stream_thinking.sse", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, []int{200, 200}, tc.first, "message.json")
			rec := newRecorder(t)
			c := client(srv.URL, rec.Client(nil))
			params := sdk.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 1024,
				System:   []sdk.TextBlockParam{{Text: "Be brief."}},
				Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Weather in Boston?"))},
			}
			var first sdk.Message
			var err error
			if tc.stream {
				first, err = stream(t, c, params)
			} else {
				var m *sdk.Message
				m, err = c.Messages.New(context.Background(), params)
				if m != nil {
					first = *m
				}
			}
			require.NoError(t, err)
			params.Messages = append(params.Messages, first.ToParam())
			var results []sdk.ContentBlockParamUnion
			for _, b := range first.Content {
				if b.Type == "tool_use" {
					results = append(results, sdk.NewToolResultBlock(b.ID, "72 and sunny", false))
				}
			}
			if len(results) > 0 {
				params.Messages = append(params.Messages, sdk.NewUserMessage(results...))
			}
			_, err = c.Messages.New(context.Background(), params)
			require.NoError(t, err)

			require.NoError(t, rec.Flush())
			rs := rec.History().Records()
			require.Len(t, rs, 2)
			if diff := providertest.SentBack(rs[0], rs[1]); diff != "" {
				t.Fatal(diff)
			}
			if len(results) > 0 {
				last := record.Messages(rs[1].Args)
				require.Equal(t, record.RoleTool, last[len(last)-1].Role, "a user turn of tool results is the tool's")
				require.Equal(t, record.SpeakerTool, rs[1].Speaker)
			}
		})
	}
}
