package bedrock_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithymw "github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Static credentials of the shape AWS issues for a session; none is real.
const (
	accessKeyID  = "ASIAZTESTONLY7EXAMPLE"
	secretKey    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTONLYKEY"
	sessionToken = "IQoJb3JpZ2luX2VjEXAMPLEtestonlySESSIONTOKENxxAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="
	region       = "us-east-1"
)

// testdata returns a captured payload of the repository's shared corpus,
// testdata/providers/bedrock/<name> (testdata/README.md says where it came from).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "bedrock", name))
	require.NoError(t, err)
	return b
}

// anthropicPayload returns a capture of Anthropic's Messages API, as
// Claude on Bedrock sends its events, from testdata/providers/anthropic.
func anthropicPayload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "anthropic", name))
	require.NoError(t, err)
	return b
}

// reply is one answer of the fake Bedrock.
type reply struct {
	status    int
	errorType string // X-Amzn-ErrorType
	body      []byte
	stream    bool // an application/vnd.amazon.eventstream body
	cutAt     int  // when > 0, the connection is dropped after this many bytes of the body
}

// fakeBedrock answers the n-th request with the n-th reply (the last one
// again after that). Like Bedrock, it first checks that the request
// reached it as the SDK signed it: the SHA-256 of the body it received is
// X-Amz-Content-Sha256, and the SigV4 signature recomputed over what it
// received, with the test's secret key, is the one the request carries.
type fakeBedrock struct {
	t       *testing.T
	replies []reply
	mu      sync.Mutex
	got     []*http.Request
	bodies  [][]byte
}

