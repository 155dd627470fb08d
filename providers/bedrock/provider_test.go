package bedrock_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/bedrock"
	"github.com/llmhistory/llmhistory/record"
)

func TestEndpoints(t *testing.T) {
	for _, tc := range []struct {
		rawPath, method, model string
	}{
		{"/model/amazon.nova-micro-v1%3A0/converse", bedrock.MethodConverse, "amazon.nova-micro-v1:0"},
		{"/model/us.anthropic.claude-sonnet-4-6/converse-stream", bedrock.MethodConverseStream, "us.anthropic.claude-sonnet-4-6"},
		{"/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/invoke", bedrock.MethodInvokeModel, "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/a1b2c3"},
		{"/bedrock/model/global.anthropic.claude-sonnet-4-6/invoke-with-response-stream/", bedrock.MethodInvokeModelStream, "global.anthropic.claude-sonnet-4-6"},
		{"/model/x/count-tokens", "", ""},
		{"/model//converse", "", ""},
		{"/v1/messages", "", ""},
	} {
		p, err := url.PathUnescape(tc.rawPath)
		require.NoError(t, err)
		call, ok := bedrock.Provider{}.ParseRequest(&providers.Request{Method: "POST", URL: &url.URL{Path: p, RawPath: tc.rawPath}})
		assert.Equal(t, tc.method != "", ok, tc.rawPath)
		assert.Equal(t, tc.method, call.MethodName, tc.rawPath)
		assert.Equal(t, tc.model, call.Model, tc.rawPath)
	}
	_, ok := bedrock.Provider{}.ParseRequest(&providers.Request{Method: "GET", URL: &url.URL{Path: "/model/m/converse"}})
	assert.False(t, ok, "only POST")
}

// A stream longer than the capture: its head and its tail are read, and
// the tail's first whole frame is found wherever the cut falls.
func TestStreamCutByCapture(t *testing.T) {
	events := jsonlEvents(t, "converse_stream_tool_use.jsonl")
	body := frames(t, events)
	lastTwo := len(frames(t, events[len(events)-2:])) // messageStop and metadata
	for cut := 1; cut < len(body)-1; cut += 7 {
		for tail := len(body) - cut; tail >= lastTwo; tail -= 13 {
			resp := &providers.Response{StatusCode: 200, Stream: true, EOF: true, Truncated: true, Body: body[:cut], Tail: body[len(body)-tail:]}
			res := bedrock.Provider{}.ParseResponse(&providers.Call{MethodName: bedrock.MethodConverseStream}, resp)
			require.True(t, res.Outcome.OK, "cut %d tail %d: %+v %s", cut, tail, res.Outcome, res.ErrorMessage)
			assert.Equal(t, "tool_use", res.Outcome.FinishReason, "cut %d tail %d", cut, tail)
			assert.Equal(t, &record.Usage{InputTokens: 1368, OutputTokens: 55, TotalTokens: 1423, CacheWriteTokens: 1365}, res.Usage, "cut %d tail %d", cut, tail)
		}
	}
}

// A stream read to its end without messageStop, or ending in the middle
// of a frame, is incomplete.
func TestStreamWithoutEnd(t *testing.T) {
	events := jsonlEvents(t, "converse_stream_tool_use.jsonl")
	whole := frames(t, events[:9]) // no messageStop, no metadata
	res := bedrock.Provider{}.ParseResponse(&providers.Call{MethodName: bedrock.MethodConverseStream}, &providers.Response{StatusCode: 200, Stream: true, EOF: true, Body: whole})
	assert.Equal(t, record.ErrorIncomplete, res.Outcome.ErrorType)
	assert.Equal(t, "the stream ended without messageStop", res.ErrorMessage)

	all := frames(t, events)
	res = bedrock.Provider{}.ParseResponse(&providers.Call{MethodName: bedrock.MethodConverseStream}, &providers.Response{StatusCode: 200, Stream: true, EOF: true, Body: all[:len(all)-10]})
	assert.Equal(t, record.ErrorIncomplete, res.Outcome.ErrorType)
	assert.Equal(t, "the stream ends in the middle of a frame", res.ErrorMessage)
	assert.Equal(t, "tool_use", res.Outcome.FinishReason, "what came before is kept")
}

// A guardrail that intervened is a content_filter failure that keeps the
// tokens spent.
func TestGuardrailIntervened(t *testing.T) {
	body := []byte(`{"metrics":{"latencyMs":180},"output":{"message":{"content":[{"text":"Sorry, the model cannot answer this question."}],"role":"assistant"}},"stopReason":"guardrail_intervened","usage":{"inputTokens":12,"outputTokens":0,"totalTokens":12}}`)
	res := bedrock.Provider{}.ParseResponse(&providers.Call{MethodName: bedrock.MethodConverse}, &providers.Response{StatusCode: 200, EOF: true, Body: body})
	assert.Equal(t, record.ErrorContentFilter, res.Outcome.ErrorType)
	assert.Equal(t, "guardrail_intervened", res.Outcome.FinishReason)
	assert.Equal(t, 12, res.Usage.InputTokens)
}

// Without the X-Amzn-ErrorType header (a proxy that drops it), the body's
// __type or code names the exception, as the SDK's own snapshots write it.
func TestErrorTypeFromBody(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body, want string
	}{
		{429, `{"__type":"ThrottlingException","message":"Too many requests"}`, record.ErrorRateLimit},
		{400, `{"__type":"com.amazon.coral.validate#ValidationException","message":"Input is too long for requested model."}`, record.ErrorContextLength},
		{400, `{"code":"ModelTimeoutException","message":"timed out"}`, record.ErrorTimeout},
		{403, `{"Message":"User is not authorized"}`, record.ErrorPermission},
	} {
		res := bedrock.Provider{}.ParseResponse(&providers.Call{MethodName: bedrock.MethodConverse}, &providers.Response{StatusCode: tc.status, Body: []byte(tc.body), EOF: true})
		assert.Equal(t, tc.want, res.Outcome.ErrorType, tc.body)
		assert.NotEmpty(t, res.ErrorMessage, tc.body)
	}
}
