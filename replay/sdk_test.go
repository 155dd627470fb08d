package replay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/replay"
)

// Each SDK is driven twice through the same stack, the recorder outside
// the cassette: once in ModeRecord against a fake provider answering with
// real payloads, and once in ModeReplay with the provider gone (the
// network, if touched, fails the test). The SDK must return the same
// values, a stream the same chunks, and the recorder the same records.

// tap records every Read of every response body that passes through it,
// so a test can see how the cassette handed the bytes to the SDK.
type tap struct {
	mu    sync.Mutex
	reads [][]string // per response, in order
}

func (tp *tap) middleware() middleware.Middleware {
	return func(next http.RoundTripper) http.RoundTripper {
		return rtFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err != nil {
				return resp, err
			}
			tp.mu.Lock()
			i := len(tp.reads)
			tp.reads = append(tp.reads, nil)
			tp.mu.Unlock()
			resp.Body = &tapBody{ReadCloser: resp.Body, tp: tp, i: i}
			return resp, nil
		})
	}
}

type tapBody struct {
	io.ReadCloser
	tp *tap
	i  int
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.tp.mu.Lock()
		b.tp.reads[b.i] = append(b.tp.reads[b.i], string(p[:n]))
		b.tp.mu.Unlock()
	}
	return n, err
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// run is one pass of an SDK call through recorder, extra middleware, tap
// and cassette.
type run struct {
	client *http.Client
	rec    *middleware.Recorder
	tap    *tap
	cas    *replay.Cassette
}

func newRun(t *testing.T, path string, mode replay.Mode, inner ...middleware.Middleware) *run {
	t.Helper()
	r := &run{rec: middleware.NewRecorder(), tap: &tap{}, cas: open(t, path, replay.WithMode(mode))}
	t.Cleanup(func() { r.rec.Close() })
	mws := append([]middleware.Middleware{r.rec.Middleware()}, inner...)
	mws = append(mws, r.tap.middleware(), r.cas.Middleware())
	base := &http.Client{}
	if mode == replay.ModeReplay {
		base.Transport = noNetwork{t}
	}
	r.client = middleware.NewClient(base, mws...)
	return r
}

// records closes the run and returns its history, without what differs
// from run to run.
func (r *run) records(t *testing.T) []record.Record {
	t.Helper()
	require.NoError(t, r.cas.Close())
	require.NoError(t, r.rec.Close())
	rs := r.rec.History().Records()
	for i := range rs {
		assert.NoError(t, rs[i].Validate())
		rs[i].CallID, rs[i].Timestamp, rs[i].DurationMS, rs[i].TimeToFirstChunkMS = "", "", 0, 0 // timings differ run to run
		// The live run's server is a fake; the replay's, provider.invalid.
		rs[i].ServerAddress, rs[i].ServerPort = "", 0
		if rs[i].TraceInferred {
			rs[i].TraceID = "" // a fresh conversation's id is new each run
		}
	}
	return rs
}

// result is what a scenario returns: the SDK's values and the number of
// chunks a stream gave (its Recv or Next calls).
type result struct {
	values any
	chunks int
}

// recordAndReplay runs call against a fake provider answering replies,
// recording, then again from the cassette with the provider gone. It
// checks what every scenario must hold and returns the replay's records
// and tap for more.
func recordAndReplay(t *testing.T, replies []reply, inner func() []middleware.Middleware, call func(t *testing.T, base string, hc *http.Client) result) ([]record.Record, *tap) {
	t.Helper()
	if inner == nil {
		inner = func() []middleware.Middleware { return nil }
	}
	path := cassettePath(t)
	srv := newFake(t, replies...)
	live := newRun(t, path, replay.ModeRecord, inner()...)
	liveResult := call(t, srv.URL(), live.client)
	liveRecords := live.records(t)
	hits := srv.hits.Load()
	srv.srv.Close()
	assert.Len(t, lines(t, path), int(hits), "one line per HTTP exchange, retries included")
	if os.Getenv("DEBUG_CASSETTE") != "" {
		t.Log(strings.Join(lines(t, path), "\n"))
	}

	played := newRun(t, path, replay.ModeReplay, inner()...)
	playedResult := call(t, "http://provider.invalid", played.client)
	playedRecords := played.records(t)

	assert.Equal(t, liveResult, playedResult, "the SDK returns the same values, and the same number of chunks")
	assert.Equal(t, liveRecords, playedRecords, "the recorder writes the same records")
	assert.Empty(t, played.cas.Unused(), "every recorded exchange was replayed")
	require.Len(t, playedRecords, 1, "one logical call, one record")
	return playedRecords, played.tap
}

