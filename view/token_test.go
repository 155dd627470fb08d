package view_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/view"
)

const testToken = "0123456789abcdef-the-viewer's-token"

// get sends a GET through c and returns the status and the body.
func get(t *testing.T, c *http.Client, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b)
}

// With a token, every route answers 401 without it; a browser that brings
// it in the address is given a cookie and sent to the address without
// it, and from then on every route answers; a script can send it as a
// bearer token. A wrong token, in any of the three places, is refused.
func TestHandlerToken(t *testing.T) {
	src := view.FromRecords([]record.Record{rec("a", 0, "ana", true)})
	h := view.NewHandler(src, view.Options{Token: view.TokenOf(testToken), Heartbeat: 50 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	routes := []string{"/", "/c/a", "/c/a/tree", "/call/a-call-000", "/overview", "/assets/view.js", "/nope"}

	stranger := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range append(routes, "/events") {
		code, body := get(t, stranger, srv.URL+p, nil)
		assert.Equal(t, http.StatusUnauthorized, code, p)
		assert.NotContains(t, body, "ana", p)
		code, _ = get(t, stranger, srv.URL+p+"?token=wrong-"+testToken, nil)
		assert.Equal(t, http.StatusUnauthorized, code, "%s with a wrong token", p)
		code, _ = get(t, stranger, srv.URL+p, http.Header{"Authorization": {"Bearer nope"}})
		assert.Equal(t, http.StatusUnauthorized, code, "%s with a wrong bearer token", p)
		code, _ = get(t, stranger, srv.URL+p, http.Header{"Cookie": {"llmhistory_token_00000000=" + testToken}})
		assert.Equal(t, http.StatusUnauthorized, code, "%s with another viewer's cookie name", p)
	}
	code, _ := get(t, stranger, srv.URL+"/", http.Header{"Authorization": {"Bearer " + testToken}})
	assert.Equal(t, http.StatusOK, code, "a script's bearer token")

	// The address brings the token once.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/c/a?token="+testToken+"&x=1", nil)
	resp, err := stranger.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/c/a?x=1", resp.Header.Get("Location"), "on to the address without the token")
	require.Len(t, resp.Cookies(), 1)
	c := resp.Cookies()[0]
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, "/", c.Path)
	assert.NotContains(t, c.Name, testToken)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	code, body := get(t, browser, srv.URL+"/?token="+testToken, nil)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "ana")
	for _, p := range routes[:len(routes)-1] {
		code, _ := get(t, browser, srv.URL+p, nil)
		assert.Equal(t, http.StatusOK, code, "%s, with the cookie", p)
	}
	resp, err = browser.Get(srv.URL + "/events")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.NotEmpty(t, line)
	resp.Body.Close()
}

// Mounted under a prefix, the cookie is the prefix's and the browser is
// sent on under it.
func TestHandlerTokenUnderAPrefix(t *testing.T) {
	src := view.FromRecords([]record.Record{rec("a", 0, "ana", true)})
	h := view.NewHandler(src, view.Options{Token: view.TokenOf(testToken), Prefix: "/history/"})
	mux := http.NewServeMux()
	mux.Handle("/history/", http.StripPrefix("/history", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL + "/history/overview?token=" + testToken)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "/history/overview", resp.Header.Get("Location"))
	require.Len(t, resp.Cookies(), 1)
	assert.Equal(t, "/history/", resp.Cookies()[0].Path)
}

