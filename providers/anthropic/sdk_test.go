package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/record"
)

// fakeKey has the shape of an Anthropic key; it is no key.
const fakeKey = "sk-ant-api03-TESTONLYxNotARealKeyx0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP-TESTONLYAA"

// replay answers the n-th request with the n-th status and body (the last
// ones again after that), and keeps what it was sent.
type replay struct {
	status []int
	body   [][]byte
	mu     sync.Mutex
	got    []http.Header
	bodies [][]byte
}

func (p *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.got = append(p.got, r.Header.Clone())
	p.bodies = append(p.bodies, b)
	i := min(len(p.got), len(p.status)) - 1
	p.mu.Unlock()
	if bytes.HasPrefix(p.body[i], []byte("event:")) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Request-Id", "req_test")
	if p.status[i] >= 400 {
		// The SDK waits as long as the server asks: 1 ms instead of its
		// backoff of 0.5 s and more.
		w.Header().Set("Retry-After-Ms", "1")
	}
	w.WriteHeader(p.status[i])
	w.Write(p.body[i])
}

func (p *replay) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

func serve(t *testing.T, status []int, files ...string) (*httptest.Server, *replay) {
	t.Helper()
	p := &replay{status: status}
	for _, f := range files {
		p.body = append(p.body, testdata(t, f))
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv, p
}

func newRecorder(t *testing.T, opts ...middleware.Option) *middleware.Recorder {
	t.Helper()
	opts = append([]middleware.Option{middleware.WithProviders(anthropic.Provider{}), middleware.WithSyncSinks(), middleware.WithDedupWindow(0)}, opts...)
	rec := middleware.NewRecorder(opts...)
	t.Cleanup(func() { rec.Close() })
	return rec
}

// client is the SDK's client without retries (unless opts say otherwise).
func client(url string, hc *http.Client, opts ...option.RequestOption) *sdk.Client {
	c := sdk.NewClient(append([]option.RequestOption{option.WithBaseURL(url), option.WithAPIKey(fakeKey), option.WithHTTPClient(hc), option.WithMaxRetries(0)}, opts...)...)
	return &c
}

func only(t *testing.T, rec *middleware.Recorder) record.Record {
	t.Helper()
	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 1, "exactly one record")
	require.NoError(t, rs[0].Validate())
	return rs[0]
}

var hello = sdk.MessageNewParams{
	Model:     "claude-3-opus-20240229",
	MaxTokens: 100,
	System:    []sdk.TextBlockParam{{Text: "Be kind."}},
	Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Hello, how are you?"))},
	Metadata:  sdk.MetadataParam{UserID: sdk.String("user-8d1f")},
}

func TestSDKMessage(t *testing.T) {
	srv, _ := serve(t, []int{200}, "message.json")
	rec := newRecorder(t)
	got, err := client(srv.URL, rec.Client(nil)).Messages.New(context.Background(), hello)
	require.NoError(t, err)
	want, err := client(srv.URL, http.DefaultClient).Messages.New(context.Background(), hello)
	require.NoError(t, err)
	assert.Equal(t, want.RawJSON(), got.RawJSON(), "same result with and without the recorder")
	assert.Equal(t, want.Content[0].Text, got.Content[0].Text)

	r := only(t, rec)
	assert.Equal(t, anthropic.MethodCreate, r.MethodName)
	assert.Equal(t, "user", r.Speaker)
	assert.JSONEq(t, `[{"role":"system","parts":[{"type":"text","content":"Be kind."}]},{"role":"user","parts":[{"type":"text","content":"Hello, how are you?"}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"claude-3-opus-20240229","max_tokens":100}`, string(r.Kwargs), "metadata is left out")
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "message", HTTPStatus: 200, FinishReason: "end_turn", ResponseID: "msg_014pVpaDLxzAdWjwpuN7rQQX"}, r.Outcome)
	assert.Equal(t, "claude-3-opus-20240229", r.Model)
	assert.Equal(t, &record.Usage{InputTokens: 13, OutputTokens: 35, TotalTokens: 48}, r.Usage)
}

// stream reads a Messages stream to its end and accumulates it, as the
// SDK's documentation does.
func stream(t *testing.T, c *sdk.Client, params sdk.MessageNewParams) (sdk.Message, error) {
	t.Helper()
	s := c.Messages.NewStreaming(context.Background(), params)
	defer s.Close()
	var msg sdk.Message
	for s.Next() {
		require.NoError(t, msg.Accumulate(s.Current()))
	}
	return msg, s.Err()
}

