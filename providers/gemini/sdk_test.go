package gemini_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/record"
)

// replay serves a captured payload to every request, and remembers the
// paths it was asked for.
type replay struct {
	status      int
	body        []byte
	contentType string
	n           atomic.Int32
	path        atomic.Value
}

func (p *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	p.n.Add(1)
	p.path.Store(r.URL.Path + "?" + r.URL.RawQuery)
	w.Header().Set("Content-Type", p.contentType)
	w.WriteHeader(p.status)
	w.Write(p.body)
}

func serveFile(t *testing.T, status int, file, contentType string) (*httptest.Server, *replay) {
	t.Helper()
	p := &replay{status: status, body: testdata(t, file), contentType: contentType}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv, p
}

func newRecorder(t *testing.T) *middleware.Recorder {
	t.Helper()
	// No dedup window: a retriable failure (the 429) is emitted at once
	// rather than held for a retry that genai, without retry options,
	// never makes.
	rec := middleware.NewRecorder(middleware.WithProviders(gemini.Provider{}), middleware.WithSyncSinks(), middleware.WithDedupWindow(0))
	t.Cleanup(func() { rec.Close() })
	return rec
}

// genaiClient is a Gemini API client of base; Backend, APIKey and BaseURL
// are all set so that the developer's environment cannot change them.
func genaiClient(t *testing.T, base string, hc *http.Client) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "AIzaSyTEST-genai-0123456789abcdefghijklmnop",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base},
	})
	require.NoError(t, err)
	return c
}

func only(t *testing.T, rec *middleware.Recorder) record.Record {
	t.Helper()
	rs := rec.History().Records()
	require.Len(t, rs, 1, "exactly one record")
	require.NoError(t, rs[0].Validate())
	return rs[0]
}

func TestGenaiGenerateContent(t *testing.T) {
	srv, server := serveFile(t, 200, "gemini_generate_response.json", "application/json")
	rec := newRecorder(t)
	temp := float32(0.2)
	config := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Answer in one sentence.", genai.RoleUser),
		Temperature:       &temp,
		MaxOutputTokens:   100,
		Tools:             []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
	}
	ask := func(hc *http.Client) *genai.GenerateContentResponse {
		resp, err := genaiClient(t, srv.URL, hc).Models.GenerateContent(context.Background(), "gemini-2.0-flash",
			genai.Text("Where is Google's headquarters?"), config)
		require.NoError(t, err)
		resp.SDKHTTPResponse = nil
		return resp
	}
	got := ask(rec.Client(nil))
	assert.Equal(t, "/v1beta/models/gemini-2.0-flash:generateContent?", server.path.Load())
	assert.Equal(t, ask(http.DefaultClient), got, "the SDK returns the same with and without the recorder")
	assert.Contains(t, got.Text(), "Mountain View")

	r := only(t, rec)
	assert.Equal(t, gemini.MethodGenerateContent, r.MethodName)
	assert.Equal(t, "gemini-2.0-flash", r.Model)
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", HTTPStatus: 200, FinishReason: "STOP"}, r.Outcome)
	assert.Equal(t, &record.Usage{InputTokens: 7, OutputTokens: 22, TotalTokens: 29}, r.Usage)
	assert.Equal(t, record.SpeakerUser, r.Speaker)
	assert.JSONEq(t, `[{"role":"system","parts":[{"type":"text","content":"Answer in one sentence."}]},{"role":"user","parts":[{"type":"text","content":"Where is Google's headquarters?"}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"gemini-2.0-flash","maxOutputTokens":100,"temperature":0.2,"tools":["googleSearch"]}`, string(r.Kwargs))
}

func TestGenaiFunctionResponseTurn(t *testing.T) {
	srv, _ := serveFile(t, 200, "gemini_generate_response_thinking_functioncall.json", "application/json")
	rec := newRecorder(t)
	contents := []*genai.Content{
		genai.NewContentFromText("How many days until New Year's Eve?", genai.RoleUser),
		genai.NewContentFromFunctionCall("now", map[string]any{}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("now", map[string]any{"result": "2025-10-26"}, genai.RoleUser),
	}
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "now"}}}}}
	ask := func(hc *http.Client) *genai.GenerateContentResponse {
		resp, err := genaiClient(t, srv.URL, hc).Models.GenerateContent(context.Background(), "gemini-2.5-pro", contents, config)
		require.NoError(t, err)
		resp.SDKHTTPResponse = nil
		return resp
	}
	got := ask(rec.Client(nil))
	assert.Equal(t, ask(http.DefaultClient), got)
	require.Len(t, got.FunctionCalls(), 1)

	r := only(t, rec)
	assert.Equal(t, record.SpeakerTool, r.Speaker, "the last turn is a function response")
	assert.Equal(t, "gemini-2.5-pro", r.Model)
	assert.Equal(t, "38CHaLjMG6TujrEPtvTiuQk", r.Outcome.ResponseID)
	assert.Equal(t, &record.Usage{InputTokens: 38, OutputTokens: 509, TotalTokens: 547, ReasoningTokens: 501}, r.Usage)
	assert.JSONEq(t, `{"model":"gemini-2.5-pro","tools":["now"]}`, string(r.Kwargs))
}

