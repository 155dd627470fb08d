package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// The program as a newcomer runs it without a key: three calls through
// the official SDK against the embedded fake, three records.
func TestRunAgainstTheFakeServer(t *testing.T) {
	t.Setenv("OPENAI_MODEL", "")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1") // not where the program goes without a key
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, ""))
	recs, err := record.ReadJSONL(&out)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	for _, r := range recs {
		assert.True(t, r.Outcome.OK, "%s: %s", r.MethodName, r.ErrorMessage)
		assert.Equal(t, "example-conversation", r.TraceID)
		assert.Equal(t, "user-42", r.UserID)
		assert.NotContains(t, string(r.AppendJSON(nil)), "sk-fake-key", "no key in a record")
	}
	assert.Equal(t, "openai.chat.completions.create", recs[0].MethodName)
	assert.Equal(t, 21, recs[0].Usage.TotalTokens)

	assert.Equal(t, "openai.chat.completions.create", recs[1].MethodName)
	assert.True(t, recs[1].Outcome.OK)
	assert.Equal(t, "stop", recs[1].Outcome.FinishReason)
	assert.Equal(t, 36, recs[1].Usage.TotalTokens, "usage from the stream's last chunk")
	assert.Equal(t, 2, recs[1].ConversationHistorySize)
	assert.Contains(t, string(recs[1].Args), "Hello there, nice to meet!", "the answer carried back in the next turn")

	assert.Equal(t, "openai.responses.create", recs[2].MethodName)
	assert.Equal(t, "response", recs[2].Outcome.ValueClass)
	assert.Equal(t, 23, recs[2].Usage.TotalTokens)
}