// In a browser: without the token no page and no event stream; with it,
// taken from the address once, every page, its links, and the live
// page's event stream.
func TestBrowserToken(t *testing.T) {
	b := newBrowser(t)
	path := filepath.Join(t.TempDir(), "history.jsonl")
	recordHistory(t, path)
	src, err := view.OpenJSONL([]string{path}, view.JSONLOptions{Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, src.Wait(context.Background()))
	defer src.Close()
	h := view.NewHandler(src, view.Options{Token: view.TokenOf(testToken)})
	var events atomic.Int32
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w, first: func(code int) {
			if r.URL.Path == "/events" && code == http.StatusOK {
				events.Add(1) // as soon as the stream answers: it stays open
			}
		}}
		h.ServeHTTP(rw, r)
	})
	srv := httptest.NewServer(counted)
	defer srv.Close()
	defer h.Close()

	// Without the token: 401 on every page, and the page shows none of
	// the history.
	for _, p := range []string{"/", "/c/trip", "/overview", "/events"} {
		code := navigate(t, b, srv.URL+p)
		assert.Equal(t, int64(http.StatusUnauthorized), code, p)
		text := eval[string](t, b, `document.body.innerText`)
		assert.Contains(t, text, "asks for its token", p)
		assert.NotContains(t, text, "Lisbon", p)
	}
	// Not even from a script on a page of the viewer's origin: fetch and
	// EventSource carry no token either.
	assert.Equal(t, 401, fetchStatus(t, b, "/events"))

	// With it: the address is cleaned, the pages answer, links work, and
	// the live page's event stream connects.
	code := navigate(t, b, srv.URL+"/?token="+testToken)
	assert.Equal(t, int64(http.StatusOK), code)
	b.loaded(t, "/")
	assert.NotContains(t, eval[string](t, b, `location.href`), testToken, "the token left the address")
	assert.NotContains(t, eval[string](t, b, `document.cookie`), testToken, "no script reads the cookie")
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#conversations tbody tr[data-key="trip"]`)))
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#live.on`)))
	require.Eventually(t, func() bool { return events.Load() > 0 }, 10*time.Second, 20*time.Millisecond, "the live page's event stream was let in")
	b.do(t, chromedp.Click(chromedp.CSS(`tr[data-key="trip"] a.open`)))
	b.loaded(t, "/c/trip")
	assert.Contains(t, eval[string](t, b, `document.querySelector('main').innerText`), "Lisbon")
	b.do(t, chromedp.Navigate(srv.URL+"/overview"))
	b.loaded(t, "/overview")
	assert.Equal(t, 200, fetchStatus(t, b, "/c/trip"))
	_, problems := b.reported()
	for _, p := range problems {
		assert.Contains(t, p, "401", "the only errors the pages logged are the refusals")
	}
}

// fetchStatus is the status a script of the page gets fetching path.
func fetchStatus(t *testing.T, b *browser, path string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch(`+strconvQuote(path)+`).then(r => r.status)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	return v
}

// navigate loads url in the tab and returns the status of its response.
func navigate(t *testing.T, b *browser, url string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	require.NoError(t, err, url)
	return resp.Status
}

// statusWriter tells first the status of the response it writes, when
// it is known.
type statusWriter struct {
	http.ResponseWriter
	first func(code int)
	told  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.told {
		w.told = true
		w.first(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.told {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// One token guards reading and annotating: given as Options.Token, an
// annotation without a token of its own takes it; brought once in the
// address, it lets the browser read and shows it the annotation form.
func TestHandlerTokenGuardsReadingAndAnnotating(t *testing.T) {
	src := view.FromRecords(scoredRecords())
	sf := view.OpenScoresFile([]string{filepath.Join(t.TempDir(), "h.scores.jsonl")}, src)
	defer sf.Close()
	tok := view.TokenOf(testToken)
	srv := httptest.NewServer(view.NewHandler(src, view.Options{Token: tok, Scores: sf, Annotate: &view.Annotation{Sink: sf}}))
	defer srv.Close()

	code, _ := get(t, http.DefaultClient, srv.URL+"/c/conv-0", nil)
	assert.Equal(t, http.StatusUnauthorized, code)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	code, page := get(t, browser, srv.URL+"/c/conv-0?token="+testToken, nil)
	assert.Equal(t, http.StatusOK, code)
	m := formToken.FindStringSubmatch(page)
	require.NotNil(t, m, "the form, for the browser holding the token")
	assert.Equal(t, tok.FormToken(), m[1])
	assert.NotContains(t, page, testToken)
}
