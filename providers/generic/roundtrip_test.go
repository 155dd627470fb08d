package generic_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
)

// One meaning of a message across a turn, for an endpoint no provider of
// its own knows (a gateway's chat API, called with net/http): the answer
// a record keeps, read from the first choice's message, is the message
// the next request carries when the caller sends back the message it got.
func TestAnswerSentBack(t *testing.T) {
	answers := []string{
		`{"id":"g-1","object":"chat.completion","model":"house-model","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"stock","arguments":"{\"sku\": \"A-7\"}"}}]}}]}`,
		`{"id":"g-2","object":"chat.completion","model":"house-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"3 in stock."}}]}`,
	}
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answers[min(n, 1)])
		n++
	}))
	defer srv.Close()
	rec := middleware.NewRecorder(middleware.WithSyncSinks())
	defer rec.Close()
	client := rec.Client(nil)

	messages := []any{map[string]any{"role": "user", "content": "Is A-7 in stock?"}}
	post := func() map[string]any {
		body, _ := json.Marshal(map[string]any{"model": "house-model", "messages": messages})
		resp, err := client.Post(srv.URL+"/gateway/v2/converse", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var got map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		return got
	}
	got := post()
	message := got["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	messages = append(messages, message, map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "3"})
	post()

	rs := rec.History().Records()
	require.Len(t, rs, 2)
	require.Equal(t, "http.POST /gateway/v2/converse", rs[0].MethodName)
	if diff := providertest.SentBack(rs[0], rs[1]); diff != "" {
		t.Fatal(diff)
	}
	require.Equal(t, rs[0].TraceID, rs[1].TraceID, "one conversation")
}
