package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/view"
)

// serve opens the viewer on history files, as llmhistory view does.
func serve(t testing.TB, paths ...string) (*view.JSONL, *httptest.Server) {
	t.Helper()
	src, err := view.OpenJSONL(paths, view.JSONLOptions{Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, src.Wait(context.Background()))
	h := view.NewHandler(src, view.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		src.Close()
	})
	return src, srv
}

// In a browser, on a history the recorder wrote: the list, a filter, a
// conversation's turns, a call, a record appearing live, and model and
// user text that would be script shown as text.
func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	path := filepath.Join(t.TempDir(), "history.jsonl")
	recordHistory(t, path)
	src, srv := serve(t, path)

	rows := `[...document.querySelectorAll('#conversations tbody tr[data-key]')].map(e => e.dataset.key)`

	// Every conversation, the one the recorder inferred too.
	b.do(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#conversations tbody tr[data-key]`)))
	keys := eval[[]string](t, b, rows)
	assert.Len(t, keys, 5)
	assert.Subset(t, keys, []string{"trip", "xss", "broken", "think"})
	assert.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('#conversations .badge').length`), "one inferred conversation")

	// Filter: ana's conversations, then those with an error.
	b.do(t,
		chromedp.SetValue(chromedp.CSS(`input[name=user]`), "ana"),
		chromedp.Click(chromedp.CSS(`.fields button[type=submit]`)),
	)
	b.loaded(t, "user=ana")
	assert.Equal(t, []string{"trip"}, eval[[]string](t, b, rows))
	b.do(t, chromedp.SetValue(chromedp.CSS(`select[name=outcome]`), "error"), chromedp.Click(chromedp.CSS(`.fields button[type=submit]`)))
	b.loaded(t, "outcome=error")
	assert.Empty(t, eval[[]string](t, b, rows), "ana had no error")
	b.do(t, chromedp.Navigate(srv.URL+"/?outcome=error"))
	b.loaded(t, "outcome=error")
	assert.Equal(t, []string{"broken"}, eval[[]string](t, b, rows))
	b.do(t,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.SetValue(chromedp.CSS(`input[name=q]`), "PICTURE"),
		chromedp.Click(chromedp.CSS(`.searchrow button`)),
	)
	b.loaded(t, "q=PICTURE")
	assert.Equal(t, []string{"think"}, eval[[]string](t, b, rows), "a search, in any case")

	// A conversation, its turns in order, the tool call with its result.
	b.do(t, chromedp.Navigate(srv.URL+"/?user=ana"), chromedp.Click(chromedp.CSS(`tr[data-key="trip"] a.open`)))
	b.loaded(t, "/c/trip")
	turns := eval[[]string](t, b, `[...document.querySelectorAll('#transcript > div.msg')].map(e => e.classList[1] + ': ' + e.querySelector('.body').textContent.replace(/\s+/g, ' ').trim())`)
	require.Len(t, turns, 7, "%q", turns)
	assert.Equal(t, "user: I'm going to Lisbon in May. What should I pack?", turns[0])
	assert.Equal(t, "assistant: Light layers, a rain jacket and shoes that grip on cobbles.", turns[1])
	assert.Equal(t, "user: Is it busy then?", turns[2])
	assert.Equal(t, "assistant: May is busy but not peak: book the trams early.", turns[3])
	assert.Equal(t, "user: Where is my order 1042?", turns[4])
	assert.Contains(t, turns[5], "lookup_order")
	assert.Contains(t, turns[5], `"order_id": "1042"`)
	assert.Contains(t, turns[5], `"status": "shipped"`, "the tool's result, next to its call, its JSON indented")
	assert.Equal(t, "assistant: Order 1042 has shipped; it arrives on Thursday.", turns[6])
	calls := eval[[]string](t, b, `[...document.querySelectorAll('#transcript .call')].map(e => e.textContent.replace(/\s+/g, ' ').trim())`)
	require.Len(t, calls, 4)
	assert.Contains(t, calls[1], "2 attempts", "the retried call")
	assert.Contains(t, calls[0], "gpt-4o-mini-2024-07-18")
	assert.Contains(t, calls[0], "tokens")
	assert.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('#transcript details.msg.system').length`), "the system prompt, folded")

	// A call: its kwargs, its timings, and its raw record.
	trip, err := src.Trace(context.Background(), view.TraceQuery{ID: "trip"})
	require.NoError(t, err)
	retried := trip.Calls[1].Record.CallID
	b.do(t, chromedp.Click(chromedp.CSS(`#call-`+retried+` a.callno`)))
	b.loaded(t, "/call/"+retried)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(eval[string](t, b, `document.getElementById('raw').textContent`)), &raw))
	assert.Equal(t, retried, raw["call_id"])
	assert.EqualValues(t, 2, raw["attempts"])
	page := eval[string](t, b, `document.querySelector('main').innerText.replace(/\s+/g, ' ')`)
	for _, want := range []string{"Kwargs", `"model": "gpt-4o-mini"`, "attempts 2 (1 retried)", "Is it busy then?", "Raw record"} {
		assert.Contains(t, page, want)
	}
	assert.False(t, eval[bool](t, b, `document.querySelector('button[data-copy]').hidden`), "the copy button, shown by the script")

	// Live: a record appended to the file shows up on the open page.
	b.do(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#conversations tbody tr[data-key]`)))
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#live.on`)))
	eval[bool](t, b, `window.sameDocument = true`)
	appendRecord(t, path, record.Record{
		CallID: "live-call-1", Timestamp: record.FormatTime(time.Now()), Speaker: record.SpeakerUser,
		MethodName: "openai.chat.completions.create", Args: []byte(`[{"role":"user","parts":[{"type":"text","content":"Written while you watched."}]}]`),
		Kwargs: []byte(`{"model":"gpt-4o-mini"}`), Outcome: record.Success("chat.completion"), TraceID: "live-1", UserID: "zed",
	})
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#conversations tbody tr[data-key="live-1"]`)))
	assert.True(t, eval[bool](t, b, `window.sameDocument === true`), "no reload")
	assert.Equal(t, "live-1", eval[string](t, b, `document.querySelector('#conversations tbody tr').dataset.key`), "newest first")
	assert.True(t, eval[bool](t, b, `document.querySelector('tr[data-key="live-1"]').classList.contains('fresh')`))

	// Text that is markup stays text, on every page that shows it.
	for _, p := range []struct{ path, ready, text string }{
		{"/", `#conversations tr[data-key="xss"]`, xssQuestion},
		{"/c/xss", `#transcript .msg.assistant`, xssAnswer},
		{"/call/" + callOf(t, src, "xss"), `#raw`, xssAnswer},
	} {
		b.do(t, chromedp.Navigate(srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)), chromedp.Sleep(200*time.Millisecond))
		assert.Contains(t, eval[string](t, b, `document.querySelector('main').textContent`), p.text, p.path)
		assert.Zero(t, eval[int](t, b, `document.querySelectorAll('main img, main script, main svg[onload], main b').length`), p.path)
	}
	dialogs, problems := b.reported()
	assert.Empty(t, dialogs, "dialogs opened")
	assert.Empty(t, problems, "errors the pages logged")

	// The watch works: a page that does open a dialog is seen to.
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>probe</title><script>alert("probe")</script>`)
	}))
	defer probe.Close()
	b.do(t, chromedp.Navigate(probe.URL))
	require.Eventually(t, func() bool { d, _ := b.reported(); return len(d) == 1 }, 10*time.Second, 20*time.Millisecond)
}

// callOf is the call_id of the first call of a conversation.
func callOf(t testing.TB, src view.Source, trace string) string {
	t.Helper()
	tp, err := src.Trace(context.Background(), view.TraceQuery{ID: trace, Limit: 1})
	require.NoError(t, err)
	return tp.Calls[0].Record.CallID
}

// appendRecord appends one record to a history file, as a recorder would.
func appendRecord(t testing.TB, path string, r record.Record) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(append(r.AppendJSON(nil), '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// loaded waits until the page's address holds want and the page has
// loaded: a click that submits a form or follows a link has done its work.
func (b *browser) loaded(t testing.TB, want string) {
	t.Helper()
	expr := `decodeURIComponent(location.pathname + location.search).includes(` + strconvQuote(want) + `) && document.readyState === 'complete'`
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Evaluating while the page navigates fails: that is a "not yet".
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page at %q after 30 s (last error: %v)", want, err)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
