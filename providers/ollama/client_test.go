package ollama_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/ollama"
	"github.com/llmhistory/llmhistory/record"
)

// testdata returns a captured payload of the repository's shared corpus,
// testdata/providers/ollama/<name> (testdata/README.md says where it came from).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "ollama", name))
	require.NoError(t, err)
	return b
}

// reply is one answer of the fake Ollama.
type reply struct {
	status int
	body   []byte
	cutAt  int // when > 0, the connection is dropped after this many bytes
}

// fakeOllama answers the n-th request with the n-th reply (the last one
// again after that), as Ollama does: NDJSON for a stream, JSON otherwise,
// each line flushed as it is written.
type fakeOllama struct {
	t       *testing.T
	replies []reply
	mu      sync.Mutex
	paths   []string
	bodies  [][]byte
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.bodies = append(f.bodies, b)
	rep := f.replies[min(len(f.paths), len(f.replies))-1]
	f.mu.Unlock()
	body := rep.body
	if bytes.Count(bytes.TrimSpace(body), []byte("\n")) > 0 {
		w.Header().Set("Content-Type", "application/x-ndjson")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(rep.status)
	if rep.cutAt > 0 {
		body = body[:rep.cutAt]
	}
	for line := range bytes.Lines(body) {
		w.Write(line)
		w.(http.Flusher).Flush()
	}
	if rep.cutAt > 0 {
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(f.t, err)
		conn.Close()
	}
}

func serve(t *testing.T, replies ...reply) (*httptest.Server, *fakeOllama) {
	t.Helper()
	f := &fakeOllama{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv, f
}

func client(t *testing.T, base string, hc *http.Client) *api.Client {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	return api.NewClient(u, hc)
}

func newRecorder(t *testing.T, opts ...middleware.Option) *middleware.Recorder {
	t.Helper()
	rec := middleware.NewRecorder(append([]middleware.Option{middleware.WithSyncSinks(), middleware.WithDedupWindow(0)}, opts...)...)
	t.Cleanup(func() { rec.Close() })
	return rec
}

func only(t *testing.T, rec *middleware.Recorder) record.Record {
	t.Helper()
	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 1, "exactly one record")
	require.NoError(t, rs[0].Validate())
	return rs[0]
}

func chat(t *testing.T, c *api.Client, req *api.ChatRequest) (string, api.ChatResponse, error) {
	t.Helper()
	var text strings.Builder
	var last api.ChatResponse
	err := c.Chat(context.Background(), req, func(r api.ChatResponse) error {
		text.WriteString(r.Message.Content)
		last = r
		return nil
	})
	return text.String(), last, err
}

var countToFive = &api.ChatRequest{
	Model:    "gemma3:1b",
	Messages: []api.Message{{Role: "user", Content: "Count from 1 to 5"}},
	Options:  map[string]any{"num_predict": 50, "temperature": 0},
}

func TestClientChatStream(t *testing.T) {
	srv, f := serve(t, reply{status: 200, body: testdata(t, "chat_stream.ndjson")})
	rec := newRecorder(t, middleware.WithOutput())
	got, last, err := chat(t, client(t, srv.URL, rec.Client(nil)), countToFive)
	require.NoError(t, err)
	want, _, err := chat(t, client(t, srv.URL, http.DefaultClient), countToFive)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the same answer with and without the recorder")
	assert.Equal(t, "/api/chat", f.paths[0])
	assert.Equal(t, 22, last.EvalCount)

	r := only(t, rec)
	assert.Equal(t, "ollama.chat", r.MethodName)
	assert.Equal(t, "user", r.Speaker)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Count from 1 to 5"}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"gemma3:1b","options":{"num_predict":50,"temperature":0}}`, string(r.Kwargs))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "message", HTTPStatus: 200, FinishReason: "stop"}, r.Outcome)
	assert.Equal(t, "gemma3:1b", r.Model)
	assert.Equal(t, got, r.Output.Text())
	assert.Equal(t, &record.Usage{InputTokens: 16, OutputTokens: 22, TotalTokens: 38}, r.Usage, "prompt_eval_count and eval_count")
	assert.Nil(t, r.Cost, "a local model is not priced")
	assert.Greater(t, r.TimeToFirstChunkMS, 0.0, "NDJSON is a stream")
}

// A model that thinks and calls two tools, answered at once (stream
// false): the thinking is not the output, the calls are the record's.
func TestClientChatThinkingToolCalls(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, body: testdata(t, "chat_thinking_tool_calls.json")})
	rec := newRecorder(t, middleware.WithOutput())
	stream := false
	think := api.ThinkValue{Value: true}
	req := &api.ChatRequest{
		Model:    "qwen3.5:35b",
		Messages: []api.Message{{Role: "user", Content: "Read OllamaApiClient.java and OpenAiApiClient.java."}},
		Stream:   &stream,
		Think:    &think,
		Tools: api.Tools{{Type: "function", Function: api.ToolFunction{Name: "read_file_content", Description: "Reads a file",
			Parameters: api.ToolFunctionParameters{Type: "object"}}}},
	}
	_, last, err := chat(t, client(t, srv.URL, rec.Client(nil)), req)
	require.NoError(t, err)
	require.Len(t, last.Message.ToolCalls, 2)
	require.NotEmpty(t, last.Message.Thinking)

	r := only(t, rec)
	var kw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Kwargs, &kw))
	assert.JSONEq(t, `["read_file_content"]`, string(kw["tools"]), "tools by name")
	assert.JSONEq(t, `false`, string(kw["stream"]))
	assert.JSONEq(t, `true`, string(kw["think"]))
	assert.True(t, r.Outcome.OK)
	assert.Empty(t, r.Output.Text(), "the thinking is not the text")
	assert.Equal(t, last.Message.Thinking, r.Output.Reasoning(), "it is the reasoning")
	require.Len(t, calls(r.Output), 2)
	assert.Equal(t, &record.Usage{InputTokens: 557, OutputTokens: 213, TotalTokens: 770}, r.Usage)
	assert.Equal(t, "qwen3.5:35b", r.Model)
}