func TestSDKStream(t *testing.T) {
	srv, _ := serve(t, []int{200}, "stream_text.sse")
	rec := newRecorder(t)
	got, err := stream(t, client(srv.URL, rec.Client(nil)), hello)
	require.NoError(t, err)
	want, err := stream(t, client(srv.URL, http.DefaultClient), hello)
	require.NoError(t, err)
	assert.Equal(t, want.Content[0].Text, got.Content[0].Text)
	assert.Equal(t, "1\n2\n3\n4\n5", got.Content[0].Text)
	assert.Equal(t, want.Usage.OutputTokens, got.Usage.OutputTokens)

	r := only(t, rec)
	assert.Equal(t, anthropic.MethodCreate, r.MethodName)
	assert.JSONEq(t, `{"model":"claude-3-opus-20240229","max_tokens":100,"stream":true}`, string(r.Kwargs))
	assert.True(t, r.Outcome.OK, "%+v %s", r.Outcome, r.ErrorMessage)
	assert.Equal(t, "end_turn", r.Outcome.FinishReason)
	assert.Equal(t, "msg_01Ju7oPaDmjgrhWq8gNP4AUj", r.Outcome.ResponseID)
	assert.Equal(t, &record.Usage{InputTokens: 15, OutputTokens: 13, TotalTokens: 28}, r.Usage, "message_delta's usage replaces message_start's")
}

func TestSDKToolUse(t *testing.T) {
	srv, p := serve(t, []int{200}, "message_tool_use.json")
	rec := newRecorder(t)
	c := client(srv.URL, rec.Client(nil))
	params := sdk.MessageNewParams{
		Model:     "claude-haiku-4-5",
		MaxTokens: 2048,
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("What is the weather in Boston?"))},
		Tools: []sdk.ToolUnionParam{
			{OfTool: &sdk.ToolParam{Name: "getCurrentWeather", Description: sdk.String("Get the current weather in a given location"),
				InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"location": map[string]any{"type": "string"}}}}},
			{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{}},
		},
		ToolChoice: sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}},
	}
	msg, err := c.Messages.New(context.Background(), params)
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonToolUse, msg.StopReason)
	use := msg.Content[0].AsToolUse()

	// The tool's answer goes back as a tool_result block of a user turn.
	params.Messages = append(params.Messages, msg.ToParam(), sdk.NewUserMessage(sdk.NewToolResultBlock(use.ID, "72 and sunny", false)))
	_, err = c.Messages.New(context.Background(), params)
	require.NoError(t, err)
	require.Equal(t, 2, p.requests())

	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 2)
	assert.Equal(t, "user", rs[0].Speaker)
	assert.Equal(t, "tool", rs[1].Speaker, "a turn of tool results is the tool speaking")
	assert.Equal(t, "tool_use", rs[0].Outcome.FinishReason)
	var kw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rs[0].Kwargs, &kw))
	assert.JSONEq(t, `["getCurrentWeather","web_search"]`, string(kw["tools"]), "tools as names")
	assert.JSONEq(t, `{"type":"auto"}`, string(kw["tool_choice"]))
	assert.Equal(t, &record.Usage{InputTokens: 604, OutputTokens: 56, TotalTokens: 660}, rs[0].Usage)
}

func TestSDKThinkingStream(t *testing.T) {
	srv, _ := serve(t, []int{200}, "stream_thinking.sse")
	rec := newRecorder(t, middleware.WithOutput())
	params := sdk.MessageNewParams{
		Model:       "claude-sonnet-4-5",
		MaxTokens:   4096,
		Temperature: sdk.Float(1),
		Thinking:    sdk.ThinkingConfigParamOfEnabled(2048),
		Messages:    []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("What is 5 + 3? Think step by step."))},
	}
	got, err := stream(t, client(srv.URL, rec.Client(nil)), params)
	require.NoError(t, err)
	require.Len(t, got.Content, 2)
	assert.Equal(t, "thinking", got.Content[0].Type)

	r := only(t, rec)
	assert.JSONEq(t, `{"model":"claude-sonnet-4-5","max_tokens":4096,"temperature":1,"thinking":{"budget_tokens":2048,"type":"enabled"},"stream":true}`, string(r.Kwargs))
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, &record.Usage{InputTokens: 50, OutputTokens: 211, TotalTokens: 261}, r.Usage)
	assert.Equal(t, got.Content[1].Text, r.Output.Text(), "the text, without the thinking")
	assert.Equal(t, got.Content[0].Thinking, r.Output.Reasoning(), "the thinking is the reasoning")
}

func TestSDKRetryAfter529IsOneRecord(t *testing.T) {
	srv, p := serve(t, []int{529, 200}, "error_529_overloaded.json", "message.json")
	rec := newRecorder(t, middleware.WithDedupWindow(10*time.Second))
	start := time.Now()
	got, err := client(srv.URL, rec.Client(nil), option.WithMaxRetries(2)).Messages.New(context.Background(), hello)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 350*time.Millisecond, "Retry-After-Ms: 1 replaces the SDK's backoff of at least 375 ms")
	assert.Equal(t, "end_turn", string(got.StopReason))
	require.Equal(t, 2, p.requests())
	assert.Equal(t, "1", p.got[1].Get("X-Stainless-Retry-Count"))

	r := only(t, rec)
	assert.Equal(t, 2, r.Attempts)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
	assert.Equal(t, 48, r.Usage.TotalTokens)
}

