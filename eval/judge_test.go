package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// fakeModel answers every prompt with reply, after delay, and keeps the
// last prompt.
type fakeModel struct {
	reply  eval.Reply
	err    error
	delay  time.Duration
	last   atomic.Pointer[eval.Prompt]
	calls  atomic.Int32
	active atomic.Int32
	peak   atomic.Int32
}

func (m *fakeModel) Complete(ctx context.Context, p eval.Prompt) (eval.Reply, error) {
	m.calls.Add(1)
	n := m.active.Add(1)
	defer m.active.Add(-1)
	for {
		old := m.peak.Load()
		if n <= old || m.peak.CompareAndSwap(old, n) {
			break
		}
	}
	m.last.Store(&p)
	select {
	case <-time.After(m.delay):
	case <-ctx.Done():
		return eval.Reply{}, ctx.Err()
	}
	return m.reply, m.err
}

func helpfulness(t *testing.T, m eval.Model, o eval.JudgeOptions) *eval.Judge {
	t.Helper()
	o.Name, o.Rubric, o.Model = "helpfulness", "The answer helps the user with what they asked.", m
	if o.Scale.Kind == 0 {
		o.Scale = eval.Scale{Kind: store.NumberValue, Min: 0, Max: 1}
	}
	j, err := eval.NewJudge(o)
	require.NoError(t, err)
	return j
}

func TestJudgeScores(t *testing.T) {
	m := &fakeModel{reply: eval.Reply{Text: `{"score": 0.8, "reason": "It answers."}`}}
	j := helpfulness(t, m, eval.JudgeOptions{})
	r := call("Paris is the capital of France.")
	scores, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{r}})
	require.NoError(t, err)
	require.Len(t, scores, 1)
	sc := scores[0]
	assert.Equal(t, "helpfulness", sc.Name)
	assert.Equal(t, "0.8", sc.Value.String())
	assert.Equal(t, "It answers.", sc.Comment)
	assert.Equal(t, store.SourceModel, sc.Source)
	assert.Equal(t, "c1", sc.CallID)
	assert.Equal(t, "helpfulness@"+j.Info().Version, sc.Author)

	p := m.last.Load()
	assert.Equal(t, eval.DefaultSystem, p.System)
	assert.Contains(t, p.User, "The answer helps the user")
	assert.Contains(t, p.User, `[{"role":"user","content":"hi"}]`)
	assert.Contains(t, p.User, "Paris is the capital of France.")
	assert.Contains(t, p.User, `"score" is a number from 0 to 1.`)

	// Nothing to judge: no call made.
	m.calls.Store(0)
	for _, r := range []record.Record{call(""), failed(call("x"))} {
		scores, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{r}})
		require.NoError(t, err)
		assert.Empty(t, scores)
	}
	assert.Zero(t, m.calls.Load())

	// A conversation's judge scores the trace.
	cj := helpfulness(t, m, eval.JudgeOptions{Conversation: true})
	r2 := call("And Spain's?")
	r2.CallID = "c2"
	scores, err = eval.Score(context.Background(), cj, eval.Subject{Records: []record.Record{r, r2}})
	require.NoError(t, err)
	require.Len(t, scores, 1)
	assert.Equal(t, "", scores[0].CallID)
	assert.Equal(t, "t1", scores[0].TraceID)
	assert.NotEqual(t, j.Info().Version, cj.Info().Version)
}

