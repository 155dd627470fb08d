package view_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/view"
)

func fetch(t testing.TB, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// Every page is sent with a policy that forbids inline script and style
// and any other site, and only GET and HEAD are answered.
func TestHandlerHeadersAndMethods(t *testing.T) {
	src := view.FromRecords([]record.Record{rec("a", 0, "ana", true)})
	h := view.NewHandler(src, view.Options{})
	for _, path := range []string{"/", "/c/a", "/c/a/tree", "/call/a-call-000", "/overview", "/nope"} {
		w := fetch(t, h, http.MethodGet, path, nil)
		csp := w.Header().Get("Content-Security-Policy")
		assert.Contains(t, csp, "script-src 'self'", path)
		assert.Contains(t, csp, "style-src 'self'", path)
		assert.Contains(t, csp, "default-src 'none'", path)
		assert.NotContains(t, csp, "unsafe", path)
		assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
		assert.Equal(t, "no-referrer", w.Header().Get("Referrer-Policy"))
		body := w.Body.String()
		assert.NotContains(t, body, "<script>", path)
		assert.NotContains(t, body, " style=", path)
		assert.NotRegexp(t, ` on[a-z]+=`, body, path)
	}
	assert.Equal(t, http.StatusNotFound, fetch(t, h, http.MethodGet, "/nope", nil).Code)
	assert.Equal(t, http.StatusNotFound, fetch(t, h, http.MethodGet, "/c/nope", nil).Code)
	assert.Equal(t, http.StatusNotFound, fetch(t, h, http.MethodGet, "/call/nope", nil).Code)
	assert.Equal(t, http.StatusOK, fetch(t, h, http.MethodHead, "/", nil).Code)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		w := fetch(t, h, m, "/", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, m)
		assert.Equal(t, "GET, HEAD", w.Header().Get("Allow"))
	}
	assert.Equal(t, http.StatusBadRequest, fetch(t, h, http.MethodGet, "/?cursor=zzz", nil).Code)
	assert.Equal(t, http.StatusBadRequest, fetch(t, h, http.MethodGet, "/?from=yesterday", nil).Code)
	assert.Equal(t, http.StatusBadRequest, fetch(t, h, http.MethodGet, "/?outcome=maybe", nil).Code)
	assert.Equal(t, http.StatusBadRequest, fetch(t, h, http.MethodGet, "/c/a?page=x", nil).Code)

	css := fetch(t, h, http.MethodGet, "/assets/view.css", nil)
	assert.Equal(t, http.StatusOK, css.Code)
	assert.Contains(t, css.Header().Get("Content-Type"), "text/css")
	js := fetch(t, h, http.MethodGet, "/assets/view.js", nil)
	assert.Contains(t, js.Header().Get("Content-Type"), "javascript")
}

// With AllowedHosts, another Host is refused: a site that rebinds its name
// to 127.0.0.1 gets nothing.
func TestHandlerAllowedHosts(t *testing.T) {
	h := view.NewHandler(view.FromRecords(nil), view.Options{AllowedHosts: []string{"127.0.0.1", "localhost"}})
	for host, code := range map[string]int{
		"127.0.0.1:8080": http.StatusOK, "localhost:8080": http.StatusOK, "LOCALHOST": http.StatusOK,
		"evil.example:8080": http.StatusForbidden, "127.0.0.1.evil.example": http.StatusForbidden,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		assert.Equal(t, code, w.Code, host)
	}
}

// A live page's refresh gets the page's content alone.
func TestHandlerLiveFragment(t *testing.T) {
	h := view.NewHandler(view.FromRecords([]record.Record{rec("a", 0, "", true)}), view.Options{})
	whole := fetch(t, h, http.MethodGet, "/", nil).Body.String()
	part := fetch(t, h, http.MethodGet, "/", http.Header{"X-Live": {"1"}}).Body.String()
	assert.Contains(t, whole, "<html")
	assert.NotContains(t, part, "<html")
	assert.NotContains(t, part, "<form", "the filters stay as they are, outside what is refreshed")
	assert.Contains(t, part, `data-key="a"`)
}

// Mounted under a prefix, its links and assets carry the prefix.
func TestHandlerPrefix(t *testing.T) {
	h := view.NewHandler(view.FromRecords([]record.Record{rec("a", 0, "", true)}), view.Options{Prefix: "/history"})
	mux := http.NewServeMux()
	mux.Handle("/history/", http.StripPrefix("/history", h))
	body := fetch(t, mux, http.MethodGet, "/history/", nil).Body.String()
	assert.Contains(t, body, `href="/history/assets/view.css"`)
	assert.Contains(t, body, `href="/history/c/a"`)
	assert.Contains(t, body, `data-base="/history/"`)
	assert.Equal(t, http.StatusOK, fetch(t, mux, http.MethodGet, "/history/c/a", nil).Code)
}

// The event stream tells a page that records arrived.
func TestHandlerEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	writeFile(t, path, lines(rec("a", 0, "", true)))
	src := open(t, path)
	h := view.NewHandler(src, view.Options{Heartbeat: 10 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()

	resp, err := http.Get(srv.URL + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	got := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	appendFile(t, path, lines(rec("b", 1, "", true)))
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-got:
			if strings.HasPrefix(l, "data: ") {
				assert.JSONEq(t, `{"records":1,"traces":["b"],"more":false,"reset":false}`, strings.TrimPrefix(l, "data: "))
				h.Close() // ends the stream
				for range got {
				}
				return
			}
		case <-deadline:
			t.Fatal("no event")
		}
	}
}