// streamAll reads a stream to its end: the responses, and the error that
// ended it, if any.
func streamAll(t *testing.T, c *genai.Client, model string) ([]*genai.GenerateContentResponse, error) {
	t.Helper()
	var out []*genai.GenerateContentResponse
	for resp, err := range c.Models.GenerateContentStream(context.Background(), model, genai.Text("Hello"), nil) {
		if err != nil {
			return out, err
		}
		resp.SDKHTTPResponse = nil
		out = append(out, resp)
	}
	return out, nil
}

func TestGenaiStream(t *testing.T) {
	for _, tt := range []struct {
		file, model, responseID string
		usage                   record.Usage
		chunks                  int
	}{
		{"gemini_stream.sse", "gemini-2.0-flash", "", record.Usage{InputTokens: 7, OutputTokens: 10, TotalTokens: 17}, 3},
		{"gemini_stream_thinking_functioncall.sse", "gemini-2.5-flash", "48SHaPHpHKbG-8YPtZCawAk", record.Usage{InputTokens: 38, OutputTokens: 174, TotalTokens: 212, ReasoningTokens: 168}, 3},
	} {
		t.Run(tt.file, func(t *testing.T) {
			srv, server := serveFile(t, 200, tt.file, "text/event-stream")
			rec := newRecorder(t)
			got, err := streamAll(t, genaiClient(t, srv.URL, rec.Client(nil)), tt.model)
			require.NoError(t, err)
			assert.Equal(t, "/v1beta/models/"+tt.model+":streamGenerateContent?alt=sse", server.path.Load())
			bare, err := streamAll(t, genaiClient(t, srv.URL, http.DefaultClient), tt.model)
			require.NoError(t, err)
			assert.Equal(t, bare, got, "the SDK returns the same with and without the recorder")
			assert.Len(t, got, tt.chunks)

			r := only(t, rec)
			assert.Equal(t, gemini.MethodStreamGenerateContent, r.MethodName)
			assert.Equal(t, tt.model, r.Model)
			assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", HTTPStatus: 200, FinishReason: "STOP", ResponseID: tt.responseID}, r.Outcome)
			assert.Equal(t, &tt.usage, r.Usage, "the last cumulative usage")
			assert.Equal(t, record.SpeakerUser, r.Speaker)
		})
	}
}

func TestGenaiStreamErrorMidstream(t *testing.T) {
	srv, _ := serveFile(t, 200, "gemini_stream_error_midstream.sse", "text/event-stream")
	rec := newRecorder(t)
	got, err := streamAll(t, genaiClient(t, srv.URL, rec.Client(nil)), "gemini-2.0-flash")
	var apiErr genai.APIError
	require.True(t, errors.As(err, &apiErr), "%T %v", err, err)
	assert.Equal(t, 499, apiErr.Code)
	assert.Equal(t, "CANCELLED", apiErr.Status)
	bare, bareErr := streamAll(t, genaiClient(t, srv.URL, http.DefaultClient), "gemini-2.0-flash")
	assert.Equal(t, bare, got)
	assert.Equal(t, bareErr, err, "the same error with and without the recorder")
	assert.Len(t, got, 2, "two chunks before the error")

	r := only(t, rec)
	assert.Equal(t, gemini.MethodStreamGenerateContent, r.MethodName)
	assert.Equal(t, record.StatusCanceled, r.Outcome.Status)
	assert.Equal(t, record.ErrorCanceled, r.ErrorType)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
	assert.Equal(t, "The operation was cancelled.", r.ErrorMessage)
}

func TestGenaiErrors(t *testing.T) {
	for _, tt := range []struct {
		file       string
		status     int
		errorType  string
		retriable  bool
		grpcStatus string
		message    string
	}{
		{"gemini_error.json", 429, record.ErrorRateLimit, true, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Generate Content API requests per minute'"},
		{"gemini_error_400_api_key.json", 400, record.ErrorAuth, false, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."},
	} {
		t.Run(tt.file, func(t *testing.T) {
			srv, server := serveFile(t, tt.status, tt.file, "application/json")
			rec := newRecorder(t)
			ask := func(hc *http.Client) error {
				_, err := genaiClient(t, srv.URL, hc).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Hello"), nil)
				return err
			}
			err := ask(rec.Client(nil))
			var apiErr genai.APIError
			require.True(t, errors.As(err, &apiErr), "%T %v", err, err)
			assert.Equal(t, tt.status, apiErr.Code)
			assert.Equal(t, tt.grpcStatus, apiErr.Status)
			assert.Equal(t, ask(http.DefaultClient), err, "the same error with and without the recorder")
			assert.Equal(t, int32(2), server.n.Load(), "no retries")

			r := only(t, rec)
			assert.Equal(t, gemini.MethodGenerateContent, r.MethodName)
			assert.Equal(t, "gemini-2.0-flash", r.Model, "from the URL")
			assert.Equal(t, tt.errorType, r.ErrorType)
			assert.Equal(t, tt.errorType, r.Outcome.ErrorType)
			assert.Equal(t, tt.retriable, r.Outcome.Retriable)
			assert.Equal(t, tt.status, r.Outcome.HTTPStatus)
			assert.True(t, strings.HasPrefix(r.ErrorMessage, tt.message), r.ErrorMessage)
			assert.Nil(t, r.Usage)
		})
	}
}