func TestJudgeVerdictsThatAreNotScores(t *testing.T) {
	for name, tc := range map[string]struct {
		reply eval.Reply
		err   error
		want  error
	}{
		"prose":             {reply: eval.Reply{Text: "The answer is quite helpful, I'd say 0.8."}, want: eval.ErrVerdict},
		"prose then JSON":   {reply: eval.Reply{Text: `Verdict: {"score": 0.8}`}, want: eval.ErrVerdict},
		"out of range":      {reply: eval.Reply{Text: `{"score": 8}`}, want: eval.ErrVerdict},
		"a string score":    {reply: eval.Reply{Text: `{"score": "0.8"}`}, want: eval.ErrVerdict},
		"no score":          {reply: eval.Reply{Text: `{"reason": "fine"}`}, want: eval.ErrVerdict},
		"empty":             {reply: eval.Reply{Text: ""}, want: eval.ErrVerdict},
		"a refusal in text": {reply: eval.Reply{Text: "I'm sorry, but I can't help with evaluating this."}, want: eval.ErrRefused},
		"a refusal field":   {reply: eval.Reply{Refusal: "I cannot do that."}, want: eval.ErrRefused},
		"a model error":     {err: errors.New("502 Bad Gateway"), want: nil},
	} {
		t.Run(name, func(t *testing.T) {
			m := &fakeModel{reply: tc.reply, err: tc.err}
			scores, err := eval.Score(context.Background(), helpfulness(t, m, eval.JudgeOptions{}), eval.Subject{Records: []record.Record{call("Paris.")}})
			require.Error(t, err, "never a score of zero")
			assert.Empty(t, scores)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestJudgeTimeout(t *testing.T) {
	m := &fakeModel{reply: eval.Reply{Text: `{"score": 1}`}, delay: time.Minute}
	j := helpfulness(t, m, eval.JudgeOptions{Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{call("Paris.")}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestParseVerdict(t *testing.T) {
	num := eval.Scale{Kind: store.NumberValue, Min: 1, Max: 5}
	pass := eval.Scale{Kind: store.BoolValue}
	cat := eval.Scale{Kind: store.CategoryValue, Categories: []string{"on_topic", "off_topic"}}
	for _, tc := range []struct {
		text   string
		scale  eval.Scale
		value  string
		reason string
		err    error
	}{
		{`{"score": 4, "reason": "good"}`, num, "4", "good", nil},
		{" \n{\"score\":1}\n ", num, "1", "", nil},
		{"```json\n{\"score\": 5}\n```", num, "5", "", nil},
		{"```\n{\"score\": 5}\n```", num, "5", "", nil},
		{`{"score": 0}`, num, "", "", eval.ErrVerdict},
		{`{"score": 5.5}`, num, "", "", eval.ErrVerdict},
		{`{"score": true}`, num, "", "", eval.ErrVerdict},
		{`{"score": 4, "confidence": 0.9}`, num, "", "", eval.ErrVerdict},
		{`{"score": 4, "reason": 7}`, num, "", "", eval.ErrVerdict},
		{`{"score": 4}{"score": 5}`, num, "", "", eval.ErrVerdict},
		{`[4]`, num, "", "", eval.ErrVerdict},
		{`4`, num, "", "", eval.ErrVerdict},
		{`{"score": true}`, pass, "true", "", nil},
		{`{"score": false, "reason": "wrong city"}`, pass, "false", "wrong city", nil},
		{`{"score": 1}`, pass, "", "", eval.ErrVerdict},
		{`{"score": "off_topic"}`, cat, "off_topic", "", nil},
		{`{"score": "Off_topic"}`, cat, "", "", eval.ErrVerdict},
		{"I am unable to assist with grading.", pass, "", "", eval.ErrRefused},
	} {
		v, reason, err := eval.ParseVerdict(tc.text, tc.scale)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, "%q", tc.text)
			assert.Equal(t, store.NoValue, v.Kind(), "%q", tc.text)
			continue
		}
		if assert.NoError(t, err, "%q", tc.text) {
			assert.Equal(t, tc.value, v.String(), "%q", tc.text)
			assert.Equal(t, tc.reason, reason, "%q", tc.text)
		}
	}
}

func TestNewJudgeRefusesIncompleteOptions(t *testing.T) {
	m := &fakeModel{}
	ok := eval.JudgeOptions{Name: "h", Rubric: "r", Model: m, Scale: eval.Scale{Kind: store.BoolValue}}
	_, err := eval.NewJudge(ok)
	require.NoError(t, err)
	for name, change := range map[string]func(*eval.JudgeOptions){
		"no name":         func(o *eval.JudgeOptions) { o.Name = "" },
		"no rubric":       func(o *eval.JudgeOptions) { o.Rubric = " " },
		"no model":        func(o *eval.JudgeOptions) { o.Model = nil },
		"no scale":        func(o *eval.JudgeOptions) { o.Scale = eval.Scale{} },
		"empty range":     func(o *eval.JudgeOptions) { o.Scale = eval.Scale{Kind: store.NumberValue, Min: 1, Max: 1} },
		"no categories":   func(o *eval.JudgeOptions) { o.Scale = eval.Scale{Kind: store.CategoryValue} },
		"broken template": func(o *eval.JudgeOptions) { o.Template = "{{.Rubric" },
	} {
		o := ok
		change(&o)
		_, err := eval.NewJudge(o)
		assert.Error(t, err, name)
	}
}

func TestBudgetStopsJudges(t *testing.T) {
	m := &fakeModel{reply: eval.Reply{Text: `{"score": 1}`, Model: "gpt-4o-mini", Usage: &record.Usage{InputTokens: 1_000_000, OutputTokens: 0, TotalTokens: 1_000_000}}}
	b := &eval.Budget{MaxUSD: 0.2}
	j := helpfulness(t, m, eval.JudgeOptions{Budget: b})
	var n int
	for range 10 {
		_, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{call("x")}})
		if err != nil {
			require.ErrorIs(t, err, eval.ErrBudget)
			break
		}
		n++
	}
	usd, calls := b.Spent()
	// gpt-4o-mini input is $0.15 a million tokens: two calls pass $0.2.
	assert.Equal(t, 2, n)
	assert.Equal(t, 2, calls)
	assert.InDelta(t, 0.30, usd, 0.001)

	byCalls := &eval.Budget{MaxCalls: 3}
	j = helpfulness(t, m, eval.JudgeOptions{Budget: byCalls})
	for i := range 5 {
		_, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{call("x")}})
		if i < 3 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, eval.ErrBudget)
		}
	}
}

