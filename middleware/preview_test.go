package middleware_test

import (
	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"

	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// wire is a fake OpenAI and Gemini server that keeps every request body it
// receives, and fails the request when its length is not Content-Length.
type wire struct {
	t      *testing.T
	mu     sync.Mutex
	bodies []string
	paths  []string
	fail   map[int]int // request number -> status to answer with
}

func newWire(t *testing.T) (*wire, *httptest.Server) {
	w := &wire{t: t, fail: map[int]int{}}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return w, srv
}

func (s *wire) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil || r.ContentLength >= 0 && int64(len(b)) != r.ContentLength {
		s.t.Errorf("%s: read %d bytes, Content-Length %d, %v", r.URL.Path, len(b), r.ContentLength, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies, s.paths = append(s.bodies, string(b)), append(s.paths, r.URL.Path)
	status := s.fail[n]
	s.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(status)
		if status == http.StatusTooManyRequests {
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	stream := gjson.GetBytes(b, "stream").Bool() || strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/v1/messages") && stream:
		w.Header().Set("Content-Type", "text/event-stream")
		sse, err := os.ReadFile(filepath.Join("..", "testdata", "providers", "anthropic", "stream_text.sse"))
		require.NoError(s.t, err)
		w.Write(sse)
	case strings.HasSuffix(p, "/v1/messages"):
		msg, err := os.ReadFile(filepath.Join("..", "testdata", "providers", "anthropic", "message.json"))
		require.NoError(s.t, err)
		w.Write(msg)
	case stream:
		w.Header().Set("Content-Type", "text/event-stream")
		file := filepath.Join("openai", "openai_chat_stream.sse")
		if strings.Contains(p, ":") {
			file = filepath.Join("gemini", "gemini_stream.sse")
		}
		sse, err := os.ReadFile(filepath.Join("..", "testdata", "providers", file))
		require.NoError(s.t, err)
		w.Write(sse)
		return
	case strings.HasSuffix(p, "/chat/completions"):
		io.WriteString(w, chatResponse)
	case strings.HasSuffix(p, "/responses"):
		io.WriteString(w, `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4o","output":[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}`)
	case strings.HasSuffix(p, "/embeddings"):
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`)
	case strings.HasSuffix(p, "/models"):
		io.WriteString(w, `{"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"openai"}]}`)
	case strings.HasSuffix(p, ":generateContent"):
		io.WriteString(w, geminiResponse)
	case strings.HasSuffix(p, ":embedContent"):
		io.WriteString(w, `{"embedding":{"values":[0.1]}}`)
	case strings.HasSuffix(p, ":countTokens"):
		io.WriteString(w, `{"totalTokens":3}`)
	case strings.HasSuffix(p, ":batchEmbedContents"):
		io.WriteString(w, `{"embeddings":[{"values":[0.1]}]}`)
	default:
		io.WriteString(w, `{}`)
	}
}

func (s *wire) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

func (s *wire) last() string {
	b := s.sent()
	require.NotEmpty(s.t, b)
	return b[len(b)-1]
}

// checkPreview checks guidance text: the guidance, then a preview of total
// records with at most latest bounded lines.
func checkPreview(t *testing.T, text string, total, latest int, trace string) {
	t.Helper()
	rest, ok := strings.CutPrefix(text, middleware.HistoryGuidance+"\n\n")
	require.True(t, ok, "the guidance comes first: %q", text)
	lines := strings.Split(rest, "\n")
	noun := "records"
	if total == 1 {
		noun = "record"
	}
	assert.True(t, strings.HasPrefix(lines[0], fmt.Sprintf("History: %d %s in this conversation (%s).", total, noun, trace)), "%q", lines[0])
	assert.Len(t, lines[1:], min(total, latest), "summaries: %q", rest)
	for _, l := range lines[1:] {
		assert.True(t, strings.HasPrefix(l, "- "), "%q", l)
		assert.LessOrEqual(t, len(l), 160, "%q", l)
	}
	assert.NotContains(t, text, "sk-", "no key in the preview")
}

func TestPreviewGoOpenAI(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(3))
	w, srv := newWire(t)
	bare, bareSrv := newWire(t)
	ctx := middleware.WithTrace(context.Background(), "t-go")
	for i := range 5 {
		req := goopenai.ChatCompletionRequest{
			Model: "gpt-4o-mini",
			Messages: []goopenai.ChatCompletionMessage{
				{Role: "system", Content: "Be brief."},
				{Role: "user", Content: "Question " + strconv.Itoa(i)},
			},
		}
		_, err := goOpenAIClient(srv.URL, e.client).CreateChatCompletion(ctx, req)
		require.NoError(t, err)
		_, err = goOpenAIClient(bareSrv.URL, http.DefaultClient).CreateChatCompletion(ctx, req)
		require.NoError(t, err)

		sent := w.last()
		msg := gjson.Get(sent, "messages.0")
		assert.Equal(t, "system", msg.Get("role").String())
		checkPreview(t, msg.Get("content").String(), i, 3, "trace t-go")
		orig, err := sjson.Delete(sent, "messages.0")
		require.NoError(t, err)
		assert.Equal(t, bare.last(), orig, "every other byte as the SDK sent it")
	}
	last := e.records()[4]
	assert.True(t, last.HistoryGuidance)
	assert.Equal(t, "system", gjson.GetBytes(last.Args, "0.role").String(), "the record holds what was sent")
	assert.Equal(t, "Question 4", gjson.GetBytes(last.Args, "2.parts.0.content").String())
	assert.Equal(t, record.SpeakerUser, last.Speaker)
	assert.Equal(t, 1, strings.Count(string(last.Args), "History: "))

	// A stream, same trace.
	stream, err := goOpenAIClient(srv.URL, e.client).CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{
		Model: "gpt-4o", Stream: true, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "Weather?"}},
	})
	require.NoError(t, err)
	for {
		if _, err := stream.Recv(); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	stream.Close()
	sent := w.last()
	assert.True(t, gjson.Get(sent, "stream").Bool())
	checkPreview(t, gjson.Get(sent, "messages.0.content").String(), 5, 3, "trace t-go")
	assert.True(t, e.records()[5].HistoryGuidance)
	assert.True(t, e.records()[5].Outcome.OK, "%+v", e.records()[5].Outcome)
}

