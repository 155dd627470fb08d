package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

func TestRunAgainstTheFakeServer(t *testing.T) {
	t.Setenv("OLLAMA_MODEL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, ""))
	recs, err := record.ReadJSONL(&out)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, []string{"ollama.chat", "ollama.chat", "ollama.embed"}, []string{recs[0].MethodName, recs[1].MethodName, recs[2].MethodName})
	for _, r := range recs {
		assert.True(t, r.Outcome.OK, "%+v %s", r.Outcome, r.ErrorMessage)
		assert.Equal(t, "example-conversation", r.TraceID)
		assert.Nil(t, r.Cost, "a local model is not priced")
	}
	assert.Equal(t, "stop", recs[0].Outcome.FinishReason)
	assert.Equal(t, &record.Usage{InputTokens: 14, OutputTokens: 9, TotalTokens: 23}, recs[0].Usage)
	assert.Equal(t, &record.Usage{InputTokens: 30, OutputTokens: 6, TotalTokens: 36}, recs[1].Usage)
	assert.Equal(t, &record.Usage{InputTokens: 2, TotalTokens: 2}, recs[2].Usage)
	assert.Contains(t, string(recs[1].Args), "Hello there, nice to meet!", "the whole conversation so far")
	assert.Equal(t, "llama3.2", recs[0].Model)
	assert.Equal(t, "nomic-embed-text", recs[2].Model)
}