// openAIServer answers chat completions with content, and keeps the
// requests it got.
func openAIServer(t *testing.T, content string) (*httptest.Server, *atomic.Pointer[[]byte]) {
	var last atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last.Store(&b)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test-0123456789abcdefghijklmnop" {
			http.Error(w, `{"error":{"message":"no","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		c, _ := json.Marshal(content)
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":`+string(c)+`},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":12,"total_tokens":132}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &last
}

func TestJudgeThroughTheRecorderIsRecordedAndTagged(t *testing.T) {
	srv, last := openAIServer(t, `{"score": 0.9, "reason": "Direct and correct."}`)
	mem := record.NewMemory(100)
	rec := middleware.NewRecorder(middleware.WithSink(mem))
	m := &eval.OpenAIModel{Client: rec.Client(nil), BaseURL: srv.URL + "/v1", APIKey: "sk-test-0123456789abcdefghijklmnop", Model: "gpt-4o-mini"}
	j := helpfulness(t, m, eval.JudgeOptions{ModelName: "gpt-4o-mini"})

	scores, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{call("Paris.")}})
	require.NoError(t, err)
	require.Len(t, scores, 1)
	assert.Equal(t, "0.9", scores[0].Value.String())
	assert.Equal(t, "Direct and correct.", scores[0].Comment)

	var sent struct {
		Model          string            `json:"model"`
		Temperature    float64           `json:"temperature"`
		ResponseFormat map[string]string `json:"response_format"`
		Messages       []map[string]string
	}
	require.NoError(t, json.Unmarshal(*last.Load(), &sent))
	assert.Equal(t, "gpt-4o-mini", sent.Model)
	assert.Equal(t, "json_object", sent.ResponseFormat["type"])
	require.Len(t, sent.Messages, 2)
	assert.Contains(t, sent.Messages[1]["content"], "Paris.")

	require.NoError(t, rec.Close())
	recs := mem.Records()
	require.Len(t, recs, 1, "the judge's call is recorded")
	assert.Contains(t, recs[0].Tags, eval.Tag)
	assert.Equal(t, "c1", recs[0].Metadata["llmhistory.eval.judged"])
	assert.True(t, eval.IsEvaluation(&recs[0]))
	assert.NotContains(t, string(recs[0].Kwargs)+string(recs[0].Args), "sk-test", "the key never reaches a record")

	// Its own record is never judged.
	again, err := eval.Score(context.Background(), j, eval.Subject{Records: recs})
	require.NoError(t, err)
	assert.Empty(t, again)

	// An HTTP error is an error, with the provider's message.
	bad := &eval.OpenAIModel{BaseURL: srv.URL + "/v1", APIKey: "wrong", Model: "m"}
	_, err = helpfulness(t, bad, eval.JudgeOptions{}).Evaluate(context.Background(), eval.Subject{Records: []record.Record{call("x")}})
	require.ErrorContains(t, err, "401")
	assert.NotContains(t, err.Error(), "wrong")
}

// TestJudgeRealProvider asks a real model once, when OPENAI_API_KEY is
// set (LLMHISTORY_JUDGE_MODEL and OPENAI_BASE_URL may name another model
// and server).
func TestJudgeRealProvider(t *testing.T) {
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		t.Skip("OPENAI_API_KEY is not set")
	}
	model := os.Getenv("LLMHISTORY_JUDGE_MODEL")
	if model == "" {
		model = "gpt-4o-mini"
	}
	mem := record.NewMemory(10)
	rec := middleware.NewRecorder(middleware.WithSink(mem))
	m := &eval.OpenAIModel{Client: rec.Client(nil), BaseURL: os.Getenv("OPENAI_BASE_URL"), APIKey: key, Model: model}
	j, err := eval.NewJudge(eval.JudgeOptions{
		Name: "correct", Rubric: "The answer states the correct capital city of the country asked about.",
		Scale: eval.Scale{Kind: store.BoolValue}, Model: m, Timeout: time.Minute,
	})
	require.NoError(t, err)
	good := call("The capital of France is Paris.")
	good.Args = json.RawMessage(`[{"role":"user","content":"What is the capital of France?"}]`)
	wrong := good
	wrong.Output = answer("The capital of France is Lyon.")
	for _, tc := range []struct {
		r    record.Record
		want string
	}{{good, "true"}, {wrong, "false"}} {
		scores, err := eval.Score(context.Background(), j, eval.Subject{Records: []record.Record{tc.r}})
		require.NoError(t, err)
		require.Len(t, scores, 1)
		assert.Equal(t, tc.want, scores[0].Value.String(), "%s: %s", tc.r.Output.Text(), scores[0].Comment)
	}
	require.NoError(t, rec.Close())
	recs := mem.Records()
	require.Len(t, recs, 2)
	for _, r := range recs {
		assert.True(t, eval.IsEvaluation(&r))
		assert.False(t, strings.Contains(string(r.Args)+r.ErrorMessage, key))
	}
}
