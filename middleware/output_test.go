package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// payload reads a captured provider payload of the repository's shared
// corpus, named under testdata/providers: "openai/openai_chat_response.json".
func payload(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "providers", filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(b)
}

// answering is a base transport that answers every request in process, as
// a server would, so that URLs without a port (the scheme's) can be
// recorded: it reads the request and answers body.
type answering struct{ contentType, body string }

func (a answering) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {a.contentType}},
		Body:          io.NopCloser(strings.NewReader(a.body)),
		ContentLength: int64(len(a.body)),
		Request:       req,
	}, nil
}

// Every record names the server its call went to: the URL's host without
// its port, in lower case, and the port, the scheme's when the URL names
// none. Never the
// user info, the path or a key in the query; the JSONL file has them too.
func TestServerAddressAndPortOnEveryRecord(t *testing.T) {
	e := newEnv(t, middleware.WithDedupWindow(0)) // the refused call is not held for a retry
	srv := serve(t, 200, "application/json", chatResponse)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)

	withSecrets := "http://someone:pw-CANARY-userinfo@" + u.Host + "/v1/chat/completions?key=CANARY-query-key"
	resp, err := post(t, e.client, context.Background(), withSecrets, chatBody)
	require.NoError(t, err)
	resp.Body.Close()

	// A call that never got an answer names its server too.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := ln.Addr().(*net.TCPAddr)
	ln.Close()
	_, err = post(t, e.client, context.Background(), fmt.Sprintf("http://%s/v1/chat/completions", refused), chatBody)
	require.Error(t, err)

	// URLs without a port, through a real http.Client.
	rec := middleware.NewRecorder(middleware.WithDedupWindow(0))
	defer rec.Close()
	client := &http.Client{Transport: middleware.Chain(answering{"application/json", chatResponse}, rec.Middleware())}
	for _, target := range []string{
		"https://api.openai.com/v1/chat/completions",
		"http://llm.internal/v1/chat/completions",
		"https://[2001:db8::1]:8443/v1/chat/completions",
		"HTTPS://Gateway.Example/openai/deployments/d/chat/completions?api-version=2024-10-21",
	} {
		resp, err := post(t, client, context.Background(), target, chatBody)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	require.NoError(t, rec.Flush())

	type server struct {
		host string
		port int
	}
	var got []server
	for _, r := range append(e.sinkRecords(t), rec.History().Records()...) {
		got = append(got, server{r.ServerAddress, r.ServerPort})
	}
	assert.Equal(t, []server{
		{"127.0.0.1", port}, {"127.0.0.1", refused.Port},
		{"api.openai.com", 443}, {"llm.internal", 80}, {"2001:db8::1", 8443}, {"gateway.example", 443},
	}, got)
	assert.NotContains(t, e.sinkText(), "CANARY", "no user info, no key")
	assert.Contains(t, e.sinkText(), `"server_address":"127.0.0.1","server_port":`+u.Port())
}

// By default, a tool-call response's answer keeps its tool calls and the
// reasoning an OpenAI-compatible server sent beside them (a captured
// Moonshot response, through openai-go); with WithoutOutput, neither,
// while the server and the response's tier and fingerprint are kept
// either way.
func TestOutputKeepsToolCallsAndReasoning(t *testing.T) {
	body := payload(t, "openai/chat_response_reasoning_content_tool_calls.json")
	params := openaisdk.ChatCompletionNewParams{
		Model:    "kimi-k2.5",
		Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("What is the weather in Beijing?")},
	}
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("kept=", keep), func(t *testing.T) {
			var e *env
			if keep {
				e = newEnv(t)
			} else {
				e = newEnv(t, middleware.WithoutOutput())
			}
			srv := serve(t, 200, "application/json", body)
			client := openaisdk.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(e.client))
			got, err := client.Chat.Completions.New(context.Background(), params)
			require.NoError(t, err)
			require.Len(t, got.Choices[0].Message.ToolCalls, 1, "the SDK got the call")

			rs := e.sinkRecords(t) // through the JSONL file
			require.Len(t, rs, 1)
			r := rs[0]
			assert.Equal(t, "tool_calls", r.Outcome.FinishReason)
			assert.Equal(t, "127.0.0.1", r.ServerAddress)
			if !keep {
				assert.Nil(t, r.Output, "arguments are what the model said")
				assert.NotContains(t, e.sinkText(), "get_weather:0")
				return
			}
			require.NotNil(t, r.Output)
			assert.Equal(t, []record.Part{
				{Type: record.PartReasoning, Content: "The user is asking for the weather in Beijing. I have a function available called `get_weather` that takes a location parameter (the city name) and returns the current weather for that location.\n\nI need to call the `get_weather` function with \"Beijing\" as the location parameter."},
				{Type: record.PartToolCall, ID: "get_weather:0", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Beijing"}`)},
			}, r.Output.Parts, `"content": "" is no text`)
			assert.Equal(t, record.RoleAssistant, r.Output.Role)
			assert.Equal(t, r, one(t, e), "the history holds what the file does")
		})
	}
}