func TestClientGenerate(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, body: testdata(t, "generate.json")})
	rec := newRecorder(t, middleware.WithOutput())
	stream := false
	var got api.GenerateResponse
	err := client(t, srv.URL, rec.Client(nil)).Generate(context.Background(), &api.GenerateRequest{
		Model: "gemma3:1b", Prompt: "Hello, how are you?", Stream: &stream, Context: []int{105, 2364, 107},
		Options: map[string]any{"num_predict": 100, "temperature": 0},
	}, func(r api.GenerateResponse) error { got = r; return nil })
	require.NoError(t, err)

	r := only(t, rec)
	assert.Equal(t, "ollama.generate", r.MethodName)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Hello, how are you?"}]}]`, string(r.Args), "no system: Ollama's client sends an empty one")
	assert.JSONEq(t, `{"model":"gemma3:1b","suffix":"","template":"","context":"…[3 token ids]","stream":false,"options":{"num_predict":100,"temperature":0}}`, string(r.Kwargs))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "completion", HTTPStatus: 200, FinishReason: "stop"}, r.Outcome)
	assert.Equal(t, got.Response, r.Output.Text())
	assert.Equal(t, &record.Usage{InputTokens: 15, OutputTokens: 65, TotalTokens: 80}, r.Usage)
}

func TestClientEmbed(t *testing.T) {
	srv, f := serve(t, reply{status: 200, body: testdata(t, "embed.json")})
	rec := newRecorder(t)
	got, err := client(t, srv.URL, rec.Client(nil)).Embed(context.Background(), &api.EmbedRequest{Model: "nomic-embed-text", Input: "Hello world"})
	require.NoError(t, err)
	require.Len(t, got.Embeddings, 1)
	assert.Equal(t, "/api/embed", f.paths[0])

	r := only(t, rec)
	assert.Equal(t, "ollama.embed", r.MethodName)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Hello world"}]}]`, string(r.Args))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "embeddings", HTTPStatus: 200}, r.Outcome)
	assert.Equal(t, &record.Usage{InputTokens: 2, TotalTokens: 2}, r.Usage)
	assert.Nil(t, r.Cost)
}

// An embed answer longer than the capture keeps its counts, from the tail.
func TestClientEmbedLongerThanCapture(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, body: testdata(t, "embed.json")})
	rec := newRecorder(t, middleware.WithMaxBody(0, 2048))
	_, err := client(t, srv.URL, rec.Client(nil)).Embed(context.Background(), &api.EmbedRequest{Model: "nomic-embed-text", Input: "Hello world"})
	require.NoError(t, err)

	r := only(t, rec)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, &record.Usage{InputTokens: 2, TotalTokens: 2}, r.Usage)
}

func TestClientModelNotFound(t *testing.T) {
	srv, _ := serve(t, reply{status: 404, body: []byte(`{"error":"model \"llama9\" not found, try pulling it first"}`)})
	rec := newRecorder(t)
	_, _, err := chat(t, client(t, srv.URL, rec.Client(nil)), &api.ChatRequest{Model: "llama9", Messages: countToFive.Messages})
	var se api.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 404, se.StatusCode)

	r := only(t, rec)
	assert.Equal(t, record.ErrorNotFound, r.ErrorType)
	assert.False(t, r.Outcome.Retriable)
	assert.Equal(t, `model "llama9" not found, try pulling it first`, r.ErrorMessage)
}