// assertFramesApart checks that each server-sent event of stream reached
// the SDK by Reads of its own: every event boundary is a Read boundary.
func assertFramesApart(t *testing.T, stream []byte, reads []string) {
	t.Helper()
	require.Equal(t, string(stream), strings.Join(reads, ""))
	ends := map[int]bool{}
	n := 0
	for _, r := range reads {
		n += len(r)
		ends[n] = true
	}
	n = 0
	for i, e := range events(stream) {
		n += len(e)
		assert.True(t, ends[n], "event %d ends a Read", i)
	}
	assert.GreaterOrEqual(t, len(reads), len(events(stream)))
}

// 429 then 200, as the providers send them, with a short Retry-After so
// the SDKs' waits stay short.
func rateLimited(t *testing.T, errFile string, ok reply) []reply {
	return []reply{{status: 429, body: testdata(t, errFile), header: map[string]string{"Retry-After-Ms": "1", "Retry-After": "0", "X-Ratelimit-Remaining-Requests": "0"}}, ok}
}

// --- go-openai ---

func goOpenAIClient(base string, hc *http.Client) *goopenai.Client {
	cfg := goopenai.DefaultConfig("sk-test-goopenai-0123456789abcdef")
	cfg.BaseURL = base + "/v1"
	cfg.HTTPClient = hc
	return goopenai.NewClientWithConfig(cfg)
}

var goOpenAIRequest = goopenai.ChatCompletionRequest{
	Model:    "gpt-3.5-turbo",
	Messages: []goopenai.ChatCompletionMessage{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "How are you?"}},
}

func TestGoOpenAI(t *testing.T) {
	chat := func(t *testing.T, base string, hc *http.Client) result {
		resp, err := goOpenAIClient(base, hc).CreateChatCompletion(context.Background(), goOpenAIRequest)
		require.NoError(t, err)
		return result{values: resp}
	}
	t.Run("plain", func(t *testing.T) {
		recs, _ := recordAndReplay(t, []reply{{body: testdata(t, "openai/openai_chat_response.json")}}, nil, chat)
		assert.Equal(t, "chat.completion", recs[0].Outcome.ValueClass)
		assert.Equal(t, 44, recs[0].Usage.TotalTokens)
	})
	t.Run("stream", func(t *testing.T) {
		stream := testdata(t, "openai/openai_chat_stream.sse")
		recs, tp := recordAndReplay(t, []reply{{frames: events(stream)}}, nil, func(t *testing.T, base string, hc *http.Client) result {
			req := goOpenAIRequest
			req.Stream = true
			req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
			s, err := goOpenAIClient(base, hc).CreateChatCompletionStream(context.Background(), req)
			require.NoError(t, err)
			defer s.Close()
			var chunks []goopenai.ChatCompletionStreamResponse
			for {
				chunk, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return result{values: chunks, chunks: len(chunks)}
				}
				require.NoError(t, err)
				chunks = append(chunks, chunk)
			}
		})
		require.Len(t, tp.reads, 1)
		assertFramesApart(t, stream, tp.reads[0])
		assert.Equal(t, "tool_calls", recs[0].Outcome.FinishReason, "the recorder parsed the replayed stream")
		assert.Equal(t, 60, recs[0].Usage.TotalTokens)
	})
	t.Run("retry", func(t *testing.T) {
		// go-openai does not retry; middleware.Retry, inside the recorder,
		// does.
		retry := func() []middleware.Middleware {
			return []middleware.Middleware{middleware.Retry(middleware.RetryPolicy{BaseDelay: 1})}
		}
		recs, _ := recordAndReplay(t, rateLimited(t, "openai/openai_error_429.json", reply{body: testdata(t, "openai/openai_chat_response.json")}), retry, chat)
		assert.Equal(t, 2, recs[0].Attempts)
		assert.True(t, recs[0].Outcome.OK)
	})
}

// --- openai-go ---

func openAIGoClient(base string, hc *http.Client) *openaisdk.Client {
	c := openaisdk.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(hc))
	return &c
}

var openAIGoParams = openaisdk.ChatCompletionNewParams{
	Model:    "gpt-3.5-turbo",
	Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.SystemMessage("Be kind."), openaisdk.UserMessage("How are you?")},
}

