package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// call returns a successful record that answered out.
func call(out string) record.Record {
	return record.Record{
		CallID: "c1", TraceID: "t1", Timestamp: "2026-11-21T09:30:00Z", Speaker: "user",
		MethodName: "openai.chat.completions.create", Args: json.RawMessage(`[{"role":"user","content":"hi"}]`),
		Kwargs: json.RawMessage(`{"model":"gpt-4o-mini"}`), Outcome: record.Success("chat.completion"),
		Output: answer(out), DurationMS: 100, Usage: &record.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8},
	}
}

// answer is a text answer, nil (not kept) when out is empty.
func answer(out string) *record.Message {
	if out == "" {
		return nil
	}
	m := record.TextMessage(record.RoleAssistant, out)
	return &m
}

// toolCall is a tool call part of a record's answer.
func toolCall(name, args string) record.Part {
	return record.Part{Type: record.PartToolCall, Name: name, Arguments: record.ArgumentsJSON(args)}
}

// withCalls returns r answering calls after its text.
func withCalls(r record.Record, calls ...record.Part) record.Record {
	m := record.Message{Role: record.RoleAssistant}
	if r.Output != nil {
		m.Parts = append(m.Parts, r.Output.Parts...)
	}
	r.Output = &m
	m.Parts = append(m.Parts, calls...)
	return r
}

// judge runs e on r and returns the one score it gives, or nil for none.
func judge(t *testing.T, e eval.Evaluator, r record.Record) *store.Score {
	t.Helper()
	scores, err := eval.Score(context.Background(), e, eval.Subject{Records: []record.Record{r}})
	require.NoError(t, err)
	require.LessOrEqual(t, len(scores), 1)
	if len(scores) == 0 {
		return nil
	}
	return &scores[0]
}

// want is a score's value and the start of its comment; a nil *want
// means no score.
type want struct {
	value   string
	comment string
}

func check(t *testing.T, e eval.Evaluator, r record.Record, w *want) {
	t.Helper()
	got := judge(t, e, r)
	if w == nil {
		assert.Nil(t, got, "want no score")
		return
	}
	require.NotNil(t, got, "want a score")
	assert.Equal(t, w.value, got.Value.String())
	assert.True(t, strings.HasPrefix(got.Comment, w.comment), "comment %q, want it to begin %q", got.Comment, w.comment)
	info := e.Info()
	assert.Equal(t, "c1", got.CallID)
	assert.Equal(t, "t1", got.TraceID)
	assert.Equal(t, store.SourceCode, got.Source)
	assert.Equal(t, info.Name+"@"+info.Version, got.Author)
	assert.WithinDuration(t, time.Now(), got.Time, time.Minute)
}

func failed(r record.Record) record.Record {
	r.Outcome = record.Failure(record.ErrorServer)
	return r
}

func TestJSONValid(t *testing.T) {
	e := eval.JSONValid()
	check(t, e, call(`{"a":[1,2]}`), &want{value: "true"})
	check(t, e, call(` 42 `), &want{value: "true"})
	check(t, e, call(`{"a":`), &want{value: "false", comment: "unexpected end of JSON input"})
	check(t, e, call("```json\n{}\n```"), &want{value: "false", comment: "invalid character"})
	check(t, e, call(`{} {}`), &want{value: "false", comment: "invalid character"})
	check(t, e, call(""), nil)
	check(t, e, failed(call(`{}`)), nil)
}

const orderSchema = `{
	"type": "object",
	"properties": {
		"id": {"type": "string", "pattern": "^ORD-[0-9]+$"},
		"qty": {"type": "integer", "minimum": 1},
		"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}
	},
	"required": ["id", "qty"],
	"additionalProperties": false,
	"$defs": {"item": {"type": "object", "required": ["sku"]}}
}`