func (f *fakeBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	require.NoError(f.t, err)
	f.mu.Lock()
	f.got = append(f.got, r.Clone(context.Background()))
	f.bodies = append(f.bodies, body)
	rep := f.replies[min(len(f.got), len(f.replies))-1]
	f.mu.Unlock()
	if why := verifySignature(r, body); why != "" {
		f.t.Errorf("the request did not reach the server as signed: %s", why)
		w.Header().Set("X-Amzn-ErrorType", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"message":"` + why + `"}`))
		return
	}
	w.Header().Set("X-Amzn-Requestid", "5ef614ca-5045-4baf-995e-e27fb4cad3a7")
	if rep.stream {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if rep.errorType != "" {
		w.Header().Set("X-Amzn-ErrorType", rep.errorType+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	}
	if rep.cutAt > 0 {
		w.WriteHeader(rep.status)
		w.Write(rep.body[:rep.cutAt])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(f.t, err)
		conn.Close() // the connection drops in the middle of the body
		return
	}
	w.WriteHeader(rep.status)
	w.Write(rep.body)
}

func (f *fakeBedrock) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

// verifySignature checks a request as AWS would, and says what is wrong.
func verifySignature(r *http.Request, body []byte) string {
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != hash {
		return "X-Amz-Content-Sha256 is " + got + ", the body's SHA-256 is " + hash
	}
	auth := r.Header.Get("Authorization")
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "no X-Amz-Date"
	}
	// The request again, with only the headers the client signed.
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	again.Header = http.Header{}
	for _, h := range strings.Split(signed, ";") {
		switch h {
		case "host", "content-length":
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	again.ContentLength = int64(len(body))
	creds := aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretKey, SessionToken: sessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hash, "bedrock", region, when); err != nil {
		return err.Error()
	}
	if again.Header.Get("Authorization") != auth {
		return "the signature does not match: " + again.Header.Get("Authorization")
	}
	return ""
}

func serve(t *testing.T, replies ...reply) (*httptest.Server, *fakeBedrock) {
	t.Helper()
	f := &fakeBedrock{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv, f
}

// client is the SDK's client with static session credentials, pointed at
// url, sending through hc; it retries throttling as the SDK does, with a
// backoff of at most a millisecond.
func client(url string, hc *http.Client, maxAttempts int) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       region,
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, secretKey, sessionToken),
		HTTPClient:   hc,
		Retryer:      retry.AddWithMaxAttempts(retry.AddWithMaxBackoffDelay(retry.NewStandard(), time.Millisecond), maxAttempts),
		// Sends X-Amz-Content-Sha256, signed, so that the fake can check
		// the body against it.
		APIOptions: []func(*smithymw.Stack) error{v4.AddContentSHA256HeaderMiddleware},
	})
}

func newRecorder(t *testing.T, opts ...middleware.Option) *middleware.Recorder {
	t.Helper()
	// No failure is held for a retry unless a test says so: a call that
	// failed is recorded at once.
	rec := middleware.NewRecorder(append([]middleware.Option{middleware.WithSyncSinks(), middleware.WithDedupWindow(0)}, opts...)...)
	t.Cleanup(func() { rec.Close() })
	return rec
}

func only(t *testing.T, rec *middleware.Recorder) record.Record {
	t.Helper()
	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 1, "exactly one record")
	require.NoError(t, rs[0].Validate())
	return rs[0]
}

// frames encodes eventstream messages as Bedrock sends them, with the
// SDK's own encoder: each event is [":event-type", payload].
func frames(t testing.TB, events [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, ev := range events {
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(ev[0]))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		require.NoError(t, enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(ev[1])}))
	}
	return buf.Bytes()
}

// exceptionFrame encodes an exception as Bedrock sends one in a stream.
func exceptionFrame(t testing.TB, name, message string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var h eventstream.Headers
	h.Set(":exception-type", eventstream.StringValue(name))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("exception"))
	require.NoError(t, eventstream.NewEncoder().Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(`{"message":"` + message + `"}`)}))
	return buf.Bytes()
}

// jsonlEvents reads a testdata file of [":event-type", payload] lines.
func jsonlEvents(t testing.TB, name string) [][2]string {
	t.Helper()
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(testdata(t, name)))
	for sc.Scan() {
		var ev [2]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		var name string
		require.NoError(t, json.Unmarshal(ev[0], &name))
		out = append(out, [2]string{name, string(ev[1])})
	}
	return out
}

// claudeChunks wraps the events of a captured Anthropic stream as
// InvokeModelWithResponseStream sends them: each event's JSON, base64, in
// the "bytes" of a chunk; the last carries Bedrock's invocation metrics.
func claudeChunks(t testing.TB, sse []byte) []byte {
	t.Helper()
	var events [][2]string
	wire.ScanSSE(sse, func(ev wire.Event) bool {
		data := bytes.TrimSpace(ev.Data)
		if bytes.Contains(data, []byte(`"message_stop"`)) {
			data = []byte(`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":15,"outputTokenCount":13,"invocationLatency":811,"firstByteLatency":402}}`)
		}
		payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString(data), "p": "abcdefgh"})
		events = append(events, [2]string{"chunk", string(payload)})
		return true
	})
	return frames(t, events)
}

func hello(model string) *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{
		ModelId:         aws.String(model),
		System:          []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "You know all about AI."}},
		Messages:        []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Explain AI in 10 words or less."}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(512)},
	}
}

