package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers"
)

// ownAPI is a provider of the user's own: a chat API at /own/chat whose
// body takes guidance in a "preamble" field.
type ownAPI struct{ asked *atomic.Int32 }

func (ownAPI) Name() string { return "own" }

func (p ownAPI) ParseRequest(req *providers.Request) (providers.Call, bool) {
	p.asked.Add(1)
	if req.URL == nil || req.URL.Path != "/own/chat" {
		return providers.Call{}, false
	}
	return providers.Call{MethodName: "own.chat", Args: json.RawMessage(`[]`), Kwargs: json.RawMessage(`{}`)}, true
}

func (ownAPI) ParseResponse(*providers.Call, *providers.Response) providers.Result {
	return providers.Result{Finished: true}
}

// AddGuidance inserts "preamble":text as the body object's first member,
// every byte of the body kept in order.
func (ownAPI) AddGuidance(req *providers.Request, text string) ([]byte, bool) {
	open := bytes.IndexByte(req.Body, '{')
	if open < 0 || len(bytes.TrimSpace(req.Body[:open])) > 0 {
		return nil, false
	}
	rest := req.Body[open+1:]
	q, _ := json.Marshal(text)
	member := append([]byte(`"preamble":`), q...)
	if t := bytes.TrimSpace(rest); len(t) > 0 && t[0] != '}' {
		member = append(member, ',')
	}
	out := append(append(append([]byte(nil), req.Body[:open+1]...), member...), rest...)
	return out, json.Valid(out)
}

// never is asked first and recognizes nothing: it counts how often the
// recorder asks the providers in turn.
type never struct{ asked *atomic.Int32 }

func (never) Name() string { return "never" }
func (n never) ParseRequest(*providers.Request) (providers.Call, bool) {
	n.asked.Add(1)
	return providers.Call{}, false
}
func (never) ParseResponse(*providers.Call, *providers.Response) providers.Result {
	return providers.Result{}
}

// A provider given with WithProviders takes the preview through its own
// AddGuidance, and the request is matched to it once.
func TestPreviewThroughAProviderOfYourOwn(t *testing.T) {
	var sent []string
	var mu sync.Mutex
	srv := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, string(b))
		mu.Unlock()
		io.WriteString(w, `{}`)
	})
	var asked, ownAsked atomic.Int32
	e := newEnv(t, middleware.WithHistoryPreview(3), middleware.WithProviders(never{&asked}, ownAPI{&ownAsked}))
	ctx := middleware.WithTrace(context.Background(), "own-1")
	for range 2 {
		resp, err := post(t, e.client, ctx, srv.URL+"/own/chat", `{"question":"hi"}`)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, sent, 2)
	assert.True(t, strings.HasPrefix(sent[1], `{"preamble":"`+strings.ReplaceAll(middleware.HistoryGuidance, `"`, `\"`)), sent[1])
	assert.True(t, strings.HasSuffix(sent[1], `,"question":"hi"}`))
	assert.Contains(t, sent[1], "History: 1 record in this conversation (trace own-1).")
	rs := e.records()
	require.Len(t, rs, 2)
	assert.Equal(t, "own.chat", rs[1].MethodName)
	assert.True(t, rs[1].HistoryGuidance)
	assert.EqualValues(t, 2, asked.Load(), "the providers are asked in turn once per request")
	assert.EqualValues(t, 4, ownAsked.Load(), "the match, then the parse of the body, by the same provider")
}
