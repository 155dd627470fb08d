package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
)

// modelServer answers OpenAI's chat completions by model: the "big" one
// repeats the reference answers, the "small" one answers shorter; it
// counts the calls.
func modelServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	answers := map[string]map[string]string{
		"gpt-4o-mini": {
			"Capital of France?": "Paris.",
			"Capital of Spain?":  "Madrid.",
			"Largest planet?":    "Jupiter is the largest planet.",
		},
		"gpt-4.1-nano": {
			"Capital of France?": "Paris.",
			"Capital of Spain?":  "Barcelona, I think.",
			"Largest planet?":    "Jupiter.",
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		answer, ok := answers[req.Model][req.Messages[len(req.Messages)-1].Content]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"no such model","type":"invalid_request_error","code":"model_not_found"}}`)
			return
		}
		if req.Messages[0].Role == "system" && strings.Contains(req.Messages[0].Content, "shout") {
			answer = strings.ToUpper(answer)
		}
		c, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-x","object":"chat.completion","model":"`+req.Model+`","choices":[{"index":0,"message":{"role":"assistant","content":`+string(c)+`},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":`+itoa(len(body)/4)+`,"completion_tokens":`+itoa(len(answer)/4+1)+`,"total_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// questions is a dataset of three questions answered by gpt-4o-mini.
func questions() *eval.Dataset {
	d := &eval.Dataset{Name: "questions"}
	for _, qa := range [][2]string{
		{"Capital of France?", "Paris."},
		{"Capital of Spain?", "Madrid."},
		{"Largest planet?", "Jupiter is the largest planet."},
	} {
		d.Add(eval.Item{
			Input:     []record.Message{record.TextMessage(record.RoleSystem, "Answer briefly."), record.TextMessage(record.RoleUser, qa[0])},
			Params:    map[string]json.RawMessage{"model": json.RawMessage(`"gpt-4o-mini"`), "temperature": json.RawMessage(`0`)},
			Reference: ptrTo(record.TextMessage(record.RoleAssistant, qa[1])),
		})
	}
	return d
}

func swap(srv *httptest.Server, sinks ...record.Sink) eval.Experiment {
	return eval.Experiment{
		Name: "model-swap",
		Variants: []eval.Variant{
			{Name: "mini", Model: "gpt-4o-mini"},
			{Name: "nano", Model: "gpt-4.1-nano"},
		},
		Task:       eval.OpenAIChat(srv.URL+"/v1", "sk-test-0123456789abcdefghijklmnop"),
		Evaluators: []eval.Evaluator{eval.Similarity(), eval.ExactMatch()},
		Workers:    3,
		Sinks:      sinks,
	}
}

func TestRunExperiment(t *testing.T) {
	srv, calls := modelServer(t)
	mem := record.NewMemory(100)
	res, err := eval.RunExperiment(context.Background(), questions(), swap(srv, mem))
	require.NoError(t, err)
	require.Len(t, res.Trials, 6)
	assert.Equal(t, int64(6), calls.Load())
	for i, tr := range res.Trials {
		assert.Equal(t, []string{"mini", "nano"}[i%2], tr.Variant, "items in order, variants in order")
		assert.Empty(t, tr.Error)
		require.Len(t, tr.CallIDs, 1)
		require.Len(t, tr.Scores, 2)
		assert.Equal(t, "exact_match", tr.Scores[0].Name)
		assert.Equal(t, "similarity", tr.Scores[1].Name)
		assert.Positive(t, tr.InputTokens)
		assert.True(t, tr.Priced, "gpt-4o-mini and gpt-4.1-nano are in the price table")
		assert.Positive(t, tr.CostUSD)
	}
	spain := res.Trials[3]
	assert.Equal(t, "Barcelona, I think.", spain.Output.Text())
	assert.Equal(t, "false", spain.Scores[0].Value.String())

	recs := mem.Records()
	require.Len(t, recs, 6, "every trial is recorded into the sinks given")
	for _, r := range recs {
		assert.Contains(t, r.Tags, eval.ExperimentTag)
		assert.Equal(t, "model-swap", r.Metadata[eval.MetaExperiment])
		assert.Contains(t, []string{"mini", "nano"}, r.Metadata[eval.MetaVariant])
		assert.NotEmpty(t, r.Metadata[eval.MetaItem])
		assert.NotContains(t, string(r.AppendJSON(nil)), "sk-test-", "the key never reaches a record")
	}

	// Resumed from a complete result, nothing runs again.
	again := swap(srv)
	again.Previous = res
	res2, err := eval.RunExperiment(context.Background(), questions(), again)
	require.NoError(t, err)
	assert.Equal(t, int64(6), calls.Load(), "no call made")
	assert.Equal(t, res.Trials, res2.Trials)
}

// A variant's system prompt replaces the item's; a model the server does
// not know fails the trial, not the run.
func TestExperimentVariantsAndFailures(t *testing.T) {
	srv, _ := modelServer(t)
	e := swap(srv)
	e.Variants = []eval.Variant{{Name: "shout", System: "You shout."}, {Name: "gone", Model: "gpt-unknown"}}
	res, err := eval.RunExperiment(context.Background(), questions(), e)
	require.NoError(t, err)
	assert.Equal(t, "PARIS.", res.Trials[0].Output.Text())
	assert.Contains(t, res.Trials[1].Error, "HTTP 404")
	assert.Empty(t, res.Trials[1].Scores)

	e.Variants = []eval.Variant{{Name: "a"}, {Name: "a"}}
	_, err = eval.RunExperiment(context.Background(), questions(), e)
	assert.ErrorIs(t, err, eval.ErrExperiment)
}

// Given the same answers, the comparison is the same, byte for byte, in
// every format; the wins, losses and ties are the items'.
func TestCompareIsDeterministic(t *testing.T) {
	render := func() [3]string {
		srv, _ := modelServer(t)
		res, err := eval.RunExperiment(context.Background(), questions(), swap(srv))
		require.NoError(t, err)
		c, err := eval.Compare(eval.CompareOptions{NoLatency: true}, res)
		require.NoError(t, err)
		var md, js, html bytes.Buffer
		require.NoError(t, c.WriteMarkdown(&md))
		require.NoError(t, c.WriteJSON(&js))
		require.NoError(t, c.WriteHTML(&html))
		return [3]string{md.String(), js.String(), html.String()}
	}
	first, second := render(), render()
	assert.Equal(t, first, second)

	var c eval.Comparison
	require.NoError(t, json.Unmarshal([]byte(first[1]), &c))
	require.Len(t, c.Summary, 4, "two scores, two runs")
	sim := c.Summary[3] // similarity, nano
	assert.Equal(t, "similarity", sim.Score)
	assert.Equal(t, "nano", sim.Run)
	assert.Equal(t, [3]int{0, 2, 1}, [3]int{sim.Wins, sim.Losses, sim.Ties}, "Paris tied, Madrid and Jupiter lost")
	exact := c.Summary[1]
	assert.Equal(t, [3]int{0, 2, 1}, [3]int{exact.Wins, exact.Losses, exact.Ties})
	require.NotNil(t, c.Summary[0].Mean)
	assert.Equal(t, 1.0, *c.Summary[0].Mean, "the baseline repeats its references")
	assert.Contains(t, c.Items[1].Cells[1].Diff, "-Madrid.\n+Barcelona, I think.\n")
	assert.Empty(t, c.Items[0].Cells[1].Diff, "the same answer has no diff")
	assert.Contains(t, first[0], "| similarity | nano | 0.444 | 0 | 2 | 1 |")
	assert.Contains(t, first[2], `<td class="c-n c-loss"`)
}