func TestPreviewOpenAISDK(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(2))
	w, srv := newWire(t)
	bare, bareSrv := newWire(t)
	client := func(base string, hc *http.Client) *openaisdk.Client {
		c := openaisdk.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(hc))
		return &c
	}
	ctx := middleware.WithTrace(context.Background(), "t-sdk")
	params := openaisdk.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("Hello")},
	}
	for i := range 4 {
		_, err := client(srv.URL, e.client).Chat.Completions.New(ctx, params)
		require.NoError(t, err)
		_, err = client(bareSrv.URL, http.DefaultClient).Chat.Completions.New(ctx, params)
		require.NoError(t, err)
		sent := w.last()
		content := gjson.Get(sent, "messages.0.content").String()
		checkPreview(t, content, i, 2, "trace t-sdk")
		assert.LessOrEqual(t, strings.Count(content, "\n- "), 2, "WithHistoryPreview(2)")
		orig, err := sjson.Delete(sent, "messages.0")
		require.NoError(t, err)
		assert.Equal(t, bare.last(), orig)
	}

	// A stream.
	s := client(srv.URL, e.client).Chat.Completions.NewStreaming(ctx, params)
	for s.Next() {
	}
	require.NoError(t, s.Err())
	checkPreview(t, gjson.Get(w.last(), "messages.0.content").String(), 4, 2, "trace t-sdk")

	// The Responses API: instructions added, or appended to.
	for _, instr := range []string{"", "Be brief."} {
		p := responses.ResponseNewParams{Model: "gpt-4o", Input: responses.ResponseNewParamsInputUnion{OfString: openaisdk.String("Hi")}}
		if instr != "" {
			p.Instructions = openaisdk.String(instr)
		}
		before := len(e.records())
		_, err := client(srv.URL, e.client).Responses.New(ctx, p)
		require.NoError(t, err)
		_, err = client(bareSrv.URL, http.DefaultClient).Responses.New(ctx, p)
		require.NoError(t, err)
		sent, orig := w.last(), bare.last()
		got := gjson.Get(sent, "instructions").String()
		if instr == "" {
			checkPreview(t, got, before, 2, "trace t-sdk")
			back, err := sjson.Delete(sent, "instructions")
			require.NoError(t, err)
			assert.Equal(t, orig, back)
		} else {
			rest, ok := strings.CutPrefix(got, instr+"\n\n")
			require.True(t, ok, "%q", got)
			checkPreview(t, rest, before, 2, "trace t-sdk")
			back, err := sjson.Set(sent, "instructions", instr)
			require.NoError(t, err)
			assert.Equal(t, orig, back)
		}
	}
	for _, r := range e.records() {
		assert.True(t, r.HistoryGuidance, r.MethodName)
	}
}

