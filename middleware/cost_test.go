package middleware_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/middleware"
)

// Every record is priced at record time with the table in the module, by
// default; an unknown model has no cost, never zero.
func TestRecordsArePriced(t *testing.T) {
	const unknown = `{"id":"c","object":"chat.completion","model":"my-own-model","choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`
	priced := serve(t, 200, "application/json", chatResponse)
	unpriced := serve(t, 200, "application/json", unknown)

	price, _, ok := cost.Default().Lookup("gpt-4o-mini-2024-07-18")
	require.True(t, ok)
	// chatResponse: 12 prompt tokens, 3 completion tokens.
	want := 12*price.Input + 3*price.Output

	e := newEnv(t)
	call(t, e, context.Background(), priced.URL+"/v1/chat/completions", chatBody)
	call(t, e, context.Background(), unpriced.URL+"/v1/chat/completions", chatBody)
	rs := e.records()
	require.Len(t, rs, 2)
	require.NotNil(t, rs[0].Cost)
	assert.InDelta(t, want, rs[0].Cost.USD, want*1e-12)
	assert.Equal(t, cost.Default().Name(), rs[0].Cost.Table)
	assert.Nil(t, rs[1].Cost, "an unknown model is not priced")
	assert.Contains(t, e.sinkText(), `"cost":{"usd":`, "the cost reaches the sinks")

	// A table of your own, and none at all.
	mine := cost.Default().With("acme-2026-11", map[string]cost.Price{"my-own-model": {Rates: cost.Rates{Input: 1e-6, Output: 2e-6}}})
	e = newEnv(t, middleware.WithPrices(mine))
	r := call(t, e, context.Background(), unpriced.URL+"/v1/chat/completions", chatBody)
	require.NotNil(t, r.Cost)
	assert.InDelta(t, 12e-6+6e-6, r.Cost.USD, 1e-18)
	assert.Equal(t, "acme-2026-11", r.Cost.Table)

	e = newEnv(t, middleware.WithPrices(nil))
	assert.Nil(t, call(t, e, context.Background(), priced.URL+"/v1/chat/completions", chatBody).Cost)

}
