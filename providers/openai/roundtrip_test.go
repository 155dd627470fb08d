package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

// One meaning of a message across a turn: the answer a record keeps,
// read from the response, is the message the next request carries when
// the caller sends the answer back the SDK's way. Each case is a tool
// loop: the first answer calls tools (and reasons), the caller sends it
// back with the tools' results, and the second call is recorded.

// turns serves bodies in order (the last one again after that), with
// contentType, and counts the calls.
func turns(t *testing.T, contentType string, bodies ...[]byte) *httptest.Server {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		i := min(int(n.Add(1))-1, len(bodies)-1)
		w.Header().Set("Content-Type", contentType)
		w.Write(bodies[i])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// sentBack checks the two records a tool loop left.
func sentBack(t *testing.T, rec *middleware.Recorder) {
	t.Helper()
	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 2)
	if diff := providertest.SentBack(rs[0], rs[1]); diff != "" {
		t.Fatal(diff)
	}
}

func TestAnswerSentBackGoOpenAI(t *testing.T) {
	for _, file := range []string{"openai_chat_response_tool_calls.json", "chat_response_reasoning_content_tool_calls.json"} {
		t.Run(file, func(t *testing.T) {
			srv := turns(t, "application/json", testdata(t, file), testdata(t, "openai_chat_response.json"))
			rec := recorderFor(t)
			c := goOpenAI(srv.URL, rec.Client(nil))
			req := goopenai.ChatCompletionRequest{Model: "gpt-4o", Messages: []goopenai.ChatCompletionMessage{
				{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Weather in Edinburgh, and AAPL?"}}}
			first, err := c.CreateChatCompletion(context.Background(), req)
			require.NoError(t, err)
			answer := first.Choices[0].Message
			require.NotEmpty(t, answer.ToolCalls)
			req.Messages = append(req.Messages, answer)
			for _, tc := range answer.ToolCalls {
				req.Messages = append(req.Messages, goopenai.ChatCompletionMessage{Role: "tool", ToolCallID: tc.ID, Content: "done"})
			}
			_, err = c.CreateChatCompletion(context.Background(), req)
			require.NoError(t, err)
			sentBack(t, rec)
		})
	}
}

func openaiGo(url string, hc *http.Client) openaisdk.Client {
	return openaisdk.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
}

func TestAnswerSentBackOpenAIGoChat(t *testing.T) {
	srv := turns(t, "application/json", testdata(t, "openai_chat_response_tool_calls.json"), testdata(t, "openai_chat_response.json"))
	rec := recorderFor(t)
	c := openaiGo(srv.URL, rec.Client(nil))
	params := openaisdk.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openaisdk.ChatCompletionMessageParamUnion{
		openaisdk.SystemMessage("Be brief."), openaisdk.UserMessage("Weather in Edinburgh, and AAPL?")}}
	first, err := c.Chat.Completions.New(context.Background(), params)
	require.NoError(t, err)
	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam())
	for _, tc := range first.Choices[0].Message.ToolCalls {
		params.Messages = append(params.Messages, openaisdk.ToolMessage("done", tc.ID))
	}
	_, err = c.Chat.Completions.New(context.Background(), params)
	require.NoError(t, err)
	sentBack(t, rec)
}

// A streamed answer, put together by the SDK's accumulator, is sent back
// as the recorder put it together from the same stream.
func TestAnswerSentBackOpenAIGoStream(t *testing.T) {
	srv := turns(t, "text/event-stream", testdata(t, "openai_chat_stream_parallel_tools.sse"), testdata(t, "openai_chat_stream.sse"))
	rec := recorderFor(t)
	c := openaiGo(srv.URL, rec.Client(nil))
	params := openaisdk.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("Weather in three cities?")}}
	accumulate := func() openaisdk.ChatCompletion {
		stream := c.Chat.Completions.NewStreaming(context.Background(), params)
		var acc openaisdk.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		require.NoError(t, stream.Err())
		return acc.ChatCompletion
	}
	first := accumulate()
	require.NotEmpty(t, first.Choices[0].Message.ToolCalls)
	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam())
	for _, tc := range first.Choices[0].Message.ToolCalls {
		params.Messages = append(params.Messages, openaisdk.ToolMessage("sunny", tc.ID))
	}
	accumulate()
	sentBack(t, rec)
}

// The Responses API: the output items (reasoning, a message, a function
// call) sent back as input items, as openai-go's ToParam makes them,
// then the call's output.
func TestAnswerSentBackOpenAIGoResponses(t *testing.T) {
	first := `{"id":"resp_1","object":"response","created_at":1757686449,"status":"completed","model":"o4-mini","output":[` +
		`{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAAB","summary":[{"type":"summary_text","text":"**Weather first**\n\nLook it up."},{"type":"summary_text","text":"Then answer."}]},` +
		`{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Let me check."}]},` +
		`{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"get_weather","arguments":"{\"city\": \"Paris\", \"unit\": \"c\"}"}],` +
		`"usage":{"input_tokens":20,"output_tokens":30,"total_tokens":50}}`
	second := `{"id":"resp_2","object":"response","created_at":1757686450,"status":"completed","model":"o4-mini","output":[` +
		`{"id":"msg_2","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"18 °C in Paris."}]}],` +
		`"usage":{"input_tokens":40,"output_tokens":8,"total_tokens":48}}`
	srv := turns(t, "application/json", []byte(first), []byte(second))
	rec := recorderFor(t)
	c := openaiGo(srv.URL, rec.Client(nil))
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser)}
	params := responses.ResponseNewParams{Model: "o4-mini", Instructions: openaisdk.String("Be brief."), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}}
	resp, err := c.Responses.New(context.Background(), params)
	require.NoError(t, err)
	for _, item := range resp.Output {
		switch item.Type {
		case "reasoning":
			p := item.AsReasoning().ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfReasoning: &p})
		case "message":
			p := item.AsMessage().ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfOutputMessage: &p})
		case "function_call":
			call := item.AsFunctionCall()
			p := call.ToParam()
			out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp":18}`)
			out.OfFunctionCallOutput.CallID = openaisdk.String(call.CallID)
			input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &p}, out)
		}
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	_, err = c.Responses.New(context.Background(), params)
	require.NoError(t, err)
	sentBack(t, rec)

	rs := rec.History().Records()
	require.Len(t, rs, 2)
	kept := rs[0].Output
	require.NotNil(t, kept)
	require.Equal(t, []string{record.PartReasoning, record.PartText, record.PartToolCall}, types(kept), "one turn of the assistant, in the order of its items")
	require.Equal(t, "**Weather first**\n\nLook it up.\n\nThen answer.", kept.Reasoning())
	require.True(t, strings.HasPrefix(string(rs[1].Args), `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]}`), "the instructions first")
}

func types(m *record.Message) []string {
	var out []string
	for _, p := range m.Parts {
		out = append(out, p.Type)
	}
	return out
}