func TestSDKConverse(t *testing.T) {
	srv, f := serve(t, reply{status: 200, body: testdata(t, "converse.json")})
	rec := newRecorder(t)
	got, err := client(srv.URL, rec.Client(nil), 1).Converse(context.Background(), hello("us.anthropic.claude-sonnet-4-6"))
	require.NoError(t, err)
	want, err := client(srv.URL, http.DefaultClient, 1).Converse(context.Background(), hello("us.anthropic.claude-sonnet-4-6"))
	require.NoError(t, err)
	assert.Equal(t, want.Output, got.Output, "the same answer with and without the recorder")
	assert.Equal(t, *want.Usage.TotalTokens, *got.Usage.TotalTokens)
	assert.JSONEq(t, string(testdata(t, "request_converse.json")), string(f.bodies[0]), "the SDK sends the captured request's body")

	r := only(t, rec)
	assert.Equal(t, "bedrock.converse", r.MethodName)
	assert.Equal(t, "user", r.Speaker)
	assert.JSONEq(t, `[{"role":"system","parts":[{"type":"text","content":"You know all about AI."}]},{"role":"user","parts":[{"type":"text","content":"Explain AI in 10 words or less."}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"us.anthropic.claude-sonnet-4-6","inferenceConfig":{"maxTokens":512}}`, string(r.Kwargs))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "message", HTTPStatus: 200, FinishReason: "end_turn"}, r.Outcome)
	assert.Equal(t, "us.anthropic.claude-sonnet-4-6", r.Model, "the model ID from the URL")
	assert.Equal(t, &record.Usage{InputTokens: 25, OutputTokens: 17, TotalTokens: 42}, r.Usage)
	require.NotNil(t, r.Cost, "a US inference profile is priced from the table")
	assert.Greater(t, r.Cost.USD, 0.0)
}

// An inference profile's ARN travels URL-escaped in one path segment.
func TestSDKConverseARN(t *testing.T) {
	srv, f := serve(t, reply{status: 200, body: testdata(t, "converse.json")})
	rec := newRecorder(t)
	arn := "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6"
	_, err := client(srv.URL, rec.Client(nil), 1).Converse(context.Background(), hello(arn))
	require.NoError(t, err)
	assert.Equal(t, "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-sonnet-4-6/converse", f.got[0].URL.EscapedPath())

	r := only(t, rec)
	assert.Equal(t, arn, r.Model)
	assert.Equal(t, "bedrock.converse", r.MethodName)
	require.NotNil(t, r.Cost, "the ARN's profile is priced")
}

func TestSDKConverseStreamToolUse(t *testing.T) {
	body := frames(t, jsonlEvents(t, "converse_stream_tool_use.jsonl"))
	srv, _ := serve(t, reply{status: 200, body: body, stream: true})
	rec := newRecorder(t, middleware.WithOutput())
	in := hello("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	out, err := client(srv.URL, rec.Client(nil), 1).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{
		ModelId: in.ModelId, System: in.System, Messages: in.Messages, InferenceConfig: in.InferenceConfig,
		ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name: aws.String("get_weather"), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
		}}}},
	})
	require.NoError(t, err)
	var text strings.Builder
	var input strings.Builder
	stream := out.GetStream()
	for ev := range stream.Events() {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				text.WriteString(d.Value)
			case *types.ContentBlockDeltaMemberToolUse:
				input.WriteString(*d.Value.Input)
			}
		}
	}
	require.NoError(t, stream.Close())
	require.NoError(t, stream.Err())
	assert.Equal(t, "I'll check the weather in Boston.", text.String())

	r := only(t, rec)
	assert.Equal(t, "bedrock.converse_stream", r.MethodName)
	assert.True(t, r.Outcome.OK, "%+v %s", r.Outcome, r.ErrorMessage)
	assert.Equal(t, "tool_use", r.Outcome.FinishReason)
	assert.Equal(t, text.String(), r.Output.Text())
	assert.JSONEq(t, `{"model":"us.anthropic.claude-sonnet-4-5-20250929-v1:0","inferenceConfig":{"maxTokens":512},"toolConfig":{"tools":["get_weather"]}}`, string(r.Kwargs))
	assert.Equal(t, &record.Usage{InputTokens: 1368, OutputTokens: 55, TotalTokens: 1423, CacheWriteTokens: 1365}, r.Usage, "the metadata event's usage")
	assert.Greater(t, r.TimeToFirstChunkMS, 0.0, "an eventstream is a stream")
	assert.Equal(t, input.String(), `{"location": "Boston, MA"}`)
}

