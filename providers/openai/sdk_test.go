package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// replay serves a captured payload with the given status and content type,
// and counts requests.
type replay struct {
	status      []int
	body        [][]byte
	contentType string
	n           atomic.Int32
}

func (p *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	i := min(int(p.n.Add(1))-1, len(p.status)-1)
	w.Header().Set("Content-Type", p.contentType)
	if p.status[i] >= 400 {
		w.Header().Set("Retry-After-Ms", "1")
	}
	w.WriteHeader(p.status[i])
	w.Write(p.body[i])
}

func serveFile(t *testing.T, status int, file, contentType string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(&replay{status: []int{status}, body: [][]byte{testdata(t, file)}, contentType: contentType})
	t.Cleanup(srv.Close)
	return srv
}

func recorderFor(t *testing.T) *middleware.Recorder {
	t.Helper()
	rec := middleware.NewRecorder(middleware.WithDedupWindow(0))
	t.Cleanup(func() { rec.Close() })
	return rec
}

func only(t *testing.T, rec *middleware.Recorder) record.Record {
	t.Helper()
	rs := rec.History().Records()
	require.Len(t, rs, 1, "exactly one record")
	require.NoError(t, rs[0].Validate())
	return rs[0]
}

func goOpenAI(url string, hc *http.Client) *goopenai.Client {
	cfg := goopenai.DefaultConfig("sk-test-0123456789abcdefghijklmn")
	cfg.BaseURL = url + "/v1"
	cfg.HTTPClient = hc
	return goopenai.NewClientWithConfig(cfg)
}

var chatReq = goopenai.ChatCompletionRequest{
	Model:    "gpt-3.5-turbo",
	Messages: []goopenai.ChatCompletionMessage{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "How are you?"}},
}

func TestGoOpenAIChat(t *testing.T) {
	srv := serveFile(t, 200, "openai_chat_response.json", "application/json")
	rec := recorderFor(t)
	got, err := goOpenAI(srv.URL, rec.Client(nil)).CreateChatCompletion(context.Background(), chatReq)
	require.NoError(t, err)
	want, err := goOpenAI(srv.URL, http.DefaultClient).CreateChatCompletion(context.Background(), chatReq)
	require.NoError(t, err)
	got.SetHeader(nil)
	want.SetHeader(nil)
	assert.Equal(t, want, got, "same result with and without the recorder")

	r := only(t, rec)
	assert.Equal(t, "openai.chat.completions.create", r.MethodName)
	assert.JSONEq(t, `[`+text("system", "Be kind.")+`,`+text("user", "How are you?")+`]`, string(r.Args))
	assert.JSONEq(t, `{"model":"gpt-3.5-turbo","stream":false}`, string(r.Kwargs), "go-openai sends stream:false itself")
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "chat.completion", HTTPStatus: 200, FinishReason: "stop", ResponseID: "chatcmpl-C6bhxDl79vlojU2DYKbzyDh0FmLZY"}, r.Outcome)
	assert.Equal(t, "gpt-3.5-turbo-0125", r.Model)
	assert.Equal(t, &record.Usage{InputTokens: 13, OutputTokens: 31, TotalTokens: 44}, r.Usage)
	assert.Equal(t, "user", r.Speaker)
}

func TestGoOpenAIStreamWithToolCalls(t *testing.T) {
	srv := serveFile(t, 200, "openai_chat_stream.sse", "text/event-stream")
	req := chatReq
	req.Stream = true
	req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	readAll := func(hc *http.Client) (args string, usage int) {
		s, err := goOpenAI(srv.URL, hc).CreateChatCompletionStream(context.Background(), req)
		require.NoError(t, err)
		defer s.Close()
		for {
			chunk, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return args, usage
			}
			require.NoError(t, err)
			for _, c := range chunk.Choices {
				for _, tc := range c.Delta.ToolCalls {
					args += tc.Function.Arguments
				}
			}
			if chunk.Usage != nil {
				usage = chunk.Usage.TotalTokens
			}
		}
	}
	rec := recorderFor(t)
	gotArgs, gotUsage := readAll(rec.Client(nil))
	wantArgs, wantUsage := readAll(http.DefaultClient)
	assert.Equal(t, wantArgs, gotArgs)
	assert.Equal(t, wantUsage, gotUsage)
	assert.Equal(t, `{"city":"New York City"}`, gotArgs)

	r := only(t, rec)
	assert.True(t, r.Outcome.OK, "%+v %s", r.Outcome, r.ErrorMessage)
	assert.Equal(t, "tool_calls", r.Outcome.FinishReason)
	assert.Equal(t, 60, r.Usage.TotalTokens)
	assert.JSONEq(t, `{"model":"gpt-3.5-turbo","stream":true,"stream_options":{"include_usage":true}}`, string(r.Kwargs))
}