// An error line in the middle of a 200 stream is the call's outcome.
func TestClientErrorMidStream(t *testing.T) {
	lines := bytes.SplitAfter(testdata(t, "chat_stream.ndjson"), []byte("\n"))
	body := append(bytes.Join(lines[:5], nil), []byte(`{"error":"an error was encountered while running the model: unexpected EOF"}`+"\n")...)
	srv, _ := serve(t, reply{status: 200, body: body})
	rec := newRecorder(t)
	_, _, err := chat(t, client(t, srv.URL, rec.Client(nil)), countToFive)
	require.EqualError(t, err, "an error was encountered while running the model: unexpected EOF")

	r := only(t, rec)
	assert.Equal(t, record.ErrorServer, r.ErrorType)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
	assert.Equal(t, "an error was encountered while running the model: unexpected EOF", r.ErrorMessage)
}

// A stream whose connection drops half way: the record fails.
func TestClientStreamCut(t *testing.T) {
	body := testdata(t, "chat_stream.ndjson")
	srv, _ := serve(t, reply{status: 200, body: body, cutAt: len(body) / 2})
	rec := newRecorder(t)
	_, _, err := chat(t, client(t, srv.URL, rec.Client(nil)), countToFive)
	t.Logf("the client's error: %v", err)

	r := only(t, rec)
	assert.False(t, r.Outcome.OK)
	assert.Equal(t, record.ErrorTransport, r.ErrorType, r.ErrorMessage)
}

// A stream that ends cleanly without "done": true is incomplete.
func TestClientStreamWithoutDone(t *testing.T) {
	lines := bytes.SplitAfter(testdata(t, "chat_stream.ndjson"), []byte("\n"))
	srv, _ := serve(t, reply{status: 200, body: bytes.Join(lines[:len(lines)-2], nil)})
	rec := newRecorder(t)
	_, _, err := chat(t, client(t, srv.URL, rec.Client(nil)), countToFive)
	require.NoError(t, err, "nothing tells the client")

	r := only(t, rec)
	assert.Equal(t, record.ErrorIncomplete, r.ErrorType)
	assert.Equal(t, `the stream ended without "done": true`, r.ErrorMessage)
}

// Ollama answers 503 when its queue is full (OLLAMA_MAX_QUEUE). Retried
// by middleware.Retry inside the recorder, the call is one record.
func TestServerBusyRetriedIsOneRecord(t *testing.T) {
	srv, f := serve(t,
		reply{status: 503, body: []byte(`{"error":"server busy, please try again.  maximum pending requests exceeded"}`)},
		reply{status: 200, body: testdata(t, "chat_stream.ndjson")})
	rec := newRecorder(t, middleware.WithDedupWindow(10*time.Second))
	hc := &http.Client{Transport: middleware.Chain(http.DefaultTransport, rec.Middleware(), middleware.Retry(middleware.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}))}
	_, _, err := chat(t, client(t, srv.URL, hc), countToFive)
	require.NoError(t, err)
	require.Len(t, f.paths, 2)

	r := only(t, rec)
	assert.Equal(t, 2, r.Attempts)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, 38, r.Usage.TotalTokens)
}

func TestEndpoints(t *testing.T) {
	for path, want := range map[string]string{
		"/api/chat": ollama.MethodChat, "/api/generate/": ollama.MethodGenerate, "/ollama/api/embed": ollama.MethodEmbed,
		"/api/chat/completions": "", "/api/embeddings": "", "/api/tags": "",
	} {
		rec := newRecorder(t)
		srv, _ := serve(t, reply{status: 200, body: []byte(`{"done":true}`)})
		resp, err := rec.Client(nil).Post(srv.URL+path, "application/json", strings.NewReader(`{"model":"m"}`))
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r := only(t, rec)
		if want == "" {
			assert.NotContains(t, r.MethodName, "ollama.", path)
		} else {
			assert.Equal(t, want, r.MethodName, path)
		}
	}
}

// A local model is not priced, even one named as a model the price table
// knows (an Ollama alias made with a Modelfile can take any name).
func TestLocalModelNotPriced(t *testing.T) {
	body := bytes.ReplaceAll(testdata(t, "chat_stream.ndjson"), []byte("gemma3:1b"), []byte("gpt-4o"))
	srv, _ := serve(t, reply{status: 200, body: body})
	rec := newRecorder(t)
	_, _, err := chat(t, client(t, srv.URL, rec.Client(nil)), &api.ChatRequest{Model: "gpt-4o", Messages: countToFive.Messages})
	require.NoError(t, err)

	r := only(t, rec)
	assert.Equal(t, "gpt-4o", r.Model)
	require.NotNil(t, r.Usage)
	assert.Nil(t, r.Cost)
}

// calls are the tool call parts of an answer.
func calls(m *record.Message) []record.Part {
	var out []record.Part
	for _, p := range m.Parts {
		if p.Type == record.PartToolCall {
			out = append(out, p)
		}
	}
	return out
}
