package ollama_test

import (
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

// One meaning of a message across a turn: the answer a record keeps (the
// model's thinking and two tool calls) is the message the next request
// carries when the caller sends back the message Ollama's client gave it,
// then the tools' results; and a streamed answer, put together by the
// caller from its pieces, likewise.
func TestAnswerSentBack(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		stream      bool
	}{
		{"thinking and tool calls", "chat_thinking_tool_calls.json", false},
		{"a stream", "chat_stream.ndjson", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, reply{status: 200, body: testdata(t, tc.first)}, reply{status: 200, body: testdata(t, "chat_stream.ndjson")})
			rec := newRecorder(t)
			c := client(t, srv.URL, rec.Client(nil))
			req := &api.ChatRequest{Model: "qwen3.5:35b", Stream: &tc.stream,
				Messages: []api.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Read the two clients."}}}
			text, last, err := chat(t, c, req)
			require.NoError(t, err)
			answer := last.Message
			if tc.stream {
				answer = api.Message{Role: "assistant", Content: text} // the pieces, put together
			}
			req.Messages = append(req.Messages, answer)
			for _, call := range answer.ToolCalls {
				req.Messages = append(req.Messages, api.Message{Role: "tool", ToolName: call.Function.Name, Content: "class Client {}"})
			}
			req.Messages = append(req.Messages, api.Message{Role: "user", Content: "Now compare them."})
			_, _, err = chat(t, c, req)
			require.NoError(t, err)

			require.NoError(t, rec.Flush())
			rs := rec.History().Records()
			require.Len(t, rs, 2)
			if diff := providertest.SentBack(rs[0], rs[1]); diff != "" {
				t.Fatal(diff)
			}
			if !tc.stream {
				require.Equal(t, []string{record.PartReasoning, record.PartToolCall, record.PartToolCall}, types(rs[0].Output))
			}
		})
	}
}

func types(m *record.Message) []string {
	var out []string
	for _, p := range m.Parts {
		out = append(out, p.Type)
	}
	return out
}
