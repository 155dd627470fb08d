package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/record"
)

func TestRunAgainstTheFakeServer(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GEMINI_MODEL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	recs, err := record.ReadJSONL(&out)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		assert.True(t, r.Outcome.OK, "%+v", r.Outcome)
		assert.Equal(t, "gemini-2.5-flash", r.Model)
		assert.Equal(t, "example-conversation", r.TraceID)
		assert.Equal(t, record.SpeakerUser, r.Speaker)
	}
	assert.Equal(t, gemini.MethodGenerateContent, recs[0].MethodName)
	// Output counts the thoughts: 7 candidates + 26 thoughts (one meaning of
	// usage for every provider).
	assert.Equal(t, &record.Usage{InputTokens: 8, OutputTokens: 33, TotalTokens: 41, ReasoningTokens: 26}, recs[0].Usage)
	assert.Equal(t, gemini.MethodStreamGenerateContent, recs[1].MethodName)
	assert.Equal(t, &record.Usage{InputTokens: 24, OutputTokens: 6, TotalTokens: 30}, recs[1].Usage, "the last cumulative usage")
	assert.Equal(t, "STOP", recs[1].Outcome.FinishReason)
	assert.Equal(t, "fake-response-2", recs[1].Outcome.ResponseID)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Say hello in five words."}]},{"role":"assistant","parts":[{"type":"text","content":"Hello there, nice to meet!"}]},{"role":"user","parts":[{"type":"text","content":"Now count to three."}]}]`,
		string(recs[1].Args), "the whole conversation so far, in the message model")
	require.NotNil(t, recs[0].Output)
	assert.Equal(t, recs[0].Output.AppendJSON(nil), []byte(gjson.GetBytes(recs[1].Args, "1").Raw),
		"the first answer is the message the second call sends back")
}