func TestSDKInvokeModelClaude(t *testing.T) {
	srv, f := serve(t, reply{status: 200, body: testdata(t, "invoke_anthropic_tool_use.json")})
	rec := newRecorder(t)
	req := testdata(t, "request_invoke_anthropic_tools.json")
	got, err := client(srv.URL, rec.Client(nil), 1).InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
		ModelId: aws.String("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), Body: req, ContentType: aws.String("application/json"),
	})
	require.NoError(t, err)
	assert.Equal(t, testdata(t, "invoke_anthropic_tool_use.json"), got.Body)
	assert.Equal(t, req, f.bodies[0], "the body as the caller wrote it")

	r := only(t, rec)
	assert.Equal(t, "bedrock.invoke_model", r.MethodName)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Calculate 15 * 8"}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"us.anthropic.claude-sonnet-4-5-20250929-v1:0","anthropic_version":"bedrock-2023-05-31","max_tokens":512,"tools":["calculator"]}`, string(r.Kwargs),
		"read as the Anthropic provider reads a Messages body: tools by name")
	assert.Equal(t, "tool_use", r.Outcome.FinishReason)
	assert.Equal(t, "msg_bdrk_01FKNLrK2xeEKgM3CawyimMT", r.Outcome.ResponseID)
	assert.Equal(t, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", r.Model, "the model ID Bedrock bills, not the response's model name")
	assert.Equal(t, &record.Usage{InputTokens: 628, OutputTokens: 85, TotalTokens: 713}, r.Usage)
	require.NotNil(t, r.Cost)
}

func TestSDKInvokeModelWithResponseStreamClaude(t *testing.T) {
	sse := anthropicPayload(t, "stream_text.sse")
	srv, _ := serve(t, reply{status: 200, body: claudeChunks(t, sse), stream: true})
	rec := newRecorder(t, middleware.WithOutput())
	out, err := client(srv.URL, rec.Client(nil), 1).InvokeModelWithResponseStream(context.Background(), &bedrockruntime.InvokeModelWithResponseStreamInput{
		ModelId: aws.String("anthropic.claude-3-opus-20240229-v1:0"), ContentType: aws.String("application/json"),
		Body: []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":100,"messages":[{"role":"user","content":"Count to 5, one number a line."}]}`),
	})
	require.NoError(t, err)
	stream := out.GetStream()
	chunks := 0
	for ev := range stream.Events() {
		if _, ok := ev.(*types.ResponseStreamMemberChunk); ok {
			chunks++
		}
	}
	require.NoError(t, stream.Close())
	require.NoError(t, stream.Err())
	assert.Greater(t, chunks, 5)

	r := only(t, rec)
	assert.Equal(t, "bedrock.invoke_model_with_response_stream", r.MethodName)
	assert.True(t, r.Outcome.OK, "%+v %s", r.Outcome, r.ErrorMessage)
	assert.Equal(t, "1\n2\n3\n4\n5", r.Output.Text())
	assert.Equal(t, "end_turn", r.Outcome.FinishReason)
	assert.Equal(t, &record.Usage{InputTokens: 15, OutputTokens: 13, TotalTokens: 28}, r.Usage)
	assert.Equal(t, "anthropic.claude-3-opus-20240229-v1:0", r.Model)
}

// Meta Llama's body, which no other provider knows: recorded generically,
// with the model from the URL and the counts Llama gives.
func TestSDKInvokeModelLlama(t *testing.T) {
	answer := []byte(`{"generation":" Paris.","prompt_token_count":17,"generation_token_count":3,"stop_reason":"stop"}`)
	srv, _ := serve(t, reply{status: 200, body: answer})
	rec := newRecorder(t)
	_, err := client(srv.URL, rec.Client(nil), 1).InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
		ModelId: aws.String("meta.llama3-8b-instruct-v1:0"), ContentType: aws.String("application/json"),
		Body: []byte(`{"prompt":"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\nWhat is the capital of France?<|eot_id|>","max_gen_len":64,"temperature":0.5}`),
	})
	require.NoError(t, err)

	r := only(t, rec)
	assert.Equal(t, "bedrock.invoke_model", r.MethodName)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\nWhat is the capital of France?<|eot_id|>"}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"meta.llama3-8b-instruct-v1:0","max_gen_len":64,"temperature":0.5}`, string(r.Kwargs))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "model_output", HTTPStatus: 200, FinishReason: "stop"}, r.Outcome)
	assert.Equal(t, &record.Usage{InputTokens: 17, OutputTokens: 3, TotalTokens: 20}, r.Usage)
}