func TestPreviewGenai(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(3))
	w, srv := newWire(t)
	bare, bareSrv := newWire(t)
	ctx := middleware.WithTrace(context.Background(), "t-gem")
	for i, cfg := range []*genai.GenerateContentConfig{
		nil,
		{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser), Temperature: genai.Ptr[float32](0.2)},
		nil,
		{SystemInstruction: &genai.Content{Parts: []*genai.Part{{Text: "One."}, {Text: "Two."}}}},
		nil,
	} {
		_, err := genaiClient(t, srv.URL, e.client, nil).Models.GenerateContent(ctx, "gemini-2.0-flash", genai.Text("Hello "+strconv.Itoa(i)), cfg)
		require.NoError(t, err)
		_, err = genaiClient(t, bareSrv.URL, http.DefaultClient, nil).Models.GenerateContent(ctx, "gemini-2.0-flash", genai.Text("Hello "+strconv.Itoa(i)), cfg)
		require.NoError(t, err)

		sent := w.last()
		parts := gjson.Get(sent, "systemInstruction.parts").Array()
		require.NotEmpty(t, parts, sent)
		checkPreview(t, parts[len(parts)-1].Get("text").String(), i, 3, "trace t-gem")
		var back string
		if cfg == nil {
			back, err = sjson.Delete(sent, "systemInstruction")
		} else {
			back, err = sjson.Delete(sent, "systemInstruction.parts.-1")
		}
		require.NoError(t, err)
		assert.Equal(t, bare.last(), back, "every other byte as genai sent it")
	}

	// A stream.
	for _, err := range genaiClient(t, srv.URL, e.client, nil).Models.GenerateContentStream(ctx, "gemini-2.0-flash", genai.Text("Wyoming?"), nil) {
		require.NoError(t, err)
	}
	assert.True(t, strings.HasSuffix(w.paths[len(w.paths)-1], ":streamGenerateContent"))
	checkPreview(t, gjson.Get(w.last(), "systemInstruction.parts.0.text").String(), 5, 3, "trace t-gem")

	rs := e.records()
	require.Len(t, rs, 6)
	for _, r := range rs {
		assert.True(t, r.HistoryGuidance)
		assert.True(t, r.Outcome.OK, "%s %+v", r.MethodName, r.Outcome)
	}
	assert.Equal(t, "system", gjson.GetBytes(rs[0].Args, "0.role").String(), "the record holds what was sent: %s", rs[0].Args)
}