func TestOpenAIGo(t *testing.T) {
	chat := func(t *testing.T, base string, hc *http.Client) result {
		resp, err := openAIGoClient(base, hc).Chat.Completions.New(context.Background(), openAIGoParams)
		require.NoError(t, err)
		return result{values: []string{resp.RawJSON(), resp.Choices[0].Message.Content}}
	}
	t.Run("plain", func(t *testing.T) {
		recs, _ := recordAndReplay(t, []reply{{body: testdata(t, "openai/openai_chat_response.json")}}, nil, chat)
		assert.Equal(t, "gpt-3.5-turbo-0125", recs[0].Model)
	})
	t.Run("stream", func(t *testing.T) {
		stream := testdata(t, "openai/openai_chat_stream.sse")
		recs, tp := recordAndReplay(t, []reply{{frames: events(stream)}}, nil, func(t *testing.T, base string, hc *http.Client) result {
			params := openAIGoParams
			params.StreamOptions = openaisdk.ChatCompletionStreamOptionsParam{IncludeUsage: openaisdk.Bool(true)}
			s := openAIGoClient(base, hc).Chat.Completions.NewStreaming(context.Background(), params)
			defer s.Close()
			var raw []string
			var acc openaisdk.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
				raw = append(raw, s.Current().RawJSON())
			}
			require.NoError(t, s.Err())
			return result{values: []any{raw, acc.Choices[0].Message.ToolCalls[0].Function.Arguments, acc.Usage.TotalTokens}, chunks: len(raw)}
		})
		assertFramesApart(t, stream, tp.reads[0])
		assert.Equal(t, 60, recs[0].Usage.TotalTokens)
	})
	t.Run("retry", func(t *testing.T) {
		recs, tp := recordAndReplay(t, rateLimited(t, "openai/openai_error_429.json", reply{body: testdata(t, "openai/openai_chat_response.json")}), nil, chat)
		assert.Equal(t, 2, recs[0].Attempts, "the SDK's own retry, replayed, folds into one record")
		assert.Len(t, tp.reads, 2)
	})
}

// --- genai ---

func genaiClient(t *testing.T, base string, hc *http.Client, retry *genai.HTTPRetryOptions) *genai.Client {
	t.Helper()
	// Backend, APIKey and BaseURL set explicitly: genai would otherwise
	// read GOOGLE_GEMINI_BASE_URL and friends from the environment.
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
	generate := func(retry *genai.HTTPRetryOptions) func(t *testing.T, base string, hc *http.Client) result {
		return func(t *testing.T, base string, hc *http.Client) result {
			resp, err := genaiClient(t, base, hc, retry).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Where is Google's headquarters?"), nil)
			require.NoError(t, err)
			return result{values: resp}
		}
	}
	t.Run("plain", func(t *testing.T) {
		recs, _ := recordAndReplay(t, []reply{{body: testdata(t, "gemini/gemini_generate_response.json")}}, nil, generate(nil))
		assert.Equal(t, 29, recs[0].Usage.TotalTokens)
	})
	t.Run("stream", func(t *testing.T) {
		stream := testdata(t, "gemini/gemini_stream.sse")
		recs, tp := recordAndReplay(t, []reply{{frames: events(stream)}}, nil, func(t *testing.T, base string, hc *http.Client) result {
			var out []*genai.GenerateContentResponse
			for resp, err := range genaiClient(t, base, hc, nil).Models.GenerateContentStream(context.Background(), "gemini-2.0-flash", genai.Text("What is the capital of Wyoming?"), nil) {
				require.NoError(t, err)
				out = append(out, resp)
			}
			return result{values: out, chunks: len(out)}
		})
		assertFramesApart(t, stream, tp.reads[0])
		assert.Equal(t, 17, recs[0].Usage.TotalTokens)
		assert.Equal(t, "gemini.models.streamGenerateContent", recs[0].MethodName)
	})
	t.Run("retry", func(t *testing.T) {
		zero, small, attempts := 0.0, 0.001, int32(3)
		retry := &genai.HTTPRetryOptions{Attempts: &attempts, InitialDelay: &small, MaxDelay: &small, Jitter: &zero}
		recs, _ := recordAndReplay(t, rateLimited(t, "gemini/gemini_error.json", reply{body: testdata(t, "gemini/gemini_generate_response.json")}), nil, generate(retry))
		assert.Equal(t, 2, recs[0].Attempts, "genai resends the same request; the recorder folds it as it does live")
	})
}

