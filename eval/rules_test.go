package eval_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
)

const rulesExample = `{
  "filter": {"since": "24h", "tags": ["checkout"], "model": "gpt-4o-mini", "scores": ["!helpfulness"], "min_duration": "1s"},
  "evaluators": [
    {"type": "json_valid"},
    {"type": "json_schema", "name": "order", "schema_file": "order.schema.json"},
    {"type": "json_schema", "name": "inline", "schema": {"type": "object"}},
    {"type": "tool_args", "tools": {"f": {"type": "object"}}},
    {"type": "regex", "name": "order_id", "pattern": "ORD-[0-9]+"},
    {"type": "contains", "name": "apology", "text": "sorry"},
    {"type": "latency", "max": "2s"},
    {"type": "cost", "max_usd": 0.01},
    {"type": "answer"},
    {"type": "judge", "name": "helpfulness", "rubric": "The answer solves the user's problem.",
     "scale": {"kind": "number", "min": 0, "max": 1}, "model": "gpt-4o-mini", "api_key_env": "JUDGE_KEY"},
    {"type": "judge", "name": "topic", "rubric": "Which topic?", "conversation": true,
     "scale": {"kind": "category", "categories": ["billing", "other"]}, "model": "llama3", "base_url": "http://127.0.0.1:11434/v1"}
  ],
  "budget": {"max_usd": 1, "max_calls": 500}
}`

func TestParseRules(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "order.schema.json"), []byte(orderSchema), 0o600))
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	env := func(k string) string {
		if k == "JUDGE_KEY" {
			return "sk-test-key"
		}
		return ""
	}
	r, err := eval.ParseRules([]byte(rulesExample), eval.RulesOptions{Dir: dir, Now: now, Getenv: env})
	require.NoError(t, err)
	assert.Equal(t, now.Add(-24*time.Hour), r.Filter.Since)
	assert.Equal(t, []string{"checkout"}, r.Filter.Tags)
	assert.Equal(t, "gpt-4o-mini", r.Filter.Model)
	assert.Equal(t, time.Second, r.Filter.MinDuration)
	require.Len(t, r.Filter.Scores, 1)
	assert.Equal(t, "!helpfulness", r.Filter.Scores[0].String())
	var names []string
	for _, e := range r.Evaluators {
		names = append(names, e.Info().Name)
	}
	assert.Equal(t, []string{"json_valid", "order", "inline", "tool_args", "order_id", "apology", "latency_ok", "cost_ok", "answer", "helpfulness", "topic"}, names)
	assert.True(t, r.Evaluators[10].Info().Conversation)
	assert.Equal(t, 1.0, r.Budget.MaxUSD)
	assert.Equal(t, 500, r.Budget.MaxCalls)

	for name, tc := range map[string]struct{ edit, want string }{
		"unknown key":     {`"budget"`, `"budgte"`},
		"unknown type":    {`"type": "answer"`, `"type": "answr"`},
		"missing file":    {`order.schema.json`, `nope.json`},
		"bad schema":      {`"schema": {"type": "object"}`, `"schema": {"type": 1}`},
		"bad regex":       {`ORD-[0-9]+`, `ORD-[0-9+`},
		"bad latency":     {`"max": "2s"`, `"max": "soon"`},
		"bad since":       {`"24h"`, `"yesterday"`},
		"bad score":       {`"!helpfulness"`, `"helpfulness<"`},
		"no key":          {`JUDGE_KEY`, `OTHER_KEY`},
		"no scale":        {`"scale": {"kind": "number", "min": 0, "max": 1}, `, ``},
		"bad scale":       {`"kind": "number"`, `"kind": "stars"`},
		"two values":      {`"budget": {"max_usd": 1, "max_calls": 500}`, `"budget": {"max_usd": 1, "max_calls": 500}} {`},
		"both schema ...": {`"schema": {"type": "object"}`, `"schema": {"type": "object"}, "schema_file": "order.schema.json"`},
	} {
		bad := strings.Replace(rulesExample, tc.edit, tc.want, 1)
		require.NotEqual(t, rulesExample, bad, name)
		_, err := eval.ParseRules([]byte(bad), eval.RulesOptions{Dir: dir, Now: now, Getenv: env})
		assert.ErrorIs(t, err, eval.ErrRules, name)
	}
	_, err = eval.ParseRules([]byte(`{"evaluators": []}`), eval.RulesOptions{})
	assert.ErrorIs(t, err, eval.ErrRules, "no evaluators")
}

func FuzzParseRules(f *testing.F) {
	f.Add([]byte(rulesExample))
	f.Add([]byte(`{"evaluators": [{"type": "json_valid"}]}`))
	f.Add([]byte(`{"evaluators": [{"type": "regex", "pattern": "a+"}], "filter": {"scores": ["x<1"]}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := eval.ParseRules(data, eval.RulesOptions{Dir: dir, Getenv: func(string) string { return "" }})
		if err != nil {
			if !errors.Is(err, eval.ErrRules) {
				t.Fatalf("%v is not ErrRules", err)
			}
			return
		}
		require.NotEmpty(t, r.Evaluators)
	})
}