// OpenAI's service tier and system fingerprint reach the record, from a
// whole response (openai-go) and a stream (go-openai), and a Responses
// stream's reasoning summaries (openai-go's streaming Responses API), all
// captured from the live API.
func TestServiceTierFingerprintAndStreamedReasoning(t *testing.T) {
	e := newEnv(t)

	whole := serve(t, 200, "application/json", payload(t, "openai/openai_chat_response.json"))
	c := openaisdk.NewClient(option.WithBaseURL(whole.URL+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(e.client))
	_, err := c.Chat.Completions.New(context.Background(), openaisdk.ChatCompletionNewParams{
		Model: "gpt-3.5-turbo", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage("How are you?")},
	})
	require.NoError(t, err)

	chunks := serve(t, 200, "text/event-stream", payload(t, "openai/openai_chat_stream.sse"))
	stream, err := goOpenAIClient(chunks.URL, e.client).CreateChatCompletionStream(context.Background(), goopenai.ChatCompletionRequest{
		Model: "gpt-4o", Stream: true, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "Weather in New York?"}},
	})
	require.NoError(t, err)
	for {
		if _, err := stream.Recv(); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	stream.Close()

	summaries := payload(t, "openai/responses_stream_reasoning_summary.sse")
	events := serve(t, 200, "text/event-stream", summaries)
	c = openaisdk.NewClient(option.WithBaseURL(events.URL+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(e.client))
	rs := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "o3-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openaisdk.String("How do I cross the street?")},
	})
	var sdkSummary []string
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.reasoning_summary_text.done" {
			sdkSummary = append(sdkSummary, ev.Text)
		}
	}
	require.NoError(t, rs.Err())
	require.Len(t, sdkSummary, 4)

	recs := e.sinkRecords(t)
	require.Len(t, recs, 3)
	assert.Equal(t, "default", recs[0].ServiceTier)
	assert.Empty(t, recs[0].SystemFingerprint, `"system_fingerprint": null`)
	assert.Equal(t, "fp_143bb8492c", recs[1].SystemFingerprint)
	assert.Equal(t, "openai.responses.create", recs[2].MethodName)
	assert.Equal(t, "default", recs[2].ServiceTier, "the tier that served it, not the request's auto")
	assert.Equal(t, strings.Join(sdkSummary, "\n\n"), recs[2].Output.Reasoning(), "what the SDK's user saw of the reasoning")
	assert.NotEmpty(t, recs[2].Output.Text())
	assert.NotContains(t, recs[2].Output.Text(), sdkSummary[0])
}

// What is kept of the output is bounded, and a cut is named; a secret a
// stream splits across its events, which no redaction of the body can
// see, is redacted once the text is put together.
func TestOutputBoundsAndRedaction(t *testing.T) {
	const key = "sk-proj-SPLITsecret0123456789abcdefghijklmnop"
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	half := len(key) / 2
	split := chunk(`{"role":"assistant","content":"your key: `+key[:half]+`"}`) +
		chunk(`{"content":"`+key[half:]+`"}`) +
		chunk(`{"reasoning_content":"I saw `+key[:half]+`"}`) +
		chunk(`{"reasoning_content":"`+key[half:]+` in the prompt."}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"store","arguments":"{\"k\":\"`+key[:half]+`"}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+key[half:]+`\"}"}}]}`) +
		`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"

	long := strings.Repeat("é", 50<<10) // 100 KiB of two-byte runes
	var calls []string
	for i := range 200 {
		calls = append(calls, fmt.Sprintf(`{"id":"call_%d","type":"function","function":{"name":"f","arguments":"{\"i\":%d,\"pad\":\"%s\"}"}}`, i, i, strings.Repeat("x", 1000)))
	}
	big := `{"id":"c2","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"` + long + `","tool_calls":[` + strings.Join(calls, ",") + `]},"finish_reason":"tool_calls"}]}`

	e := newEnv(t)
	s := (&scripted{}).add(200, split, map[string]string{"Content-Type": "text/event-stream"}).add(200, big, nil)
	srv := s.start(t)
	for _, body := range []string{`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`} {
		resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", body)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(body, "stream") {
			assert.Contains(t, string(got), key[:half], "the caller gets every byte")
		}
	}
	recs := e.sinkRecords(t)
	require.Len(t, recs, 2)

	r := recs[0]
	assert.Equal(t, "your key: "+redact.Redacted, r.Output.Text())
	assert.Equal(t, "I saw "+redact.Redacted+" in the prompt.", r.Output.Reasoning())
	stored := toolCalls(r.Output)
	require.Len(t, stored, 1)
	assert.Equal(t, record.Part{Type: record.PartToolCall, ID: "call_1", Name: "store", Arguments: json.RawMessage(`{"k":"` + redact.Redacted + `"}`)}, stored[0])
	assert.NotContains(t, e.sinkText(), key[half:])

	r = recs[1]
	stored = toolCalls(r.Output)
	assert.Len(t, r.Output.Parts, 128, "at most 128 parts")
	args := 0
	for i, c := range stored {
		assert.Equal(t, fmt.Sprintf("call_%d", i), c.ID)
		args += len(c.Arguments)
	}
	assert.LessOrEqual(t, args, 64<<10, "the arguments together are bounded as the text is")
	assert.Greater(t, args, 63<<10)
	assert.Len(t, r.Output.Reasoning(), 64<<10, "cut on a rune boundary, at 64 KiB")
	assert.True(t, strings.HasPrefix(long, r.Output.Reasoning()))
	assert.Contains(t, r.Truncated, "output_message")
	assert.True(t, json.Valid([]byte(r.AppendJSON(nil))))
}

// toolCalls are the tool call parts of an answer.
func toolCalls(m *record.Message) []record.Part {
	var out []record.Part
	for _, p := range m.Parts {
		if p.Type == record.PartToolCall {
			out = append(out, p)
		}
	}
	return out
}
