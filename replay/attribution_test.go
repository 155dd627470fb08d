package replay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/replay"
)

// A cassette matches requests, not records: the user, tags and metadata a
// call carries (issue 27) are the record's, so a cassette recorded for one
// user replays for another, and the records of the replay carry the
// replaying context's.
func TestCassettesDoNotMatchOnAttribution(t *testing.T) {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`)
	}))
	path := filepath.Join(t.TempDir(), "c.jsonl")
	ask := func(ctx context.Context, client *http.Client, base string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	}
	alice := middleware.WithMetadata(middleware.WithTags(middleware.WithUser(context.Background(), "alice"), "a"), "tenant", "x")
	bob := middleware.WithMetadata(middleware.WithTags(middleware.WithUser(context.Background(), "bob"), "b"), "tenant", "y")

	rec, err := replay.New(path, replay.WithMode(replay.ModeRecord))
	require.NoError(t, err)
	recorder := middleware.NewRecorder()
	require.NoError(t, ask(alice, middleware.NewClient(nil, recorder.Middleware(), rec.Middleware()), provider.URL))
	require.NoError(t, rec.Close())
	provider.Close()

	cassette, err := replay.New(path)
	require.NoError(t, err)
	replayed := middleware.NewRecorder()
	require.NoError(t, ask(bob, middleware.NewClient(nil, replayed.Middleware(), cassette.Middleware()), "https://api.openai.com"), "bob's call replays alice's answer")
	r := replayed.History().Records()[0]
	assert.Equal(t, "bob", r.UserID)
	assert.Equal(t, []string{"b"}, r.Tags)
	assert.Equal(t, "y", r.Metadata["tenant"])
}