// A call page shows the fields it has no section for, such as those of a
// newer writer, and never fails on them.
func TestHandlerUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	line := strings.TrimSuffix(lines(rec("a", 0, "", true)), "}\n") +
		`,"server_address":"api.openai.com","tool_calls":[{"id":"call_9","name":"lookup","arguments":"{\"q\":1}"}],"reasoning":"Think first.","shiny_new":{"x":[1,2]}}` + "\n"
	writeFile(t, path, line)
	h := view.NewHandler(open(t, path), view.Options{})
	w := fetch(t, h, http.MethodGet, "/call/a-call-000", nil)
	require.Equal(t, http.StatusOK, w.Code)
	body := w.Body.String()
	assert.Contains(t, body, "<dt>server</dt><dd><code>api.openai.com</code></dd>")
	assert.Contains(t, body, "shiny_new", "a field this version does not know")
	assert.Contains(t, body, "lookup", "the tool call of the answer")
	assert.Contains(t, body, "Think first.", "the reasoning, folded")
	tr := fetch(t, h, http.MethodGet, "/c/a", nil).Body.String()
	assert.Contains(t, tr, "Think first.")
	assert.Contains(t, tr, "call_9")
}

// The timeline draws a nested call under its parent, on one time axis.
func TestHandlerTree(t *testing.T) {
	parent := rec("t", 0, "", true)
	parent.DurationMS = 4000
	child := rec("t", 0, "", true)
	child.CallID, child.ParentCallID, child.Depth = "child", parent.CallID, record.Int(1)
	child.Timestamp = record.FormatTime(time.Date(2026, 3, 1, 10, 0, 1, 0, time.UTC))
	child.DurationMS = 1000
	failed := rec("t", 0, "", false)
	failed.CallID, failed.Timestamp = "after", record.FormatTime(time.Date(2026, 3, 1, 10, 0, 5, 0, time.UTC))
	h := view.NewHandler(view.FromRecords([]record.Record{child, parent, failed}), view.Options{})
	body := fetch(t, h, http.MethodGet, "/c/t/tree", nil).Body.String()
	iParent, iChild, iAfter := strings.Index(body, `data-key="`+parent.CallID), strings.Index(body, `data-key="child"`), strings.Index(body, `data-key="after"`)
	require.True(t, iParent > 0 && iChild > iParent && iAfter > iChild, "parent, its child, then the next call")
	assert.Contains(t, body[iChild:iAfter], `class="lvl-1"`)
	// The axis spans 10:00:00 to 10:00:05.1: the child starts at 1 s of it
	// and lasts 1 s.
	assert.Contains(t, body[iChild:iAfter], `x="196.08" y="1" width="196.08"`)
	assert.Contains(t, body[iAfter:], `class="bar err"`)
}

// An error page is HTML, says what went wrong, and is not cached.
func TestHandlerErrorPage(t *testing.T) {
	h := view.NewHandler(view.FromRecords(nil), view.Options{})
	w := fetch(t, h, http.MethodGet, "/?from=soon", nil)
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Equal(t, "text/html; charset=utf-8", w.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Contains(t, w.Body.String(), "from &#34;soon&#34; is not a time")
}

// The overview's unpriced share is of the tokens: those of calls with
// usage and no cost. A failed call with no usage is not unpriced.
func TestHandlerUnpricedShare(t *testing.T) {
	priced := rec("a", 0, "", true)
	unknown := rec("a", 1, "", true)
	unknown.Cost, unknown.Usage = nil, &record.Usage{InputTokens: 30, OutputTokens: 15, TotalTokens: 45}
	failed := rec("a", 2, "", false)
	h := view.NewHandler(view.FromRecords([]record.Record{priced, unknown, failed}), view.Options{})
	body := fetch(t, h, http.MethodGet, "/overview", nil).Body.String()
	assert.Contains(t, body, `<span class="value" id="fig-unpriced">75%</span>`, "45 of 60 tokens")
	assert.Contains(t, body, "1 call with no price, 45 tokens not in the spend")
}

// A table of spend by user draws its bars to the largest user listed:
// the row of the others, which sums the many users past the table, has
// no bar, so that it does not shrink the listed ones to slivers.
func TestHandlerSpendBarsOfTheListed(t *testing.T) {
	var recs []record.Record
	for u := range 40 {
		r := rec(fmt.Sprint("t", u), u, fmt.Sprint("user-", u), true)
		r.Cost.USD = 0.001 * float64(u+1)
		recs = append(recs, r)
	}
	h := view.NewHandler(view.FromRecords(recs), view.Options{})
	body := fetch(t, h, http.MethodGet, "/overview", nil).Body.String()
	_, users, ok := strings.Cut(body, `id="spend-user"`)
	require.True(t, ok)
	users, _, _ = strings.Cut(users, "</table>")
	assert.Contains(t, users, "(29 others)")
	assert.Contains(t, users, `width="100.00"`, "the top user's bar is whole")
	assert.Equal(t, 11, strings.Count(users, `<rect class="bar"`), "a bar for each listed user, none for the others")
}

// A model the price table does not know shows as unpriced, not as free,
// even when some of its calls used no tokens (they failed): in the
// overview's spend by model and in the list of conversations.
func TestHandlerUnpricedIsNotFree(t *testing.T) {
	unknown := rec("a", 0, "", true)
	unknown.Cost = nil
	failed := rec("a", 1, "", false)
	h := view.NewHandler(view.FromRecords([]record.Record{unknown, failed}), view.Options{})
	for _, path := range []string{"/overview", "/"} {
		body := fetch(t, h, http.MethodGet, path, nil).Body.String()
		assert.Contains(t, body, `<span class="muted">unpriced</span>`, path)
		assert.NotContains(t, body, "+1 unpriced", path)
	}
}
