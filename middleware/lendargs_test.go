package middleware_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
)

// A recorder with no sink and no redactor builds each record's Args in a
// pool buffer that the next call reuses: the history must keep copies
// (the whole Args of a record that starts a conversation, what a turn
// adds to the one before), a failure held for a retry that never comes
// must keep its own, and a retried call is one record with the Args its
// attempts sent. Four goroutines call at once, so that the records of
// one line of calls come between those of another; every record is
// checked against what was sent after all the calls, when every buffer
// has been reused many times.
func TestLentArgsOutliveTheNextCall(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(body)]++
		first := seen[string(body)] == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case bytes.Contains(body, []byte("rate me")):
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
		case bytes.Contains(body, []byte("retry me")) && first:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"try again","type":"server_error"}}`)
		default:
			io.WriteString(w, `{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
		}
	}))
	defer srv.Close()
	rec := middleware.NewRecorder()
	client := rec.Client(nil) // net/http alone: nothing is retried but by the test

	msg := func(role, text string) map[string]string { return map[string]string{"role": role, "content": text} }
	var (
		sentMu sync.Mutex
		sent   []string
	)
	call := func(messages ...map[string]string) {
		args, err := json.Marshal(messages)
		require.NoError(t, err)
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","messages":%s}`, args)
		for attempt := 0; ; attempt++ {
			resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusInternalServerError || attempt > 0 {
				break // a 500 is retried once, with the same body
			}
		}
		sentMu.Lock()
		sent = append(sent, string(args))
		sentMu.Unlock()
	}
	long := strings.Repeat("a long turn that outgrows the pool's 8 KiB buffers. ", 400)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				// A conversation: each call extends the one before.
				convo := []map[string]string{msg("system", "be brief"), msg("user", fmt.Sprintf("question %d.%d", g, i))}
				call(convo...)
				convo = append(convo, msg("assistant", "ok"), msg("user", "and then?"))
				call(convo...)
				// Calls that start lines of their own.
				call(msg("user", fmt.Sprintf("unrelated %d.%d", g, i)))
				call(msg("user", fmt.Sprintf("rate me %d.%d", g, i))) // a 429, held for a retry that never comes
				call(msg("user", fmt.Sprintf("retry me %d.%d", g, i)))
				call(msg("user", long), msg("user", fmt.Sprintf("after the long one %d.%d", g, i)))
			}
		})
	}
	wg.Wait()
	require.NoError(t, rec.Close()) // emits the held failures

	var got []string
	for _, r := range rec.History().Records() {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, r.Args), "record %s", r.CallID)
		got = append(got, compact.String())
		if bytes.Contains(r.Args, []byte("retry me")) {
			assert.Equal(t, 2, r.Attempts, "a retried call is one record")
		}
	}
	assert.ElementsMatch(t, sent, got)
}
