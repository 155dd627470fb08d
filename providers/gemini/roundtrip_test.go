package gemini_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

// turns serves bodies in order (the last one again after that).
func turns(t *testing.T, bodies ...[]byte) *httptest.Server {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		i := min(int(n.Add(1))-1, len(bodies)-1)
		if strings.Contains(r.URL.Path, "streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Write(bodies[i])
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sentBack(t *testing.T, rec *middleware.Recorder) {
	t.Helper()
	rs := rec.History().Records()
	require.Len(t, rs, 2)
	if diff := providertest.SentBack(rs[0], rs[1]); diff != "" {
		t.Fatal(diff)
	}
	msgs := record.Messages(rs[1].Args)
	require.Equal(t, record.RoleTool, msgs[len(msgs)-1].Role, "a user content of function responses is the tool's")
}

// One meaning of a message across a turn: the candidate's content a
// record keeps (a thought summary and a function call) is the message the
// next request carries when the caller appends the content genai gave it,
// then the function's response.
func TestAnswerSentBackGenerateContent(t *testing.T) {
	srv := turns(t, testdata(t, "gemini_generate_response_thinking_functioncall.json"), testdata(t, "gemini_generate_response.json"))
	rec := newRecorder(t)
	c := genaiClient(t, srv.URL, rec.Client(nil))
	contents := []*genai.Content{genai.NewContentFromText("How many days until New Year's Eve?", genai.RoleUser)}
	config := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
	first, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-pro", contents, config)
	require.NoError(t, err)
	answer := first.Candidates[0].Content
	contents = append(contents, answer)
	for _, p := range answer.Parts {
		if p.FunctionCall != nil {
			contents = append(contents, genai.NewContentFromFunctionResponse(p.FunctionCall.Name, map[string]any{"date": "2025-10-26"}, genai.RoleUser))
		}
	}
	_, err = c.Models.GenerateContent(context.Background(), "gemini-2.5-pro", contents, config)
	require.NoError(t, err)
	sentBack(t, rec)
}

// genai's chat keeps each chunk of a streamed answer as a content of its
// own: the model's consecutive contents are read as the one message they
// are, the answer the recorder put together from the same stream.
func TestAnswerSentBackChatStream(t *testing.T) {
	srv := turns(t, testdata(t, "gemini_stream_thinking_functioncall.sse"), testdata(t, "gemini_stream.sse"))
	rec := newRecorder(t)
	c := genaiClient(t, srv.URL, rec.Client(nil))
	chat, err := c.Chats.Create(context.Background(), "gemini-2.5-flash", nil, nil)
	require.NoError(t, err)
	var calls []*genai.FunctionCall
	for chunk, err := range chat.SendMessageStream(context.Background(), genai.Part{Text: "How many days until New Year's Eve?"}) {
		require.NoError(t, err)
		for _, p := range chunk.Candidates[0].Content.Parts {
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall)
			}
		}
	}
	require.NotEmpty(t, calls)
	require.Greater(t, len(chat.History(false)), 2, "genai kept the answer in several contents")
	for chunk, err := range chat.SendMessageStream(context.Background(), *genai.NewPartFromFunctionResponse(calls[0].Name, map[string]any{"date": "2025-10-26"})) {
		require.NoError(t, err)
		_ = chunk
	}
	sentBack(t, rec)
}
