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
	t.Setenv("ANTHROPIC_MODEL", "")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9") // the fake wins over the environment
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, ""))
	recs, err := record.ReadJSONL(&out)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		assert.Equal(t, "anthropic.messages.create", r.MethodName)
		assert.True(t, r.Outcome.OK, "%+v", r.Outcome)
		assert.Equal(t, "example-conversation", r.TraceID)
		assert.Equal(t, record.SpeakerUser, r.Speaker)
		assert.Equal(t, "claude-sonnet-5-5", r.Model)
		assert.Equal(t, "end_turn", r.Outcome.FinishReason)
	}
	assert.Equal(t, &record.Usage{InputTokens: 14, OutputTokens: 9, TotalTokens: 23}, recs[0].Usage)
	assert.Equal(t, &record.Usage{InputTokens: 30, OutputTokens: 6, TotalTokens: 36}, recs[1].Usage, "message_delta's count replaces message_start's")
	assert.Equal(t, "msg_01FakeCount0123456789", recs[1].Outcome.ResponseID)
	assert.Contains(t, string(recs[1].Args), "Hello there, nice to meet!", "the whole conversation so far")
	assert.Contains(t, string(recs[1].Kwargs), `"stream":true`)
	assert.Equal(t, 2, recs[1].ConversationHistorySize)
}
