package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// words returns about n bytes of prose for turn i.
func words(what string, i, n int) string {
	s := fmt.Sprintf("%s %d: ", what, i)
	for len(s) < n {
		s += fmt.Sprintf("word%d ", len(s)%97)
	}
	return s
}

// A conversation through go-openai, 10, 50 and 100 turns of about 500
// bytes of new text per question and per answer, recorded to a JSONL file
// written whole and with args_prefix. With args_prefix, 100 turns take at
// most twice what was said in the file and three times in the history, and
// every reader still gets each call's messages as the server received
// them.
func TestConversationGrowsLinearly(t *testing.T) {
	for _, turns := range []int{10, 50, 100} {
		for _, prefix := range []bool{false, true} {
			t.Run(fmt.Sprintf("turns=%d/args_prefix=%t", turns, prefix), func(t *testing.T) {
				conversation(t, turns, prefix)
			})
		}
	}
}

func conversation(t *testing.T, turns int, prefix bool) {
	var sent []string // the messages of each request, as the server got them
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages json.RawMessage `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &req))
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, req.Messages))
		sent = append(sent, compact.String())
		answer, _ := json.Marshal(words("answer", len(sent), 500))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, len(sent), answer)
	}))
	defer srv.Close()

	path := filepath.Join(t.TempDir(), "history.jsonl")
	file, err := record.OpenJSONLWith(path, record.JSONLOptions{ArgsPrefix: prefix})
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(file))
	client := goOpenAIClient(srv.URL, rec.Client(nil))

	ctx := middleware.WithTrace(context.Background(), "conversation-1")
	msgs := []goopenai.ChatCompletionMessage{{Role: "system", Content: words("system", 0, 500)}}
	for i := range turns {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: "user", Content: words("question", i, 500)})
		resp, err := client.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
		require.NoError(t, err)
		msgs = append(msgs, resp.Choices[0].Message)
	}
	require.NoError(t, rec.Flush())
	unique := len(sent[turns-1])

	// The history: what it holds, measured by what emptying it frees.
	history := rec.History()
	inMemory := history.Trace("conversation-1")
	require.Len(t, inMemory, turns)
	for i, r := range inMemory {
		require.Equal(t, string(chatArgs(t, sent[i])), string(r.Args), "call %d from the history", i)
	}
	inMemory = nil
	var full, empty runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&full)
	history.Reset()
	runtime.GC()
	runtime.ReadMemStats(&empty)
	held := int64(full.HeapAlloc) - int64(empty.HeapAlloc)
	runtime.KeepAlive(rec)

	require.NoError(t, rec.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	t.Logf("%d turns, %d bytes said: file %d bytes (%.2f×), history %d bytes (%.2f×)",
		turns, unique, info.Size(), float64(info.Size())/float64(unique), held, float64(held)/float64(unique))
	if turns >= 100 {
		// The goals; a short conversation's heap is lost in the noise of
		// the recorder's pools.
		assert.LessOrEqual(t, held, int64(4*unique), "the history")
	}
	if prefix {
		assert.LessOrEqual(t, info.Size(), int64(5*unique/2), "the file")
	}

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	got, err := record.ReadJSONL(f)
	require.NoError(t, err)
	require.Len(t, got, turns)
	for i, r := range got {
		require.Equal(t, string(chatArgs(t, sent[i])), string(r.Args), "call %d from the file", i)
		assert.Nil(t, r.ArgsPrefix)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	want := 0
	if prefix {
		want = turns - 1 // every call after the first names the one before
	}
	assert.Equal(t, want, strings.Count(string(data), `"args_prefix":`))
}