func TestJSONSchema(t *testing.T) {
	e, err := eval.JSONSchema("order", []byte(orderSchema))
	require.NoError(t, err)
	check(t, e, call(`{"id":"ORD-7","qty":2,"items":[{"sku":"x"}]}`), &want{value: "true"})
	check(t, e, call(`{"id":"ORD-7"}`), &want{value: "false", comment: "at /: missing property 'qty'"})
	check(t, e, call(`{"id":"ORD-7","qty":0}`), &want{value: "false", comment: "at /qty: minimum: got 0, want 1"})
	check(t, e, call(`{"id":"7","qty":1}`), &want{value: "false", comment: "at /id: '7' does not match pattern"})
	check(t, e, call(`{"id":"ORD-7","qty":1,"items":[{}]}`), &want{value: "false", comment: "at /items/0: missing property 'sku'"})
	check(t, e, call(`{"id":"ORD-7","qty":1,"x":1}`), &want{value: "false", comment: "at /: additional properties 'x' not allowed"})
	check(t, e, call(`not json`), &want{value: "false", comment: "not JSON"})
	check(t, e, call(""), nil)

	// The version follows the schema.
	e2, err := eval.JSONSchema("order", []byte(strings.Replace(orderSchema, `"minimum": 1`, `"minimum": 2`, 1)))
	require.NoError(t, err)
	assert.NotEqual(t, e.Info().Version, e2.Info().Version)
	assert.Equal(t, "order", e.Info().Name)
}

