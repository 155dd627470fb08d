package record_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/record"
)

func TestProvider(t *testing.T) {
	for method, want := range map[string]string{
		"openai.chat.completions.create": "openai",
		"gemini.models.generateContent":  "gemini",
		"http.POST /v1/rerank":           "http",
		"bedrock.converse":               "bedrock",
		"custom":                         "",
		"":                               "",
		".odd":                           "",
	} {
		r := record.Record{MethodName: method}
		assert.Equal(t, want, r.Provider(), method)
		assert.Equal(t, want, record.ProviderOf(method), method)
	}
}

func TestFailureType(t *testing.T) {
	failed := record.Record{Outcome: record.Failure(record.ErrorRateLimit), ErrorType: record.ErrorServer}
	assert.Equal(t, record.ErrorRateLimit, failed.FailureType(), "the outcome's first")
	byHand := record.Record{Outcome: record.Outcome{Status: record.StatusError}, ErrorType: record.ErrorTimeout}
	assert.Equal(t, record.ErrorTimeout, byHand.FailureType(), "else the record's own")
	ok := record.Record{Outcome: record.Success("x"), ErrorType: record.ErrorServer}
	assert.Empty(t, ok.FailureType(), "a success has none")
	assert.Empty(t, (&record.Record{Outcome: record.Outcome{Status: record.StatusError}}).FailureType())
}