// The Anthropic SDK's requests take the guidance in their system prompt,
// through the provider's own AddGuidance: absent, a string, or blocks.
func TestPreviewAnthropicSDK(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(3))
	w, srv := newWire(t)
	bare, bareSrv := newWire(t)
	ctx := middleware.WithTrace(context.Background(), "t-claude")
	newClient := func(url string, hc *http.Client) *anthropic.Client {
		c := anthropic.NewClient(anthropicoption.WithBaseURL(url), anthropicoption.WithAPIKey("sk-ant-api03-test"), anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0))
		return &c
	}
	params := func(i int, system []anthropic.TextBlockParam) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 64, System: system,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello " + strconv.Itoa(i)))}}
	}
	for i, system := range [][]anthropic.TextBlockParam{nil, {{Text: "Be brief."}}, {{Text: "One."}, {Text: "Two."}}} {
		_, err := newClient(srv.URL, e.client).Messages.New(ctx, params(i, system))
		require.NoError(t, err)
		_, err = newClient(bareSrv.URL, http.DefaultClient).Messages.New(ctx, params(i, system))
		require.NoError(t, err)

		sent := w.last()
		sys := gjson.Get(sent, "system")
		var text, back string
		if system == nil {
			text = sys.String() // added as a string
			back, err = sjson.Delete(sent, "system")
		} else {
			blocks := sys.Array()
			text = blocks[len(blocks)-1].Get("text").String() // a text block appended
			back, err = sjson.Delete(sent, "system.-1")
		}
		require.NoError(t, err)
		checkPreview(t, text, i, 3, "trace t-claude")
		assert.Equal(t, bare.last(), back, "every other byte as the SDK sent it")
	}

	// A stream.
	stream := newClient(srv.URL, e.client).Messages.NewStreaming(ctx, params(3, nil))
	for stream.Next() {
	}
	require.NoError(t, stream.Err())
	checkPreview(t, gjson.Get(w.last(), "system").String(), 3, 3, "trace t-claude")

	rs := e.records()
	require.Len(t, rs, 4)
	for _, r := range rs {
		assert.True(t, r.HistoryGuidance)
		assert.True(t, r.Outcome.OK, "%s %+v", r.MethodName, r.Outcome)
		assert.Equal(t, "anthropic.messages.create", r.MethodName)
	}
	assert.Equal(t, "system", gjson.GetBytes(rs[0].Args, "0.role").String(), "the record holds what was sent: %s", rs[0].Args)
}

// Without the option, or on endpoints that are not chat, the bodies are
// what the SDK sent, byte for byte.
func TestPreviewUntouched(t *testing.T) {
	for _, opts := range [][]middleware.Option{nil, {middleware.WithHistoryPreview(3)}} {
		e := newEnv(t, opts...)
		w, srv := newWire(t)
		bare, bareSrv := newWire(t)
		ctx := middleware.WithTrace(context.Background(), "t")
		calls := []func(base string, hc *http.Client) error{
			func(base string, hc *http.Client) error {
				_, err := goOpenAIClient(base, hc).CreateEmbeddings(ctx, goopenai.EmbeddingRequest{Model: "text-embedding-3-small", Input: []string{"hi"}})
				return err
			},
			func(base string, hc *http.Client) error {
				_, err := goOpenAIClient(base, hc).ListModels(ctx)
				return err
			},
			func(base string, hc *http.Client) error {
				_, err := genaiClient(t, base, hc, nil).Models.EmbedContent(ctx, "text-embedding-004", genai.Text("hi"), nil)
				return err
			},
			func(base string, hc *http.Client) error {
				_, err := genaiClient(t, base, hc, nil).Models.CountTokens(ctx, "gemini-2.0-flash", genai.Text("hi"), nil)
				return err
			},
		}
		if opts == nil {
			calls = append(calls,
				func(base string, hc *http.Client) error {
					_, err := goOpenAIClient(base, hc).CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
					return err
				},
				func(base string, hc *http.Client) error {
					c := openaisdk.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("k"), option.WithHTTPClient(hc))
					_, err := c.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{Model: "m", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("hi")}})
					return err
				},
				func(base string, hc *http.Client) error {
					_, err := genaiClient(t, base, hc, nil).Models.GenerateContent(ctx, "gemini-2.0-flash", genai.Text("hi"), nil)
					return err
				})
		}
		for _, call := range calls {
			require.NoError(t, call(srv.URL, e.client))
			require.NoError(t, call(bareSrv.URL, http.DefaultClient))
		}
		assert.Equal(t, bare.sent(), w.sent(), "options %d", len(opts))
		for _, r := range e.records() {
			assert.False(t, r.HistoryGuidance, r.MethodName)
		}
	}
}

