package middleware_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

const geminiResponse = `{"candidates":[{"content":{"parts":[{"text":"Hi there"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7},"modelVersion":"gemini-2.0-flash","responseId":"r-1"}`

// scripted answers requests with the given responses in turn, the last
// one repeated, and counts the requests it saw.
type scripted struct {
	n         atomic.Int32
	responses []struct {
		status int
		body   string
		header map[string]string
	}
	bodies chan string
}

func (s *scripted) add(status int, body string, header map[string]string) *scripted {
	s.responses = append(s.responses, struct {
		status int
		body   string
		header map[string]string
	}{status, body, header})
	return s
}

func (s *scripted) start(t *testing.T) *httptest.Server {
	s.bodies = make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.bodies <- string(b)
		i := int(s.n.Add(1)) - 1
		resp := s.responses[min(i, len(s.responses)-1)]
		for k, v := range resp.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(resp.status)
		io.WriteString(w, resp.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func goOpenAIClient(base string, hc *http.Client) *goopenai.Client {
	cfg := goopenai.DefaultConfig("sk-test-goopenai-0123456789abcdef")
	cfg.BaseURL = base + "/v1"
	cfg.HTTPClient = hc
	return goopenai.NewClientWithConfig(cfg)
}

func TestGoOpenAI(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	req := goopenai.ChatCompletionRequest{
		Model:    "gpt-4o-mini",
		Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "Hello"}},
	}
	got, err := goOpenAIClient(srv.URL, e.client).CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	bare, err := goOpenAIClient(srv.URL, http.DefaultClient).CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	got.SetHeader(nil)
	bare.SetHeader(nil)
	assert.Equal(t, bare, got, "the SDK returns the same with and without the recorder")

	r := one(t, e)
	assert.True(t, r.Outcome.OK, "%+v", r.Outcome)
	assert.Equal(t, "gpt-4o-mini-2024-07-18", r.Model)
	assert.Equal(t, 15, r.Usage.TotalTokens)
}

func TestGoOpenAIRateLimit(t *testing.T) {
	e := newEnv(t, middleware.WithDedupWindow(0))
	body := `{"error":{"message":"Rate limit reached","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	srv := serve(t, 429, "application/json", body)
	_, err := goOpenAIClient(srv.URL, e.client).CreateChatCompletion(context.Background(), goopenai.ChatCompletionRequest{Model: "m"})
	var apiErr *goopenai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "rate_limit_exceeded", apiErr.Code)
	r := one(t, e)
	assert.Equal(t, record.ErrorRateLimit, r.ErrorType)
	assert.True(t, r.Outcome.Retriable)
	assert.Equal(t, "Rate limit reached", r.ErrorMessage)
}

func TestOpenAISDKRetriesAreOneRecord(t *testing.T) {
	e := newEnv(t)
	s := (&scripted{}).
		add(429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, map[string]string{"Retry-After-Ms": "5"}).
		add(500, `{"error":{"message":"oops","type":"server_error"}}`, map[string]string{"Retry-After-Ms": "5"}).
		add(200, chatResponse, nil)
	srv := s.start(t)
	client := openaisdk.NewClient(
		option.WithBaseURL(srv.URL+"/v1"),
		option.WithAPIKey("sk-test-openaigo-0123456789abcdef"),
		option.WithHTTPClient(e.client),
	)
	ctx := middleware.WithTrace(context.Background(), "sdk")
	got, err := client.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("Hello")},
	})
	require.NoError(t, err)
	assert.Equal(t, "Hi!", got.Choices[0].Message.Content)
	assert.Equal(t, int32(3), s.n.Load(), "the SDK made three attempts")

	r := one(t, e)
	assert.Equal(t, 3, r.Attempts)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, "sdk", r.TraceID)
	assert.Len(t, e.sinkRecords(t), 1, "a log pipeline sees one line")
}

func TestOpenAISDKFirstAttemptsAreNeverMerged(t *testing.T) {
	// X-Stainless-Retry-Count: 0 marks a new logical call, even when the
	// same request just failed.
	e := newEnv(t)
	s := (&scripted{}).add(400, `{"error":{"message":"bad","type":"invalid_request_error"}}`, nil)
	s.add(503, `{"error":{"message":"busy"}}`, map[string]string{"X-Should-Retry": "false"})
	srv := s.start(t)
	client := openaisdk.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("k"), option.WithHTTPClient(e.client), option.WithMaxRetries(0))
	params := openaisdk.ChatCompletionNewParams{Model: "m", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("x")}}
	_, err := client.Chat.Completions.New(context.Background(), params)
	require.Error(t, err)
	_, err = client.Chat.Completions.New(context.Background(), params)
	require.Error(t, err)
	require.NoError(t, e.rec.Close())
	assert.Len(t, e.records(), 2)
}

func genaiClient(t *testing.T, base string, hc *http.Client, retry *genai.HTTPRetryOptions) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "AIzaSyTEST-genai-0123456789abcdefghijklmnop",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, RetryOptions: retry},
	})
	require.NoError(t, err)
	return c
}

func TestGenai(t *testing.T) {
	e := newEnv(t)
	s := (&scripted{}).add(200, geminiResponse, nil)
	srv := s.start(t)
	got, err := genaiClient(t, srv.URL, e.client, nil).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Hello"), nil)
	require.NoError(t, err)
	bare, err := genaiClient(t, srv.URL, http.DefaultClient, nil).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Hello"), nil)
	require.NoError(t, err)
	got.SDKHTTPResponse, bare.SDKHTTPResponse = nil, nil
	assert.Equal(t, bare, got)

	r := one(t, e)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, "gemini-2.0-flash", r.Model)
	assert.Equal(t, 7, r.Usage.TotalTokens)
	assert.Equal(t, record.SpeakerUser, r.Speaker)
}

func TestGenaiRetriesAreOneRecord(t *testing.T) {
	// genai resends the identical request with no marker.
	e := newEnv(t)
	s := (&scripted{}).
		add(503, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, nil).
		add(200, geminiResponse, nil)
	srv := s.start(t)
	zero, small, one32 := 0.0, 0.01, int32(3)
	retry := &genai.HTTPRetryOptions{Attempts: &one32, InitialDelay: &small, Jitter: &zero}
	_, err := genaiClient(t, srv.URL, e.client, retry).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Hello"), nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), s.n.Load())
	r := one(t, e)
	assert.Equal(t, 2, r.Attempts)
	assert.True(t, r.Outcome.OK)
}

func TestGenaiErrorsAreOneRecord(t *testing.T) {
	e := newEnv(t, middleware.WithDedupWindow(0))
	s := (&scripted{}).add(400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`, nil)
	srv := s.start(t)
	_, err := genaiClient(t, srv.URL, e.client, nil).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Hello"), nil)
	var apiErr genai.APIError
	require.True(t, errors.As(err, &apiErr), "%T %v", err, err)
	r := one(t, e)
	assert.Equal(t, record.ErrorAuth, r.ErrorType)
	assert.True(t, strings.HasPrefix(r.ErrorMessage, "API key not valid"))
}