// The SDK retries a throttled call itself, with a body that has no
// GetBody: both attempts carry one amz-sdk-invocation-id, and make one
// record.
func TestSDKThrottledRetryIsOneRecord(t *testing.T) {
	srv, f := serve(t,
		reply{status: 429, errorType: "ThrottlingException", body: []byte(`{"message":"Too many requests, please wait before trying again."}`)},
		reply{status: 200, body: testdata(t, "converse.json")})
	rec := newRecorder(t, middleware.WithDedupWindow(10*time.Second))
	_, err := client(srv.URL, rec.Client(nil), 3).Converse(context.Background(), hello("us.anthropic.claude-sonnet-4-6"))
	require.NoError(t, err)
	require.Equal(t, 2, f.requests())
	assert.Equal(t, f.got[0].Header.Get("Amz-Sdk-Invocation-Id"), f.got[1].Header.Get("Amz-Sdk-Invocation-Id"))
	assert.Equal(t, "attempt=2; max=3", f.got[1].Header.Get("Amz-Sdk-Request"))

	r := only(t, rec)
	assert.Equal(t, 2, r.Attempts)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, 42, r.Usage.TotalTokens)

	// Two calls of the same request, each a first attempt, are two.
	srv2, _ := serve(t, reply{status: 200, body: testdata(t, "converse.json")})
	rec2 := newRecorder(t)
	c := client(srv2.URL, rec2.Client(nil), 3)
	for range 2 {
		_, err := c.Converse(context.Background(), hello("us.anthropic.claude-sonnet-4-6"))
		require.NoError(t, err)
	}
	require.NoError(t, rec2.Flush())
	assert.Len(t, rec2.History().Records(), 2)
}

// Every exception maps onto the taxonomy, from the X-Amzn-ErrorType the
// SDK reads too, with retriable set as the taxonomy says.
func TestSDKErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		exception string
		message   string
		want      string
	}{
		{429, "ThrottlingException", "Too many requests, please wait before trying again.", record.ErrorRateLimit},
		{503, "ServiceUnavailableException", "Bedrock is unable to process your request.", record.ErrorOverloaded},
		{408, "ModelTimeoutException", "Model has timed out in processing the request.", record.ErrorTimeout},
		{400, "ValidationException", "The provided model identifier is invalid.", record.ErrorInvalidRequest},
		{400, "ValidationException", "Input is too long for requested model.", record.ErrorContextLength},
		{400, "ValidationException", "prompt is too long: 210316 tokens > 200000 maximum", record.ErrorContextLength},
		{403, "AccessDeniedException", "You don't have access to the model with the specified model ID.", record.ErrorPermission},
		{404, "ResourceNotFoundException", "Model not found.", record.ErrorNotFound},
		{424, "ModelErrorException", "The model returned an error.", record.ErrorServer},
		{500, "InternalServerException", "Internal server error", record.ErrorServer},
		{403, "UnrecognizedClientException", "The security token included in the request is invalid.", record.ErrorAuth},
		{429, "ServiceQuotaExceededException", "Your request exceeds the service quota for your account.", record.ErrorQuota},
	} {
		t.Run(tc.exception+"/"+tc.want, func(t *testing.T) {
			srv, _ := serve(t, reply{status: tc.status, errorType: tc.exception, body: []byte(`{"message":"` + tc.message + `"}`)})
			rec := newRecorder(t)
			_, err := client(srv.URL, rec.Client(nil), 1).Converse(context.Background(), hello("amazon.nova-micro-v1:0"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.exception, "the SDK read the same header")

			r := only(t, rec)
			assert.Equal(t, tc.want, r.ErrorType)
			assert.Equal(t, record.Retriable(tc.want), r.Outcome.Retriable)
			assert.Equal(t, tc.status, r.Outcome.HTTPStatus)
			assert.Equal(t, tc.message, r.ErrorMessage)
		})
	}
}

