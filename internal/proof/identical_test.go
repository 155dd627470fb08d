package proof

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// identicalCalls is how many logical calls each client makes in
// TestIdenticalConcurrentCalls: the 40,000 (about 5 s, a minute
// under the race detector), fewer with -short.
func identicalCalls() int {
	if testing.Short() {
		return 4000
	}
	return 40000
}

const identicalConcurrency = 64

// identicalServer answers every attempt at random: 10% 429, 5% 500, 5% a
// 200 cut half way (its Content-Length declared, then the connection
// dropped), the rest a proper 200. It counts the attempts it saw.
type identicalServer struct {
	*httptest.Server
	attempts atomic.Int64
}

func newIdenticalServer(t *testing.T, seed uint64) *identicalServer {
	s := &identicalServer{}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed))
	ok := []byte(`{"id":"chatcmpl-same","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"the same answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.attempts.Add(1)
		mu.Lock()
		x := rng.IntN(100)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case x < 10:
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`)
		case x < 15:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"oops","type":"server_error"}}`)
		case x < 20:
			w.Header().Set("Content-Length", strconv.Itoa(len(ok)))
			w.Write(ok[:len(ok)/2])
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler) // the connection drops mid-body
		default:
			w.Write(ok)
		}
	}))
	s.Server.Config.ErrorLog = discardLog
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestIdenticalConcurrentCalls is issue 26's first finding: 64 goroutines
// make the same call again and again (a batch job, a health probe)
// through Chain(transport, recorder, Retry) against a server that fails
// a fifth of the attempts. Every logical call must be recorded exactly
// once, its attempts counted: a failure held for its retry must not be
// claimed by an identical call from another goroutine, nor by the next
// call of its own goroutine.
func TestIdenticalConcurrentCalls(t *testing.T) {
	calls := identicalCalls()
	messages := []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "Is the service up?"}}
	clients := []struct {
		name string
		// call makes one logical call and reports whether it got its
		// response (an error is an answer too: the call ended).
		call func(ctx context.Context, url string, hc *http.Client) func(context.Context)
	}{
		{"go-openai", func(_ context.Context, url string, hc *http.Client) func(context.Context) {
			cfg := goopenai.DefaultConfig("sk-proof-0123456789abcdefghijklmnop")
			cfg.BaseURL, cfg.HTTPClient = url+"/v1", hc
			c := goopenai.NewClientWithConfig(cfg)
			return func(ctx context.Context) {
				_, _ = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: messages})
			}
		}},
		{"openai-go", func(_ context.Context, url string, hc *http.Client) func(context.Context) {
			c := openaisdk.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("sk-proof-0123456789abcdefghijklmnop"),
				option.WithHTTPClient(hc), option.WithMaxRetries(2), option.WithMaxRetryDelay(time.Millisecond))
			return func(ctx context.Context) {
				_, _ = c.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
					Model: "gpt-4o-mini", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("Is the service up?")},
				})
			}
		}},
	}
	for i, client := range clients {
		t.Run(client.name, func(t *testing.T) {
			t.Parallel()
			srv := newIdenticalServer(t, uint64(i+1))
			path := filepath.Join(t.TempDir(), "history.jsonl")
			sink, err := record.OpenJSONL(path)
			require.NoError(t, err)
			rec := middleware.NewRecorder(middleware.WithSink(sink), middleware.WithHistory(record.NewMemory(1)))
			base := http.DefaultTransport.(*http.Transport).Clone()
			base.MaxIdleConnsPerHost = identicalConcurrency
			defer base.CloseIdleConnections()
			hc := &http.Client{Transport: middleware.Chain(base, rec.Middleware(),
				middleware.Retry(middleware.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond}))}
			call := client.call(context.Background(), srv.URL, hc)

			var next atomic.Int64
			var wg sync.WaitGroup
			for range identicalConcurrency {
				wg.Go(func() {
					for next.Add(1) <= int64(calls) {
						call(context.Background()) // one bare context for all, as a batch job has
					}
				})
			}
			wg.Wait()
			require.NoError(t, rec.Close())
			st := rec.Stats()

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			recs, err := record.ReadJSONL(f)
			require.NoError(t, err)
			attempts := 0
			for _, r := range recs {
				attempts += r.Attempts
			}
			t.Logf("%d calls, %d attempts served: %d records, %d attempts recorded; stats %+v", calls, srv.attempts.Load(), len(recs), attempts, st)
			assert.Equal(t, calls, len(recs), "every logical call recorded exactly once")
			assert.EqualValues(t, srv.attempts.Load(), attempts, "every attempt counted in its call's record")
			assert.Zero(t, st.Dropped)
			assert.Zero(t, st.FoldedByContext, "no context tells these calls apart, and none was folded on one")
		})
	}
}

// TestIdenticalCallsSharingAContext: the same batch, but every call made
// under one context that is not a bare background, as a program that
// gives its workers one context does. Nothing tells such calls from a
// retry loop that keeps its call's context, so a call that follows its
// goroutine's held failure is folded into it, and counted: records plus
// the folds counted make the calls, to the one.
func TestIdenticalCallsSharingAContext(t *testing.T) {
	calls := identicalCalls() / 4
	srv := newIdenticalServer(t, 99)
	var recorded atomic.Int64
	rec := middleware.NewRecorder(middleware.WithHistory(record.NewMemory(1)), middleware.WithSink(record.SinkFunc(func(context.Context, record.Record) error {
		recorded.Add(1)
		return nil
	})))
	hc := &http.Client{Transport: middleware.Chain(http.DefaultTransport, rec.Middleware(),
		middleware.Retry(middleware.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond}))}
	cfg := goopenai.DefaultConfig("sk-proof-0123456789abcdefghijklmnop")
	cfg.BaseURL, cfg.HTTPClient = srv.URL+"/v1", hc
	c := goopenai.NewClientWithConfig(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range identicalConcurrency {
		wg.Go(func() {
			for next.Add(1) <= int64(calls) {
				_, _ = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini",
					Messages: []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "Is the service up?"}}})
			}
		})
	}
	wg.Wait()
	require.NoError(t, rec.Close())
	st := rec.Stats()
	t.Logf("%d calls: %d records, %d folded by context", calls, recorded.Load(), st.FoldedByContext)
	assert.Positive(t, st.FoldedByContext, "some calls followed a held failure of their context")
	assert.EqualValues(t, calls, recorded.Load()+int64(st.FoldedByContext), "every call is a record or a counted fold")
}