func TestJSONSchemaRefusesBadSchemasAndLoadsNothing(t *testing.T) {
	for name, s := range map[string]string{
		"not JSON":      `{`,
		"bad type":      `{"type": 7}`,
		"file ref":      `{"$ref": "file:///etc/passwd"}`,
		"http ref":      `{"$ref": "http://127.0.0.1:1/schema.json"}`,
		"bad pattern":   `{"pattern": "("}`,
		"unknown draft": `{"$schema": "http://example.com/nope"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := eval.JSONSchema("x", []byte(s))
			require.ErrorIs(t, err, eval.ErrSchema)
		})
	}
}

func TestRegexAndContains(t *testing.T) {
	re, err := eval.Regex("order_id", `ORD-[0-9]+`)
	require.NoError(t, err)
	check(t, re, call("Your order ORD-123 ships today."), &want{value: "true"})
	check(t, re, call("Your order ships today."), &want{value: "false"})
	check(t, re, call(""), nil)
	ci, err := eval.Regex("", `(?i)thank`)
	require.NoError(t, err)
	assert.Equal(t, "regex", ci.Info().Name)
	check(t, ci, call("THANKS!"), &want{value: "true"})
	_, err = eval.Regex("bad", `(`)
	require.Error(t, err)

	c := eval.Contains("apology", "sorry")
	check(t, c, call("so sorry"), &want{value: "true"})
	check(t, c, call("Sorry"), &want{value: "false"})
	check(t, c, failed(call("sorry")), nil)
	assert.NotEqual(t, c.Info().Version, eval.Contains("apology", "Sorry").Info().Version)
}

func TestLatencyAndCost(t *testing.T) {
	l := eval.Latency(2 * time.Second)
	r := call("x")
	r.DurationMS = 1999.6
	check(t, l, r, &want{value: "true", comment: "2000 ms, bound 2s"})
	r.DurationMS = 2000.4
	check(t, l, r, &want{value: "false", comment: "2000 ms, bound 2s"})
	r.DurationMS = 0
	check(t, l, r, nil)
	r = failed(call(""))
	r.DurationMS = 3000
	check(t, l, r, &want{value: "false"}) // a failed call took its time too

	c := eval.Cost(0.01)
	r = call("x")
	check(t, c, r, nil) // not priced
	r.Cost = &record.Cost{USD: 0.004, Table: "t"}
	check(t, c, r, &want{value: "true", comment: "$0.004, bound $0.01"})
	r.Cost.USD = 0.02
	check(t, c, r, &want{value: "false", comment: "$0.02, bound $0.01"})
}

func TestAnswer(t *testing.T) {
	e := eval.Answer()
	check(t, e, call("Paris."), &want{value: eval.Answered})
	check(t, e, call("I\u2019m sorry, but I can\u2019t help with that."), &want{value: eval.Refusal, comment: "i'm sorry, but i can't"})
	check(t, e, call("I cannot assist with that request."), &want{value: eval.Refusal})
	check(t, e, call("I'm sorry for the delay: Paris."), &want{value: eval.Answered})
	check(t, e, call("  \n "), &want{value: eval.Empty})

	empty := call("")
	empty.Usage = &record.Usage{InputTokens: 5, OutputTokens: 40, ReasoningTokens: 40}
	check(t, e, empty, &want{value: eval.Empty}) // it only thought
	notKept := call("")
	check(t, e, notKept, nil) // 3 output tokens, no output: it was not kept
	check(t, e, withCalls(call(""), toolCall("f", "{}")), &want{value: eval.Answered})
	refused := call("")
	refused.Output = &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartRefusal, Content: "I can't help with that."}}}
	check(t, e, refused, &want{value: eval.Refusal, comment: "refusal"})

	filtered := call("")
	filtered.Outcome = record.Failure(record.ErrorContentFilter)
	check(t, e, filtered, &want{value: eval.Refusal, comment: "content filter"})
	stopped := call("partial")
	stopped.Outcome.FinishReason = "content_filter"
	check(t, e, stopped, &want{value: eval.Refusal})
	check(t, e, failed(call("")), nil)
}

func TestToolArgs(t *testing.T) {
	params := `{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}`
	forms := map[string]string{
		"openai chat":      `[{"type":"function","function":{"name":"get_weather","parameters":` + params + `}},{"type":"function","function":{"name":"now"}}]`,
		"openai responses": `[{"type":"function","name":"get_weather","parameters":` + params + `},{"type":"function","name":"now"},{"type":"web_search"}]`,
		"anthropic":        `[{"name":"get_weather","input_schema":` + params + `},{"name":"now","input_schema":{"type":"object"}}]`,
		"gemini":           `[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING","nullable":true},"unit":{"type":"STRING","enum":["c","f"]}},"required":["city"]}},{"name":"now"}]},{"googleSearch":{}}]`,
		"map":              `{"get_weather":` + params + `,"now":{}}`,
	}
	for form, tools := range forms {
		t.Run(form, func(t *testing.T) {
			e, err := eval.ToolArgs([]byte(tools))
			require.NoError(t, err)
			r := call("")
			r.Kwargs = json.RawMessage(`{"model":"m","tools":["get_weather","now"]}`)
			with := func(tcs ...record.Part) record.Record { return withCalls(r, tcs...) }
			check(t, e, with(toolCall("get_weather", `{"city":"Oslo","unit":"c"}`), toolCall("now", "")), &want{value: "true"})
			check(t, e, with(toolCall("get_weather", `{"unit":"c"}`)), &want{value: "false", comment: "get_weather: at /: missing property 'city'"})
			check(t, e, with(toolCall("get_weather", `{"city":"Oslo","unit":"k"}`)), &want{value: "false", comment: "get_weather: at /unit: value must be one of"})
			check(t, e, with(toolCall("get_weather", `{"city":`)), &want{value: "false", comment: "get_weather: not JSON"})
			check(t, e, with(toolCall("delete_all", `{}`)), &want{value: "false", comment: "delete_all: not among the tools offered (get_weather, now)"})
			check(t, e, r, nil) // no tool call

			// The record lists no tools: the declarations say what exists.
			r.Kwargs = json.RawMessage(`{}`)
			check(t, e, with(toolCall("delete_all", `{}`)), &want{value: "false", comment: "delete_all: no such tool declared"})
		})
	}
	for name, bad := range map[string]string{
		"not JSON": `[`, "a number": `7`, "no tool": `[]`, "unnamed": `[{"parameters":{}}]`,
		"bad schema": `{"f":{"type":"nope"}}`, "not an object": `["f"]`,
	} {
		t.Run("refuses "+name, func(t *testing.T) {
			_, err := eval.ToolArgs([]byte(bad))
			require.ErrorIs(t, err, eval.ErrSchema)
		})
	}
}

func TestScoreSkipsEvaluationsAndRecoversPanics(t *testing.T) {
	r := call(`{}`)
	r.Tags = []string{"checkout", eval.Tag}
	assert.Nil(t, judge(t, eval.JSONValid(), r), "a judge's own call is never judged")

	boom := eval.Check("boom", "1", func(*record.Record) (store.Value, string, bool) { panic("oops") })
	_, err := eval.Score(context.Background(), boom, eval.Subject{Records: []record.Record{call("x")}})
	require.ErrorContains(t, err, "oops")

	bad := eval.Check("bad", "1", func(*record.Record) (store.Value, string, bool) {
		return store.Number(1), strings.Repeat("x", store.MaxScoreComment+1), true
	})
	_, err = eval.Score(context.Background(), bad, eval.Subject{Records: []record.Record{call("x")}})
	require.ErrorIs(t, err, store.ErrBadScore)

	none, err := eval.Score(context.Background(), eval.JSONValid(), eval.Subject{})
	require.NoError(t, err)
	assert.Empty(t, none)
}