// Retry inside the recorder resends the edited body: the guidance is
// there once in every attempt, and the call is one record.
func TestPreviewRetry(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(3))
	w, srv := newWire(t)
	w.fail[1] = http.StatusTooManyRequests
	client := &http.Client{Transport: middleware.Chain(nil, e.rec.Middleware(), middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond}))}
	ctx := middleware.WithTrace(context.Background(), "t-retry")
	for range 2 {
		_, err := goOpenAIClient(srv.URL, client).CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{
			Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		})
		require.NoError(t, err)
	}
	sent := w.sent()
	require.Len(t, sent, 3)
	assert.Equal(t, sent[1], sent[2], "the retry resends what the first attempt sent")
	for _, b := range sent {
		assert.Equal(t, 1, strings.Count(b, "History: "), b)
		assert.Len(t, gjson.Get(b, "messages").Array(), 2)
	}
	rs := e.records()
	require.Len(t, rs, 2)
	assert.Equal(t, 2, rs[1].Attempts)
	assert.True(t, rs[1].HistoryGuidance)
}

// A retry the client makes itself, above the recorder, resends the body
// it was given, not the one the preview sent: it still folds into the
// attempt it retries, which is keyed by the caller's body.
func TestPreviewSDKRetry(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(3))
	w, srv := newWire(t)
	w.fail[1] = http.StatusTooManyRequests // the second call's first attempt
	ctx := middleware.WithTrace(context.Background(), "t-sdk-retry")
	c := openaisdk.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"),
		option.WithHTTPClient(e.client), option.WithMaxRetries(2))
	params := openaisdk.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("Hello")},
	}
	_, err := c.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	_, err = c.Chat.Completions.New(ctx, params)
	require.NoError(t, err)

	sent := w.sent()
	require.Len(t, sent, 3)
	assert.Contains(t, sent[1], "History: 1 record", "the preview is in the attempt that failed")
	rs := e.records()
	require.Len(t, rs, 2, "the SDK's retry folds into the call it retries")
	assert.Equal(t, 2, rs[1].Attempts)
	assert.True(t, rs[1].Outcome.OK)
	assert.True(t, rs[1].HistoryGuidance)
}

// The preview never carries what a record holds of a call's payload, nor
// a key that an earlier call's error named.
func TestPreviewHasNoSecrets(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(3), middleware.WithDedupWindow(0))
	w, srv := newWire(t)
	w.fail[0] = http.StatusUnauthorized
	ctx := middleware.WithTrace(context.Background(), "t-sec")
	req := goopenai.ChatCompletionRequest{Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "my payload text"}}}
	_, err := goOpenAIClient(srv.URL, e.client).CreateChatCompletion(ctx, req)
	require.Error(t, err)
	require.Contains(t, e.records()[0].ErrorMessage, "Incorrect API key")
	_, err = goOpenAIClient(srv.URL, e.client).CreateChatCompletion(ctx, req)
	require.NoError(t, err)
	text := gjson.Get(w.last(), "messages.0.content").String()
	checkPreview(t, text, 1, 3, "trace t-sec")
	assert.Contains(t, text, "error auth")
	for _, s := range []string{"sk-", "abcdefghijklmnop", "Incorrect", "payload", "Hi!"} {
		assert.NotContains(t, text, s)
	}
}

