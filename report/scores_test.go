package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
	"github.com/llmhistory/llmhistory/store"
)

func TestScoresByModelAndTag(t *testing.T) {
	mk := func(id, trace, model string, tags ...string) record.Record {
		return record.Record{CallID: id, TraceID: trace, Timestamp: "2026-03-01T10:00:00Z", Speaker: "user", MethodName: "openai.chat.completions.create",
			Args: json.RawMessage(`[]`), Kwargs: json.RawMessage(`{}`), Outcome: record.Success("chat.completion"), Model: model, Tags: tags}
	}
	sc := func(call, trace, name string, v store.Value) store.Score {
		return store.Score{CallID: call, TraceID: trace, Name: name, Value: v, Source: store.SourceCode, Author: "a"}
	}
	b := report.NewBuilder(report.Options{Scores: []store.Score{
		sc("c1", "", "helpfulness", store.Number(0.2)),
		sc("c2", "", "helpfulness", store.Number(0.8)),
		sc("c3", "", "helpfulness", store.Number(1)),
		sc("c1", "", "thumbs", store.Bool(true)),
		sc("c3", "", "thumbs", store.Bool(false)),
		sc("", "t2", "topic", store.Category("billing")),
		sc("gone", "", "thumbs", store.Bool(true)), // a call not in the history counts nowhere
	}})
	for _, r := range []record.Record{mk("c1", "t1", "gpt-a", "support"), mk("c2", "t1", "gpt-a", "support", "beta"), mk("c3", "t2", "gpt-b"), mk("c4", "t2", "gpt-b")} {
		b.Add(r)
	}
	r := b.Report()
	got := map[string]report.ScoreGroup{}
	for _, g := range r.Scores {
		got[g.Name+"/"+g.By+"/"+g.Key] = g
	}
	require.Len(t, got, 11)
	mean := func(k string) float64 { require.NotNil(t, got[k].Mean, k); return *got[k].Mean }
	assert.Equal(t, int64(2), got["helpfulness/model/gpt-a"].Count)
	assert.InDelta(t, 0.5, mean("helpfulness/model/gpt-a"), 1e-9)
	assert.InDelta(t, 1.0, mean("helpfulness/model/gpt-b"), 1e-9)
	assert.InDelta(t, 0.5, mean("helpfulness/tag/support"), 1e-9)
	assert.InDelta(t, 0.8, mean("helpfulness/tag/beta"), 1e-9)
	assert.InDelta(t, 1.0, mean("helpfulness/tag/(none)"), 1e-9)
	assert.InDelta(t, 0.0, mean("thumbs/tag/(none)"), 1e-9, "c3's false")
	assert.Equal(t, map[string]int64{"billing": 1}, got["topic/model/gpt-b"].Labels, "a conversation's score, under its first call")
	assert.Nil(t, got["topic/model/gpt-b"].Mean)
	assert.Equal(t, "model", r.Scores[0].By, "models before tags")

	var md bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "## Scores")
	assert.Contains(t, md.String(), "| helpfulness | model | gpt-a | 2 | mean 0.5 |")
	assert.Contains(t, md.String(), "| topic | model | gpt-b | 1 | billing 1 |")
	var html bytes.Buffer
	require.NoError(t, r.WriteHTML(&html))
	assert.Contains(t, html.String(), `<section id="scores">`)
	assert.Contains(t, html.String(), "<td>topic</td><td>model</td><td>gpt-b</td>")
	assert.Equal(t, 2, strings.Count(html.String(), "<td>topic</td>"), "by model and by tag")

	// Without scores, no section.
	md.Reset()
	require.NoError(t, report.NewBuilder(report.Options{}).Report().WriteMarkdown(&md))
	assert.NotContains(t, md.String(), "## Scores")
}
