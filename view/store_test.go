package view_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/postgres"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
	"github.com/llmhistory/llmhistory/view"
)

// A store is a Source: its conversations, a transcript, a call, the
// overview, and records written meanwhile, told as they arrive; the same
// on both backends.
func TestStoreSource(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testStoreSource(t, "sqlite:"+filepath.Join(t.TempDir(), "history.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		testStoreSource(t, pgtest.Start(t, pgtest.Options{}).NewDatabase(t))
	})
}

func testStoreSource(t *testing.T, url string) {
	ctx := context.Background()
	w, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer w.Close()
	var rs []record.Record
	for i := range 12 {
		r := rec(fmt.Sprintf("t%02d", i%4), i, []string{"ana", "bo"}[i%2], i != 5)
		r.Tags = []string{"checkout"}
		r.Args = []byte(fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"first question of t%02d"}]},{"role":"assistant","parts":[{"type":"text","content":"an answer"}]},{"role":"user","parts":[{"type":"text","content":"question %d"}]}]`, i%4, i))
		rs = append(rs, r)
	}
	// t03 moves to another provider mid-way, in its longest call.
	rs[7].MethodName, rs[7].Model = "anthropic.messages.create", "claude-sonnet-4-5"
	rs[7].Args = []byte(`[{"role":"user","parts":[{"type":"text","content":"first question of t03"}]},{"role":"assistant","parts":[{"type":"text","content":"an answer"}]},{"role":"user","parts":[{"type":"text","content":"more"}]},{"role":"assistant","parts":[{"type":"text","content":"more"}]},{"role":"user","parts":[{"type":"text","content":"question 7"}]}]`)
	for _, r := range rs {
		require.NoError(t, w.Append(ctx, r))
	}
	require.NoError(t, w.Flush())

	s, err := store.OpenWith(ctx, url, store.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	src := view.FromStore(s, 20*time.Millisecond)

	p, err := src.Conversations(ctx, view.Query{})
	require.NoError(t, err)
	require.Len(t, p.Conversations, 4)
	c := p.Conversations[0]
	assert.Equal(t, "t03", c.ID, "newest first")
	assert.Equal(t, 3, c.Calls)
	assert.Equal(t, "first question of t03", c.FirstUserMessage)
	assert.Equal(t, []string{"checkout"}, c.Tags)
	assert.Equal(t, 5, c.Turns, "its longest call's messages, not its newest's")
	assert.Equal(t, []string{"openai", "anthropic"}, c.Providers)
	assert.Equal(t, []string{"gpt-4o-mini-2024-07-18", "claude-sonnet-4-5"}, c.Models)

	p, err = src.Conversations(ctx, view.Query{Outcome: view.OutcomeError})
	require.NoError(t, err)
	require.Len(t, p.Conversations, 1)
	assert.Equal(t, "t01", p.Conversations[0].ID)
	p, err = src.Conversations(ctx, view.Query{User: "bo"})
	require.NoError(t, err)
	assert.Len(t, p.Conversations, 2)
	_, err = src.Conversations(ctx, view.Query{Outcome: view.OutcomeRetried})
	assert.Error(t, err)
	_, err = src.Conversations(ctx, view.Query{Cursor: "nonsense"})
	assert.ErrorIs(t, err, view.ErrBadCursor)

	tp, err := src.Trace(ctx, view.TraceQuery{ID: "t01", Offset: 1, Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, 3, tp.Conversation.Calls)
	assert.Equal(t, 1, tp.Conversation.Errors)
	require.Len(t, tp.Calls, 1)
	assert.Equal(t, "t01-call-005", tp.Calls[0].Record.CallID)
	_, err = src.Trace(ctx, view.TraceQuery{ID: "nope"})
	assert.True(t, errors.Is(err, view.ErrNotFound))
	call, err := src.Call(ctx, "t02-call-006")
	require.NoError(t, err)
	assert.JSONEq(t, string(rs[6].Args), string(call.Record.Args))
	_, err = src.Call(ctx, "nope")
	assert.True(t, errors.Is(err, view.ErrNotFound))

	st, err := src.Stats(ctx, view.Query{})
	require.NoError(t, err)
	assert.Equal(t, 12, st.Calls)
	assert.Equal(t, 1, st.Errors)
	assert.InDelta(t, 0.011, st.CostUSD, 1e-9)
	assert.Equal(t, 0, st.Unpriced, "the failed call has no cost, and used no tokens: the spend leaves nothing out")
	require.NotEmpty(t, st.Series)
	assert.Equal(t, time.Hour, st.Bucket)
	require.Len(t, st.Users, 2)
	require.Len(t, st.Models, 2)
	assert.Greater(t, st.Models[0].P50MS, 0.0)
	f, err := src.Facets(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"ana", "bo"}, f.Users)
	assert.Equal(t, []string{"checkout"}, f.Tags)

	h := view.NewHandler(src, view.Options{})
	for _, path := range []string{"/", "/?user=ana&q=question", "/c/t01", "/c/t01/tree", "/call/t02-call-006", "/overview"} {
		w := fetch(t, h, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusOK, w.Code, "%s: %s", path, w.Body.String())
	}
	assert.Contains(t, fetch(t, h, http.MethodGet, "/c/t01", nil).Body.String(), "first question of t01")
	assert.Equal(t, http.StatusBadRequest, fetch(t, h, http.MethodGet, "/?outcome=retried", nil).Code)

	// Live: a record another process writes is told.
	sub, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := src.Subscribe(sub)
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // the follower starts at the end
	require.NoError(t, w.Append(ctx, rec("late", 40, "", true)))
	require.NoError(t, w.Flush())
	select {
	case c := <-changes:
		assert.Equal(t, 1, c.Records)
		assert.Equal(t, []string{"late"}, c.Traces)
	case <-time.After(10 * time.Second):
		t.Fatal("no change told")
	}
}