// A call without a trace sees the conversation the recorder finds it
// continues: its messages begin with an earlier call's and that call's
// answer. The guidance and preview the recorder added to the earlier
// calls are not part of what is compared.
func TestPreviewWithoutTrace(t *testing.T) {
	e := newEnv(t, middleware.WithHistoryPreview(1))
	w, srv := newWire(t)
	messages := `[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello"}]`
	for _, next := range []string{"More", "Again"} {
		resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":`+messages+`}`)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// The SDK sends the answer back, and the next question.
		messages = strings.TrimSuffix(messages, "]") + `,{"role":"assistant","content":"Hi!"},{"role":"user","content":"` + next + `"}]`
	}
	resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":`+messages+`}`)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Another conversation does not count.
	resp, err = post(t, e.client, middleware.WithTrace(context.Background(), "other"), srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	recs := e.records()
	require.Len(t, recs, 4)
	trace := recs[0].TraceID
	for _, r := range recs[:3] {
		assert.Equal(t, trace, r.TraceID, "one conversation")
		assert.True(t, r.TraceInferred)
	}
	sent := w.sent()
	checkPreview(t, gjson.Get(sent[0], "messages.0.content").String(), 0, 1, "calls without a trace")
	checkPreview(t, gjson.Get(sent[2], "messages.0.content").String(), 2, 1, "trace "+trace)
	assert.Equal(t, 1, strings.Count(gjson.Get(sent[2], "messages.0.content").String(), "\n- "), "WithHistoryPreview(1)")
	checkPreview(t, gjson.Get(sent[3], "messages.0.content").String(), 0, 1, "trace other")
}

// The caller's request is never changed; the one sent has a body, length
// and GetBody that agree. A body without GetBody is sent as it is.
func TestPreviewRequest(t *testing.T) {
	var sent *http.Request
	var sentBody []byte
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		sentBody, _ = io.ReadAll(r.Body)
		r.Body.Close()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(chatResponse)), Request: r}, nil
	})
	for _, withGetBody := range []bool{true, false} {
		rec := middleware.NewRecorder(middleware.WithHistoryPreview(3))
		t.Cleanup(func() { rec.Close() })
		client := &http.Client{Transport: middleware.Chain(base, rec.Middleware())}
		req, err := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", strings.NewReader(chatBody))
		require.NoError(t, err)
		if !withGetBody {
			req.Body, req.GetBody, req.ContentLength = io.NopCloser(strings.NewReader(chatBody)), nil, -1
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Length", strconv.Itoa(len(chatBody)))
		wantHeader, wantLength := req.Header.Clone(), req.ContentLength

		resp, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()

		assert.Equal(t, wantHeader, req.Header, "the caller's header")
		assert.Equal(t, wantLength, req.ContentLength)
		if withGetBody {
			b, _ := req.GetBody()
			orig, _ := io.ReadAll(b)
			assert.Equal(t, chatBody, string(orig), "the caller's GetBody")
		} else {
			// Without GetBody the body streams as the transport reads it:
			// the recorder never reads it ahead, so it cannot edit it.
			assert.Equal(t, chatBody, string(sentBody))
			assert.False(t, rec.History().Records()[0].HistoryGuidance)
			continue
		}
		assert.True(t, bytes.HasPrefix(sentBody, []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"The history`)), "%s", sentBody)
		assert.Equal(t, int64(len(sentBody)), sent.ContentLength)
		assert.Equal(t, strconv.Itoa(len(sentBody)), sent.Header.Get("Content-Length"))
		b, err := sent.GetBody()
		require.NoError(t, err)
		again, _ := io.ReadAll(b)
		assert.Equal(t, sentBody, again, "GetBody resends the edited body")
		back, _ := sjson.DeleteBytes(sentBody, "messages.0")
		assert.Equal(t, chatBody, string(back))
	}
}

// What the preview cannot edit safely goes as it came.
func TestPreviewLeavesAlone(t *testing.T) {
	long := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 200) + `"}]}`
	for _, tc := range []struct {
		name, path, body string
		header           map[string]string
	}{
		{"over the capture cap", "/v1/chat/completions", long, nil},
		{"gzip", "/v1/chat/completions", chatBody, map[string]string{"Content-Encoding": "gzip"}},
		{"not json", "/v1/chat/completions", chatBody, map[string]string{"Content-Type": "text/plain"}},
		{"broken json", "/v1/chat/completions", `{"messages":[}`, nil},
		{"no messages", "/v1/chat/completions", `{"model":"m","prompt":"hi"}`, nil},
		{"legacy completions", "/v1/completions", `{"model":"m","prompt":"hi","messages":[]}`, nil},
		{"unknown endpoint", "/v1/whatever", chatBody, nil},
		{"gemini countTokens", "/v1beta/models/gemini-2.0-flash:countTokens", `{"contents":[]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, middleware.WithHistoryPreview(3), middleware.WithMaxBody(150, 0))
			w, srv := newWire(t)
			req, err := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := e.client.Do(req)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Equal(t, []string{tc.body}, w.sent())
			assert.False(t, one(t, e).HistoryGuidance)
		})
	}
}