func TestSDKOverloadedIsRetriable(t *testing.T) {
	srv, _ := serve(t, []int{529}, "error_529_overloaded.json")
	rec := newRecorder(t)
	_, err := client(srv.URL, rec.Client(nil)).Messages.New(context.Background(), hello)
	var apiErr *sdk.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 529, apiErr.StatusCode)

	r := only(t, rec)
	assert.Equal(t, record.ErrorOverloaded, r.ErrorType)
	assert.True(t, r.Outcome.Retriable)
	assert.Equal(t, "Overloaded", r.ErrorMessage)
}

func TestSDKErrorMidStream(t *testing.T) {
	srv, _ := serve(t, []int{200}, "stream_error_midstream.sse")
	rec := newRecorder(t)
	_, gotErr := stream(t, client(srv.URL, rec.Client(nil)), hello)
	_, wantErr := stream(t, client(srv.URL, http.DefaultClient), hello)
	require.Error(t, gotErr)
	assert.Equal(t, wantErr.Error(), gotErr.Error(), "the SDK sees the same error")
	var apiErr *sdk.Error
	require.ErrorAs(t, gotErr, &apiErr)

	r := only(t, rec)
	assert.Equal(t, record.ErrorOverloaded, r.ErrorType)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
	assert.Equal(t, "Overloaded", r.ErrorMessage)
	assert.Equal(t, "msg_01Ju7oPaDmjgrhWq8gNP4AUj", r.Outcome.ResponseID)
}

// A stream whose connection ends before message_stop: the SDK ends its
// loop without an error, the record says the answer is incomplete.
func TestSDKStreamWithoutMessageStop(t *testing.T) {
	full := testdata(t, "stream_text.sse")
	cut := full[:bytes.LastIndex(full, []byte("event: message_stop"))]
	p := &replay{status: []int{200}, body: [][]byte{cut}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	rec := newRecorder(t)
	msg, err := stream(t, client(srv.URL, rec.Client(nil)), hello)
	require.NoError(t, err, "nothing tells the SDK")
	assert.Equal(t, "1\n2\n3\n4\n5", msg.Content[0].Text)

	r := only(t, rec)
	assert.False(t, r.Outcome.OK)
	assert.Equal(t, record.ErrorIncomplete, r.ErrorType)
	assert.Equal(t, "end_turn", r.Outcome.FinishReason)
}

func TestSDKCountTokens(t *testing.T) {
	p := &replay{status: []int{200}, body: [][]byte{[]byte(`{"input_tokens":14}`)}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	rec := newRecorder(t)
	got, err := client(srv.URL, rec.Client(nil)).Messages.CountTokens(context.Background(), sdk.MessageCountTokensParams{
		Model:    "claude-sonnet-4-5",
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Hello"))},
	})
	require.NoError(t, err)
	assert.Equal(t, int64(14), got.InputTokens)

	r := only(t, rec)
	assert.Equal(t, anthropic.MethodCountTokens, r.MethodName)
	assert.Equal(t, record.Success("count_tokens").ValueClass, r.Outcome.ValueClass)
	assert.Nil(t, r.Usage, "counting spends no tokens")
}

// Secrets: the key in the x-api-key header and one pasted into a message
// never reach the record.
func TestSDKKeyNeverRecorded(t *testing.T) {
	srv, p := serve(t, []int{200}, "message.json")
	rec := newRecorder(t, middleware.WithOutput())
	params := hello
	params.Messages = []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Why does my key " + fakeKey + " not work?"))}
	_, err := client(srv.URL, rec.Client(nil)).Messages.New(context.Background(), params)
	require.NoError(t, err)
	require.Equal(t, fakeKey, p.got[0].Get("X-Api-Key"), "the SDK sent the key")
	require.Contains(t, string(p.bodies[0]), fakeKey, "and the message as written")

	r := only(t, rec)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.NotContains(t, string(b), fakeKey)
	assert.NotContains(t, string(b), "TESTONLY")
	assert.Contains(t, string(r.Args), "Why does my key [REDACTED] not work?")
}

// Claude on Vertex AI, as its SDK sends it: the model in the URL,
// anthropic_version in the body. (The SDK's vertex package needs
// golang.org/x/oauth2, which this module does not require; a plain client
// sends the same request.)
func TestVertexStreamRawPredict(t *testing.T) {
	srv, _ := serve(t, []int{200}, "stream_thinking.sse")
	rec := newRecorder(t)
	body := `{"anthropic_version":"vertex-2023-10-16","max_tokens":4096,"messages":[{"role":"user","content":"What is 5 + 3?"}],"stream":true}`
	resp, err := rec.Client(nil).Post(srv.URL+"/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	r := only(t, rec)
	assert.Equal(t, anthropic.MethodCreate, r.MethodName)
	assert.Equal(t, `{"model":"claude-sonnet-4-5@20250929","anthropic_version":"vertex-2023-10-16","max_tokens":4096,"stream":true}`, string(r.Kwargs))
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, 261, r.Usage.TotalTokens)
}
