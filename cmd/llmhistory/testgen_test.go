package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/replay"
)

// TestTestgenInAFreshModule is the "done when": conversations
// recorded through go-openai, genai and the Anthropic SDK (the demo's
// script against its fakes: a retried call, a tool loop, streams from
// OpenAI and Gemini, a failed call), through openai-go (a retried call,
// a tool loop, a streamed answer), anthropic-sdk-go (overloaded once,
// retried; a tool loop; a streamed answer) and genai (a function call
// and its answer streamed) become generated tests; go test
// runs them in a module of their own, offline, and they pass; an answer
// changed in a cassette makes them fail.
func TestTestgenInAFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own with four SDKs (about a minute): run without -short")
	}
	dir := t.TempDir()
	history := filepath.Join(dir, "h.jsonl")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"demo", "-provider", "fake", "-o", history, "-report", filepath.Join(dir, "r.md"), "-color", "never"},
		stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	require.Equal(t, 0, code, errOut.String())
	f, err := os.Open(history)
	require.NoError(t, err)
	recs, err := record.ReadJSONL(f)
	f.Close()
	require.NoError(t, err)
	demoTrace := recs[0].TraceID

	recordOpenAIGo(t, history, "openai-go-1")
	recordAnthropic(t, history, "anthropic-1")
	recordGenAI(t, history, "genai-1")

	mod := filepath.Join(dir, "mod")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/replaytest\n\ngo 1.26.0\n\n"+
		"require github.com/llmhistory/llmhistory v0.0.0\n\nreplace github.com/llmhistory/llmhistory => "+root+"\n"), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644))

	for _, args := range [][]string{
		{"testgen", "-o", mod, "-package", "replaytest", history, demoTrace},
		{"testgen", "-o", mod, "-package", "replaytest", "-openai", "openai-go", history, "openai-go-1"},
		{"testgen", "-o", mod, "-package", "replaytest", history, "anthropic-1"},
		{"testgen", "-o", mod, "-package", "replaytest", history, "genai-1"},
	} {
		out.Reset()
		errOut.Reset()
		require.Equal(t, 0, run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut}), errOut.String())
		t.Logf("%s%s", out.String(), errOut.String())
	}
	for _, key := range []string{pastedKey, fakeOpenAIKey, fakeGeminiKey, fakeAnthropicKey} {
		filepath.WalkDir(mod, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(path)
				require.NotContains(t, string(b), key, "a key in %s", path)
			}
			return nil
		})
	}

	goTest := func() (string, error) {
		cmd := exec.Command("go", "test", "-count=1", "-v", ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GONOSUMDB=*", "GOSUMDB=off", "GOPROXY=off", "LLMHISTORY_REPLAY=")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	got, err := goTest()
	require.NoError(t, err, got)
	for _, want := range []string{"PASS: TestTraceDemo", "PASS: TestTraceOpenaiGo1", "PASS: TestTraceAnthropic1", "PASS: TestTraceGenai1", "openai.chat.completions.create", "gemini.models.streamGenerateContent", "anthropic.messages.create"} {
		require.Contains(t, got, want)
	}

	// An answer changed in a cassette: the SDK gets another text, and the
	// test says so.
	cassette := filepath.Join(mod, "testdata", "openai_go_1.jsonl")
	b, err := os.ReadFile(cassette)
	require.NoError(t, err)
	its, err := replay.Read(bytes.NewReader(b))
	require.NoError(t, err)
	last := its[len(its)-1].Response
	require.True(t, last.Stream, "the conversation ends with a stream")
	changed := false
	for i, fr := range last.Frames {
		if bytes.Contains(fr.Data, []byte("light layers")) {
			last.Frames[i].Data = bytes.ReplaceAll(fr.Data, []byte("light layers"), []byte("heavy coats"))
			changed = true
		}
	}
	require.True(t, changed)
	var buf bytes.Buffer
	require.NoError(t, replay.Write(&buf, its))
	require.NoError(t, os.WriteFile(cassette, buf.Bytes(), 0o644))
	got, err = goTest()
	require.Error(t, err, got)
	require.Contains(t, got, "FAIL: TestTraceOpenaiGo1")
	require.Contains(t, got, "heavy coats")
	require.Contains(t, got, "PASS: TestTraceDemo", "the other conversation's test still passes")
}

// recordOpenAIGo records a conversation through openai-go against the
// demo's OpenAI fake, appended to history: a question about the weather
// (a rate limit, retried), a tool loop, and its answer streamed.
func recordOpenAIGo(t *testing.T, history, trace string) {
	t.Helper()
	srv := httptest.NewServer(fakeOpenAI())
	defer srv.Close()
	f, err := os.OpenFile(history, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(record.NewJSONL(f)))
	hc := middleware.NewClient(nil, rec.Middleware(), middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond}))
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey(fakeOpenAIKey), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	ctx := middleware.WithTrace(context.Background(), trace)

	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a concise travel assistant."), openai.UserMessage("What's the weather in Lisbon in May?")}
	first, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs})
	require.NoError(t, err)
	msgs = append(msgs, first.Choices[0].Message.ToParam(), openai.UserMessage("Summarise what I've asked so far."))
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "run_ruby"})}
	call, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs, Tools: tools})
	require.NoError(t, err)
	require.NotEmpty(t, call.Choices[0].Message.ToolCalls)
	msgs = append(msgs, call.Choices[0].Message.ToParam(), openai.ToolMessage("1 question: the weather.", call.Choices[0].Message.ToolCalls[0].ID))
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	require.NoError(t, stream.Err())
	require.Contains(t, acc.Choices[0].Message.Content, "light layers")
	require.NoError(t, rec.Close())
}