func TestGoOpenAIEmbeddings(t *testing.T) {
	body := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,-0.5]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":3,"total_tokens":3}}`
	srv := httptest.NewServer(&replay{status: []int{200}, body: [][]byte{[]byte(body)}, contentType: "application/json"})
	defer srv.Close()
	rec := recorderFor(t)
	req := goopenai.EmbeddingRequest{Input: []string{"hello"}, Model: goopenai.SmallEmbedding3}
	got, err := goOpenAI(srv.URL, rec.Client(nil)).CreateEmbeddings(context.Background(), req)
	require.NoError(t, err)
	want, err := goOpenAI(srv.URL, http.DefaultClient).CreateEmbeddings(context.Background(), req)
	require.NoError(t, err)
	got.SetHeader(nil)
	want.SetHeader(nil)
	assert.Equal(t, want, got)

	r := only(t, rec)
	assert.Equal(t, "openai.embeddings.create", r.MethodName)
	assert.Equal(t, "list", r.Outcome.ValueClass)
	assert.JSONEq(t, `[`+text("user", "hello")+`]`, string(r.Args))
	assert.Equal(t, 3, r.Usage.TotalTokens)
}

func TestGoOpenAIErrors(t *testing.T) {
	tests := []struct {
		status   int
		file     string
		body     string
		wantType string
	}{
		{429, "openai_error_429.json", "", record.ErrorRateLimit},
		{401, "", `{"error":{"message":"Incorrect API key provided: sk-test***lmn.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, record.ErrorAuth},
		{500, "", `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, record.ErrorServer},
	}
	for _, tt := range tests {
		t.Run(tt.wantType, func(t *testing.T) {
			body := []byte(tt.body)
			if tt.file != "" {
				body = testdata(t, tt.file)
			}
			srv := httptest.NewServer(&replay{status: []int{tt.status}, body: [][]byte{body}, contentType: "application/json"})
			defer srv.Close()
			rec := recorderFor(t)
			_, gotErr := goOpenAI(srv.URL, rec.Client(nil)).CreateChatCompletion(context.Background(), chatReq)
			_, wantErr := goOpenAI(srv.URL, http.DefaultClient).CreateChatCompletion(context.Background(), chatReq)
			require.Error(t, gotErr)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), "the SDK sees the same error")
			var apiErr *goopenai.APIError
			require.ErrorAs(t, gotErr, &apiErr)

			r := only(t, rec)
			assert.Equal(t, tt.wantType, r.ErrorType)
			assert.Equal(t, tt.status, r.Outcome.HTTPStatus)
			assert.Equal(t, apiErr.Message, r.ErrorMessage)
		})
	}
}

func TestOpenAISDKRetryIsOneRecord(t *testing.T) {
	srv := httptest.NewServer(&replay{
		status:      []int{429, 200},
		body:        [][]byte{testdata(t, "openai_error_429.json"), testdata(t, "openai_chat_response.json")},
		contentType: "application/json",
	})
	defer srv.Close()
	rec := middleware.NewRecorder() // the default dedup window
	defer rec.Close()
	client := openaisdk.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithHTTPClient(rec.Client(nil)))
	got, err := client.Chat.Completions.New(context.Background(), openaisdk.ChatCompletionNewParams{
		Model:    "gpt-3.5-turbo",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("How are you?")},
	})
	require.NoError(t, err)
	assert.Equal(t, int64(44), got.Usage.TotalTokens)

	r := only(t, rec)
	assert.Equal(t, 2, r.Attempts)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, "openai.chat.completions.create", r.MethodName)
}

func TestOpenAISDKResponses(t *testing.T) {
	srv := serveFile(t, 200, "openai_responses_response.json", "application/json")
	rec := recorderFor(t)
	params := responses.ResponseNewParams{
		Model:        "gpt-4o-mini",
		Instructions: openaisdk.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openaisdk.String("What is the weather in San Francisco?")},
	}
	newClient := func(hc *http.Client) openaisdk.Client {
		return openaisdk.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithHTTPClient(hc))
	}
	c := newClient(rec.Client(nil))
	got, err := c.Responses.New(context.Background(), params)
	require.NoError(t, err)
	bare := newClient(http.DefaultClient)
	want, err := bare.Responses.New(context.Background(), params)
	require.NoError(t, err)
	assert.Equal(t, want.OutputText(), got.OutputText())
	assert.Equal(t, want.RawJSON(), got.RawJSON())

	r := only(t, rec)
	assert.Equal(t, "openai.responses.create", r.MethodName)
	assert.JSONEq(t, `[`+text("system", "Be brief.")+`,`+text("user", "What is the weather in San Francisco?")+`]`, string(r.Args))
	assert.Equal(t, "response", r.Outcome.ValueClass)
	assert.Equal(t, 64, r.Usage.TotalTokens)
}