// --- Anthropic ---

func anthropicClient(base string, hc *http.Client) *anthropic.Client {
	c := anthropic.NewClient(
		anthropicoption.WithAPIKey("sk-ant-test-0123456789abcdefghij"),
		anthropicoption.WithBaseURL(base),
		anthropicoption.WithHTTPClient(hc),
	)
	return &c
}

var anthropicParams = anthropic.MessageNewParams{
	Model:     "claude-sonnet-4-5",
	MaxTokens: 256,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Count to three."))},
}

func TestAnthropic(t *testing.T) {
	message := func(t *testing.T, base string, hc *http.Client) result {
		msg, err := anthropicClient(base, hc).Messages.New(context.Background(), anthropicParams)
		require.NoError(t, err)
		return result{values: []any{msg.RawJSON(), msg.Content[0].Text, msg.Usage.OutputTokens}}
	}
	t.Run("plain", func(t *testing.T) {
		recs, _ := recordAndReplay(t, []reply{{body: testdata(t, "anthropic_message.json")}}, nil, message)
		assert.True(t, recs[0].Outcome.OK)
	})
	t.Run("stream", func(t *testing.T) {
		stream := testdata(t, "anthropic_stream.sse")
		recs, tp := recordAndReplay(t, []reply{{frames: events(stream)}}, nil, func(t *testing.T, base string, hc *http.Client) result {
			s := anthropicClient(base, hc).Messages.NewStreaming(context.Background(), anthropicParams)
			defer s.Close()
			var msg anthropic.Message
			var kinds []string
			for s.Next() {
				ev := s.Current()
				require.NoError(t, msg.Accumulate(ev))
				kinds = append(kinds, ev.Type)
			}
			require.NoError(t, s.Err())
			return result{values: []any{kinds, msg.Content[0].Text, msg.StopReason, msg.Usage.OutputTokens}, chunks: len(kinds)}
		})
		assertFramesApart(t, stream, tp.reads[0])
		assert.Equal(t, "anthropic.messages.create", recs[0].MethodName)
		assert.Equal(t, "end_turn", recs[0].Outcome.FinishReason, "the recorder parsed the replayed stream")
		assert.Equal(t, 23, recs[0].Usage.TotalTokens)
	})
	t.Run("retry", func(t *testing.T) {
		recs, _ := recordAndReplay(t, rateLimited(t, "anthropic_error_429.json", reply{body: testdata(t, "anthropic_message.json")}), nil, message)
		assert.Equal(t, 2, recs[0].Attempts)
	})
}

// A miss reaches the caller through the SDK, as the SDK's error.
func TestAMissReachesTheSDKCaller(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: testdata(t, "openai/openai_chat_response.json")})
	live := newRun(t, path, replay.ModeRecord)
	_, err := goOpenAIClient(srv.URL(), live.client).CreateChatCompletion(context.Background(), goOpenAIRequest)
	require.NoError(t, err)
	live.records(t)

	played := newRun(t, path, replay.ModeReplay)
	req := goOpenAIRequest
	req.Messages = append([]goopenai.ChatCompletionMessage(nil), req.Messages...)
	req.Messages[1].Content = "How old are you?"
	_, err = goOpenAIClient("http://provider.invalid", played.client).CreateChatCompletion(context.Background(), req)
	var miss *replay.MissError
	require.ErrorAs(t, err, &miss)
	assert.Equal(t, []replay.Difference{{Field: "body.messages.1.content", Recorded: `"How are you?"`, Got: `"How old are you?"`}}, miss.Differences)

	_, err = genaiClient(t, "http://provider.invalid", played.client, nil).Models.GenerateContent(context.Background(), "gemini-2.0-flash", genai.Text("Hi"), nil)
	require.ErrorAs(t, err, &miss, "genai too")
	_, err = openAIGoClient("http://provider.invalid", played.client).Chat.Completions.New(context.Background(), openAIGoParams, option.WithMaxRetries(0))
	require.ErrorAs(t, err, &miss, "openai-go too")
	_, err = anthropicClient("http://provider.invalid", played.client).Messages.New(context.Background(), anthropicParams, anthropicoption.WithMaxRetries(0))
	require.ErrorAs(t, err, &miss, "and Anthropic's")
}
