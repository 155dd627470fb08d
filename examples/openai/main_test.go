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
	t.Setenv("OPENAI_MODEL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, ""))
	recs, err := record.ReadJSONL(&out)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		assert.Equal(t, "openai.chat.completions.create", r.MethodName)
		assert.True(t, r.Outcome.OK)
		assert.Equal(t, "example-conversation", r.TraceID)
	}
	assert.Equal(t, 21, recs[0].Usage.TotalTokens)
	assert.Equal(t, 36, recs[1].Usage.TotalTokens, "usage from the stream's last chunk")
	assert.Equal(t, "user", recs[1].Speaker, "the last message is the user's")
	assert.Equal(t, 2, recs[1].ConversationHistorySize)
}