// recordAnthropic records a tool loop through anthropic-sdk-go, appended
// to history, against a server of the Messages API: overloaded once (529,
// retried), then a tool_use, then the answer to the tool's result,
// streamed as Anthropic streams it.
func recordAnthropic(t *testing.T, history, trace string) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch n := calls.Add(1); {
		case n == 1:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		case !bytes.Contains(body, []byte(`"tool_result"`)):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_01Tool","type":"message","role":"assistant","model":"claude-sonnet-5","content":[`+
				`{"type":"text","text":"Let me check the forecast."},`+
				`{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Lisbon","month":"May"}}],`+
				`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"cache_read_input_tokens":30,"output_tokens":41}}`)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`message_start`, `{"type":"message_start","message":{"id":"msg_01Final","type":"message","role":"assistant","model":"claude-sonnet-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":180,"output_tokens":1}}}`,
				`content_block_start`, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`content_block_delta`, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Mild, 15 to 24 °C: "}}`,
				`content_block_delta`, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"pack light layers."}}`,
				`content_block_stop`, `{"type":"content_block_stop","index":0}`,
				`message_delta`, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`,
				`message_stop`, `{"type":"message_stop"}`,
			} {
				if strings.HasPrefix(ev, "{") {
					fmt.Fprintf(w, "data: %s\n\n", ev)
				} else {
					fmt.Fprintf(w, "event: %s\n", ev)
				}
			}
		}
	}))
	defer srv.Close()
	f, err := os.OpenFile(history, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(record.NewJSONL(f)))
	hc := middleware.NewClient(nil, rec.Middleware(), middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond}))
	client := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey(fakeAnthropicKey),
		anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0))
	ctx := middleware.WithTrace(context.Background(), trace)

	params := anthropic.MessageNewParams{Model: "claude-sonnet-5", MaxTokens: 300,
		System:   []anthropic.TextBlockParam{{Text: "You are a concise travel assistant."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in Lisbon in May?"))},
		Tools:    []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}}}
	first, err := client.Messages.New(ctx, params)
	require.NoError(t, err)
	require.Equal(t, anthropic.StopReasonToolUse, first.StopReason)
	params.Messages = append(params.Messages, first.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(first.Content[1].ID, `{"low":15,"high":24}`, false)))
	stream := client.Messages.NewStreaming(ctx, params)
	var answer anthropic.Message
	for stream.Next() {
		require.NoError(t, answer.Accumulate(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.Equal(t, "Mild, 15 to 24 °C: pack light layers.", answer.Content[0].Text)
	require.NoError(t, rec.Close())
}

// recordGenAI records a tool loop through genai, appended to history,
// against a server of the Gemini API: a function call, then the answer to
// its response, streamed.
func recordGenAI(t *testing.T, history, trace string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"functionResponse"`)) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Lisbon"}}}]},"finishReason":"STOP","index":0}],`+
				`"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":6,"totalTokenCount":46},"modelVersion":"gemini-2.5-flash","responseId":"resp-g1"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Mild and sunny, \"}]},\"index\":0}],\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"resp-g2\"}\r\n\r\n")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"15 to 24 °C.\"}]},\"finishReason\":\"STOP\",\"index\":0}],"+
			"\"usageMetadata\":{\"promptTokenCount\":60,\"candidatesTokenCount\":9,\"totalTokenCount\":69},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"resp-g2\"}\r\n\r\n")
	}))
	defer srv.Close()
	f, err := os.OpenFile(history, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(record.NewJSONL(f)))
	ctx := middleware.WithTrace(context.Background(), trace)
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: fakeGeminiKey, Backend: genai.BackendGeminiAPI,
		HTTPClient: rec.Client(nil), HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	require.NoError(t, err)
	config := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You are a concise travel assistant.", genai.RoleUser),
		Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather"}}}},
	}
	contents := []*genai.Content{genai.NewContentFromText("What's the weather in Lisbon in May?", genai.RoleUser)}
	first, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, config)
	require.NoError(t, err)
	call := first.FunctionCalls()
	require.Len(t, call, 1)
	contents = append(contents, first.Candidates[0].Content,
		genai.NewContentFromFunctionResponse("get_weather", map[string]any{"low": 15, "high": 24}, genai.RoleUser))
	var text string
	for resp, err := range client.Models.GenerateContentStream(ctx, "gemini-2.5-flash", contents, config) {
		require.NoError(t, err)
		text += resp.Text()
	}
	require.Equal(t, "Mild and sunny, 15 to 24 °C.", text)
	require.NoError(t, rec.Close())
}
