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
	t.Setenv("BEDROCK_MODEL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, false))
	recs, err := record.ReadJSONL(&out)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "bedrock.converse", recs[0].MethodName)
	assert.Equal(t, "bedrock.converse_stream", recs[1].MethodName)
	for _, r := range recs {
		assert.True(t, r.Outcome.OK, "%+v %s", r.Outcome, r.ErrorMessage)
		assert.Equal(t, "example-conversation", r.TraceID)
		assert.Equal(t, record.SpeakerUser, r.Speaker)
		assert.Equal(t, "us.amazon.nova-micro-v1:0", r.Model)
		assert.Equal(t, "end_turn", r.Outcome.FinishReason)
		require.NotNil(t, r.Cost, "Nova Micro's profile is priced")
	}
	assert.Equal(t, &record.Usage{InputTokens: 14, OutputTokens: 9, TotalTokens: 23}, recs[0].Usage)
	assert.Equal(t, &record.Usage{InputTokens: 30, OutputTokens: 6, TotalTokens: 36}, recs[1].Usage, "the metadata event's usage")
	assert.Contains(t, string(recs[1].Args), "Hello there, nice to meet!", "the whole conversation so far")
	assert.NotContains(t, out.String(), "AKIAFAKEEXAMPLEKEYID", "the access key ID never reaches a record")
}