// An exception in the middle of a 200 stream is the call's outcome.
func TestSDKStreamException(t *testing.T) {
	events := jsonlEvents(t, "converse_stream_tool_use.jsonl")
	body := append(frames(t, events[:3]), exceptionFrame(t, "throttlingException", "Too many tokens, please wait before trying again.")...)
	srv, _ := serve(t, reply{status: 200, body: body, stream: true})
	rec := newRecorder(t)
	out, err := client(srv.URL, rec.Client(nil), 1).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("amazon.nova-pro-v1:0"), Messages: hello("").Messages})
	require.NoError(t, err)
	stream := out.GetStream()
	for range stream.Events() {
	}
	var throttled *types.ThrottlingException
	require.ErrorAs(t, stream.Err(), &throttled, "the SDK sees the exception")

	r := only(t, rec)
	assert.Equal(t, record.ErrorRateLimit, r.ErrorType)
	assert.True(t, r.Outcome.Retriable)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
	assert.Equal(t, "Too many tokens, please wait before trying again.", r.ErrorMessage)
}

// A stream whose connection drops in the middle of a frame: the record
// fails, never a silent success. The SDK (bedrockruntime v1.63.13) ends
// its events without an error: the record is the only place that says the
// answer was cut.
func TestSDKStreamCut(t *testing.T) {
	body := frames(t, jsonlEvents(t, "converse_stream_tool_use.jsonl"))
	srv, _ := serve(t, reply{status: 200, body: body, stream: true, cutAt: len(body) / 2})
	rec := newRecorder(t)
	out, err := client(srv.URL, rec.Client(nil), 1).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("amazon.nova-pro-v1:0"), Messages: hello("").Messages})
	require.NoError(t, err)
	stream := out.GetStream()
	for range stream.Events() {
	}
	stream.Close()
	assert.NoError(t, stream.Err(), "the SDK says nothing")

	r := only(t, rec)
	assert.False(t, r.Outcome.OK)
	assert.Equal(t, record.ErrorTransport, r.ErrorType, r.ErrorMessage)
	assert.True(t, r.Outcome.Retriable)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
}

// A damaged frame (one byte of its payload changed on the way): the SDK's
// reader fails on its CRC, and the record is a decode error.
func TestSDKStreamDamagedFrame(t *testing.T) {
	body := frames(t, jsonlEvents(t, "converse_stream_tool_use.jsonl"))
	i := bytes.Index(body, []byte("the weather"))
	body[i] = 'T'
	srv, _ := serve(t, reply{status: 200, body: body, stream: true})
	rec := newRecorder(t)
	out, err := client(srv.URL, rec.Client(nil), 1).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("amazon.nova-pro-v1:0"), Messages: hello("").Messages})
	require.NoError(t, err)
	stream := out.GetStream()
	for range stream.Events() {
	}
	require.Error(t, stream.Err())
	stream.Close()

	r := only(t, rec)
	assert.Equal(t, record.ErrorDecode, r.ErrorType)
	assert.Contains(t, r.ErrorMessage, "message CRC mismatch")
}

