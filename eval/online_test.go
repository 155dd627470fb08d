package eval_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// scoreList is a ScoreSink that keeps what it gets.
type scoreList struct {
	mu     sync.Mutex
	scores []store.Score
}

func (l *scoreList) AddScore(_ context.Context, sc store.Score) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scores = append(l.scores, sc)
	return nil
}

func (l *scoreList) all() []store.Score {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]store.Score(nil), l.scores...)
}

func chat(t *testing.T, client *http.Client, url, question string) {
	t.Helper()
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + question + `"}]}`
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-test-0123456789abcdefghijklmnop")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestOnlineJudgesASampleOffTheCallPath records 200 calls of an
// application through a recorder whose sinks include an online
// evaluation, with a code evaluator and a judge whose own client is the
// same recorder's.
func TestOnlineJudgesASampleOffTheCallPath(t *testing.T) {
	srv, _ := openAIServer(t, `{"score": 0.9, "reason": "fine"}`)
	var scores scoreList
	mem := record.NewMemory(1000)
	var judgeClient http.Client
	m := &eval.OpenAIModel{Client: &judgeClient, BaseURL: srv.URL + "/v1", APIKey: "sk-test-0123456789abcdefghijklmnop", Model: "gpt-4o-mini"}
	j := helpfulness(t, m, eval.JudgeOptions{})
	online := eval.NewOnline(&scores, []eval.Evaluator{eval.JSONValid(), j}, eval.OnlineOptions{Sample: 0.25, Workers: 2})
	rec := middleware.NewRecorder(middleware.WithSink(mem), middleware.WithSink(online))
	judgeClient = *rec.Client(nil)
	app := rec.Client(nil)
	for i := range 200 {
		chat(t, app, srv.URL, fmt.Sprintf("question %d", i))
	}
	// Flushed first: the online evaluation judges what it holds, and the
	// judge's calls reach the sinks while the recorder still takes them.
	require.NoError(t, rec.Flush())
	require.NoError(t, rec.Close())

	st := online.Stats()
	// The judge's own calls reach the sink too (same recorder), and are
	// never picked.
	assert.GreaterOrEqual(t, st.Seen, uint64(200))
	assert.InDelta(t, 50, float64(st.Sampled), 20, "about a quarter of 200")
	assert.Zero(t, st.Dropped)
	assert.Zero(t, st.Failed)
	got := scores.all()
	assert.Len(t, got, int(st.Sampled)*2, "json_valid and helpfulness on each picked call")
	judged := map[string]bool{}
	for _, sc := range got {
		judged[sc.CallID] = true
	}
	var evals, app200 int
	for _, r := range mem.Records() {
		if eval.IsEvaluation(&r) {
			evals++
			assert.False(t, judged[r.CallID], "a judge's call is never judged")
			continue
		}
		app200++
	}
	assert.Equal(t, 200, app200)
	assert.Equal(t, int(st.Sampled), evals, "one judge call per picked call, each recorded")

	// The sample is the same for the same call IDs.
	again := eval.NewOnline(&scoreList{}, []eval.Evaluator{eval.JSONValid()}, eval.OnlineOptions{Sample: 0.25})
	for _, r := range mem.Records() {
		require.NoError(t, again.Append(context.Background(), r))
	}
	require.NoError(t, again.Close())
	assert.Equal(t, st.Sampled, again.Stats().Sampled)
}

// blocking is an evaluator that waits until released, counting how many
// wait at once.
type blocking struct {
	release      chan struct{}
	mu           sync.Mutex
	active, peak int
	evaluated    int
}

func (b *blocking) Info() eval.Info {
	return eval.Info{Name: "slow", Version: "1", Source: store.SourceCode}
}

func (b *blocking) Evaluate(ctx context.Context, s eval.Subject) ([]store.Score, error) {
	b.mu.Lock()
	b.active++
	b.peak = max(b.peak, b.active)
	b.mu.Unlock()
	<-b.release
	b.mu.Lock()
	b.active--
	b.evaluated++
	b.mu.Unlock()
	return []store.Score{{Value: store.Bool(true)}}, nil
}

func TestOnlineIsBoundedAndNeverWaits(t *testing.T) {
	b := &blocking{release: make(chan struct{})}
	var scores scoreList
	online := eval.NewOnline(&scores, []eval.Evaluator{b}, eval.OnlineOptions{Sample: 1, Workers: 3, Queue: 10})
	start := time.Now()
	var dropped int
	appendCall := func(i int) {
		r := call("x")
		r.CallID = fmt.Sprintf("c%03d", i)
		if err := online.Append(context.Background(), r); err != nil {
			require.ErrorIs(t, err, record.ErrQueueFull)
			dropped++
		}
	}
	for i := range 3 {
		appendCall(i)
	}
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.active == 3
	}, 10*time.Second, time.Millisecond, "three workers busy")
	for i := 3; i < 100; i++ {
		appendCall(i)
	}
	assert.Less(t, time.Since(start), 5*time.Second, "Append never waits for an evaluation")
	// 3 in the workers, 10 queued: the rest dropped.
	assert.Equal(t, 87, dropped)
	assert.Equal(t, uint64(87), online.Stats().Dropped)
	close(b.release)
	require.NoError(t, online.Close())
	assert.Equal(t, 3, b.peak, "at most Workers at once")
	assert.Equal(t, 13, b.evaluated)
	assert.Len(t, scores.all(), 13)
	assert.ErrorIs(t, online.Append(context.Background(), call("x")), record.ErrClosed)

	// A conversation's evaluator is not run online.
	conv := helpfulness(t, &fakeModel{}, eval.JudgeOptions{Conversation: true})
	o2 := eval.NewOnline(&scores, []eval.Evaluator{conv}, eval.OnlineOptions{Sample: 1})
	require.NoError(t, o2.Append(context.Background(), call("x")))
	require.NoError(t, o2.Close())
	assert.Zero(t, o2.Stats().Scores)
}

// The sample is the fraction asked, over call IDs as the recorder makes
// them (ULIDs, many within one millisecond).
func TestOnlineSampleIsTheFractionAsked(t *testing.T) {
	for _, frac := range []float64{0.01, 0.1, 0.25, 0.5} {
		on := eval.NewOnline(&scoreList{}, nil, eval.OnlineOptions{Sample: frac, Queue: 100_000})
		const n = 20_000
		for range n {
			r := call("x")
			r.CallID = middleware.NewCallID()
			require.NoError(t, on.Append(context.Background(), r))
		}
		require.NoError(t, on.Close())
		// Five standard deviations of a binomial count.
		sd := math.Sqrt(n * frac * (1 - frac))
		assert.InDelta(t, n*frac, float64(on.Stats().Sampled), 5*sd, "fraction %v", frac)
	}
}