// AWS answers a signature it cannot verify with the canonical request it
// expected, session token and all. The token, the access key ID and the
// signature never reach the record.
func TestSDKSignatureMismatchLeaksNoCredential(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		_, sig, _ := strings.Cut(r.Header.Get("Authorization"), "Signature=")
		msg := "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\n" +
			"The Canonical String for this request should have been\n'POST\n" + r.URL.EscapedPath() + "\n\n" +
			"amz-sdk-invocation-id:" + r.Header.Get("Amz-Sdk-Invocation-Id") + "\nhost:" + r.Host + "\nx-amz-date:" + r.Header.Get("X-Amz-Date") +
			"\nx-amz-security-token:" + r.Header.Get("X-Amz-Security-Token") + "\n\namz-sdk-invocation-id;host;x-amz-date;x-amz-security-token\n" + r.Header.Get("X-Amz-Content-Sha256") + "'\n\n" +
			"The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n" + r.Header.Get("X-Amz-Date") + "\n20260303/us-east-1/bedrock/aws4_request\n9c8b2c7f0e'\n" +
			"(signature provided: " + sig + "; credential " + r.Header.Get("Authorization") + ")"
		b, _ := json.Marshal(map[string]string{"message": msg})
		w.Header().Set("X-Amzn-ErrorType", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write(b)
	})
	srv := httptest.NewServer(echo)
	defer srv.Close()
	rec := newRecorder(t, middleware.WithOutput())
	_, err := client(srv.URL, rec.Client(nil), 1).Converse(context.Background(), hello("us.anthropic.claude-sonnet-4-6"))
	require.Error(t, err)
	require.Contains(t, err.Error(), sessionToken, "the SDK's error quotes the token")

	r := only(t, rec)
	assert.Equal(t, record.ErrorAuth, r.ErrorType)
	assert.Contains(t, r.ErrorMessage, "The Canonical String for this request should have been")
	assert.Contains(t, r.ErrorMessage, "x-amz-security-token:[REDACTED]")
	b, err := json.Marshal(r)
	require.NoError(t, err)
	for _, secret := range []string{sessionToken, accessKeyID, secretKey, "TESTONLY"} {
		assert.NotContains(t, string(b), secret)
	}
	assert.NotRegexp(t, `Signature=[0-9a-f]{64}`, string(b), "the signature is redacted")
}

// A presigned URL carries the signature, the access key and the session
// token in its query: none of them reaches the record, even echoed.
func TestPresignedURLLeaksNoCredential(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		b, _ := json.Marshal(map[string]string{"message": "Request has expired: " + r.URL.RequestURI()})
		w.Write(b)
	})
	srv := httptest.NewServer(echo)
	defer srv.Close()
	rec := newRecorder(t)
	sig := "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
	url := srv.URL + "/model/amazon.nova-micro-v1%3A0/converse?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + accessKeyID +
		"%2F20260303%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Date=20260303T000000Z&X-Amz-Expires=60&X-Amz-Security-Token=" +
		strings.ReplaceAll(sessionToken, "=", "%3D") + "&X-Amz-SignedHeaders=host&X-Amz-Signature=" + sig
	resp, err := rec.Client(nil).Post(url, "application/json", strings.NewReader(`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`))
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	r := only(t, rec)
	assert.Equal(t, "bedrock.converse", r.MethodName)
	assert.Equal(t, record.ErrorPermission, r.ErrorType)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	for _, secret := range []string{sessionToken, strings.TrimRight(sessionToken, "="), accessKeyID, sig} {
		assert.NotContains(t, string(b), secret)
	}
}

func TestSDKErrorsAsGo(t *testing.T) {
	// The SDK's own error for a throttled call that ran out of attempts:
	// the record keeps one call with every attempt counted.
	srv, f := serve(t, reply{status: 429, errorType: "ThrottlingException", body: []byte(`{"message":"Too many requests, please wait before trying again."}`)})
	rec := newRecorder(t, middleware.WithDedupWindow(10*time.Second))
	_, err := client(srv.URL, rec.Client(nil), 3).Converse(context.Background(), hello("amazon.nova-micro-v1:0"))
	var throttled *types.ThrottlingException
	require.True(t, errors.As(err, &throttled))
	require.Equal(t, 3, f.requests())
	require.NoError(t, rec.Close(), "the last failure, held for a retry that never comes, is recorded on Close")

	r := only(t, rec)
	assert.Equal(t, 3, r.Attempts)
	assert.Equal(t, record.ErrorRateLimit, r.ErrorType)
}
