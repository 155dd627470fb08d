package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
	"github.com/llmhistory/llmhistory/view"
)

// scoredRecords are three conversations of two calls.
func scoredRecords() []record.Record {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var recs []record.Record
	for i := range 6 {
		answer := record.TextMessage(record.RoleAssistant, fmt.Sprintf("answer %d", i))
		recs = append(recs, record.Record{
			CallID: fmt.Sprintf("call-%d", i), TraceID: fmt.Sprintf("conv-%d", i/2),
			Timestamp: record.FormatTime(start.Add(time.Duration(i) * time.Minute)), Speaker: "user",
			MethodName: "openai.chat.completions.create",
			Args:       json.RawMessage(fmt.Sprintf(`[{"role":"user","content":"question %d"}]`, i)),
			Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini"}`), Outcome: record.Success("chat.completion"),
			Model: []string{"gpt-4o-mini", "gpt-4o"}[i%2], Output: &answer,
			HistoryQueryPatterns: []string{}, Version: 1,
		})
	}
	return recs
}

// annotating serves the viewer over recs with scores in a scores file,
// annotation on, and returns the server, the token and the file.
func annotating(t *testing.T) (*httptest.Server, *view.Token, *view.ScoresFile, string) {
	src := view.FromRecords(scoredRecords())
	path := filepath.Join(t.TempDir(), "h.scores.jsonl")
	sf := view.OpenScoresFile([]string{path}, src)
	t.Cleanup(func() { sf.Close() })
	tok := view.NewToken()
	srv := httptest.NewServer(view.NewHandler(src, view.Options{Scores: sf, Annotate: &view.Annotation{Sink: sf, Token: tok, Author: "ann"}}))
	t.Cleanup(srv.Close)
	return srv, tok, sf, path
}

var formToken = regexp.MustCompile(`name="form_token" value="([0-9a-f]+)"`)

func TestAnnotationNeedsTheTokenTheOriginAndTheFormToken(t *testing.T) {
	srv, tok, sf, _ := annotating(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) string {
		resp, err := c.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		return string(b)
	}
	// Without the token: scores, but no form.
	page := get("/c/conv-0")
	assert.Contains(t, page, "No score yet.")
	assert.NotContains(t, page, `name="form_token"`)
	get("/c/conv-0?token=" + strings.Repeat("0", 64))
	assert.NotContains(t, get("/c/conv-0"), `name="form_token"`, "a wrong token admits nothing")

	// With it: admitted once, the address cleaned, the form shown.
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + "/c/conv-0?token=" + tok.String() + "&score=helpfulness")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/c/conv-0?score=helpfulness", resp.Header.Get("Location"))
	setCookie := resp.Header.Get("Set-Cookie")
	assert.Contains(t, setCookie, "HttpOnly")
	assert.Contains(t, setCookie, "SameSite=Strict")
	get("/c/conv-0?token=" + tok.String())
	page = get("/c/conv-0")
	m := formToken.FindStringSubmatch(page)
	require.NotNil(t, m, "the form, for a browser holding the token")
	assert.Equal(t, tok.FormToken(), m[1])
	assert.NotContains(t, page, tok.String(), "the token itself is never in a page")

	post := func(form url.Values, hdr map[string]string, withCookie bool) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/annotate", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if withCookie {
			client.Jar = jar
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	good := url.Values{"form_token": {m[1]}, "trace_id": {"conv-0"}, "name": {"thumbs"}, "thumb": {"up"}, "comment": {"clear"}}
	same := map[string]string{"Origin": srv.URL}
	assert.Equal(t, http.StatusForbidden, post(good, nil, true), "no origin")
	assert.Equal(t, http.StatusForbidden, post(good, map[string]string{"Origin": "http://evil.example"}, true), "another origin")
	assert.Equal(t, http.StatusForbidden, post(good, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": srv.URL}, true), "cross-site")
	assert.Equal(t, http.StatusForbidden, post(good, same, false), "no token cookie")
	bad := url.Values{"form_token": {strings.Repeat("a", 64)}, "trace_id": {"conv-0"}, "name": {"thumbs"}, "thumb": {"up"}}
	assert.Equal(t, http.StatusForbidden, post(bad, same, true), "a wrong form token")
	got, err := sf.Scores(context.Background(), store.ScoreQuery{})
	require.NoError(t, err)
	assert.Empty(t, got, "nothing kept by a refused request")

	assert.Equal(t, http.StatusSeeOther, post(good, same, true))
	assert.Equal(t, http.StatusSeeOther, post(url.Values{"form_token": {m[1]}, "call_id": {"call-1"}, "name": {"helpfulness"}, "number": {"0.25"}}, map[string]string{"Sec-Fetch-Site": "same-origin"}, true))
	assert.Equal(t, http.StatusBadRequest, post(url.Values{"form_token": {m[1]}, "call_id": {"call-1"}, "name": {"helpfulness"}, "number": {"lots"}}, same, true))
	assert.Equal(t, http.StatusBadRequest, post(url.Values{"form_token": {m[1]}, "call_id": {"call-1"}, "name": {"x"}}, same, true), "no value")
	got, err = sf.Scores(context.Background(), store.ScoreQuery{})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "conv-0", got[0].TraceID)
	assert.Equal(t, "", got[0].CallID)
	assert.Equal(t, "true", got[0].Value.String())
	assert.Equal(t, "clear", got[0].Comment)
	assert.Equal(t, store.SourceHuman, got[0].Source)
	assert.Equal(t, "ann", got[0].Author)
	assert.Equal(t, "call-1", got[1].CallID)
	assert.Equal(t, "0.25", got[1].Value.String())

	// The pages show them.
	assert.Contains(t, get("/c/conv-0"), "✓ true")
	assert.Contains(t, get("/call/call-1"), "0.25")
	assert.Regexp(t, `thumbs ✓ 1 ✗ 0`, get("/"))
	overview := get("/overview")
	assert.Contains(t, overview, `id="scores-overview"`, "a scores file aggregates too")
	assert.Regexp(t, `(?s)<h3>helpfulness</h3>.*2026-11-23.*mean 0.25.*gpt-4o</span>`, overview, "call-1 is gpt-4o's, of the 23rd")
}

func TestReadOnlyWithoutAnnotate(t *testing.T) {
	src := view.FromRecords(scoredRecords())
	srv := httptest.NewServer(view.NewHandler(src, view.Options{}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/annotate", "application/x-www-form-urlencoded", strings.NewReader("name=x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = http.Get(srv.URL + "/?token=abc")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(b), "Scores</th>", "no scores column without scores")
}

func TestAnnotationQueue(t *testing.T) {
	srv, _, sf, _ := annotating(t)
	next := func(query string) string {
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(srv.URL + "/queue?" + query)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusSeeOther {
			return resp.Header.Get("Location")
		}
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	assert.Equal(t, "/c/conv-2?queue=1&score=topic", next("score=topic"), "the newest first")
	require.NoError(t, sf.AddScore(context.Background(), store.Score{TraceID: "conv-2", Name: "topic", Value: store.Category("billing"), Source: store.SourceHuman, Author: "ann"}))
	assert.Equal(t, "/c/conv-1?queue=1&score=topic", next("score=topic"))
	assert.Equal(t, "/c/conv-1?model=gpt-4o&queue=1&score=topic", next("score=topic&model=gpt-4o"), "with the list's filters")
	for _, id := range []string{"conv-1", "conv-0"} {
		require.NoError(t, sf.AddScore(context.Background(), store.Score{TraceID: id, Name: "topic", Value: store.Category("other"), Source: store.SourceHuman, Author: "ann"}))
	}
	assert.Contains(t, next("score=topic"), "left without a topic score")
	assert.Contains(t, next(""), "needs the name")
}

// TestBrowserAnnotatesAConversation opens the viewer over a SQLite store
// in headless Chromium, as llmhistory view --annotate serves it, gives a
// conversation a thumbs-up and a call a number, and finds both in the
// store.
func TestBrowserAnnotatesAConversation(t *testing.T) {
	b := newBrowser(t)
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "h.db"))
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Write(ctx, scoredRecords())
	require.NoError(t, err)
	tok := view.NewToken()
	h := view.NewHandler(view.FromStore(st, 0), view.Options{Scores: st, Annotate: &view.Annotation{Sink: st, Token: tok, Author: "ann"}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()

	b.do(t,
		chromedp.Navigate(srv.URL+"/?token="+tok.String()),
		chromedp.WaitVisible(chromedp.CSS(`#conversations tbody tr`)),
	)
	assert.Equal(t, srv.URL+"/", eval[string](t, b, "location.href"), "the token leaves the address")
	b.do(t,
		chromedp.Navigate(srv.URL+"/c/conv-1"),
		chromedp.WaitVisible(chromedp.CSS(`form.annotate`)),
		chromedp.SetValue(chromedp.CSS(`form.annotate textarea[name=comment]`), "Answered the question."),
		chromedp.Click(chromedp.CSS(`form.annotate button[value=up]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.scoretable td.value`)),
	)
	got, err := st.Scores(ctx, store.ScoreQuery{TraceID: "conv-1"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "thumbs", got[0].Name)
	assert.Equal(t, "true", got[0].Value.String())
	assert.Equal(t, "Answered the question.", got[0].Comment)
	assert.Equal(t, "ann", got[0].Author)
	assert.Contains(t, eval[string](t, b, `document.querySelector("#scores").innerText`), "✓ true")

	b.do(t,
		chromedp.Navigate(srv.URL+"/call/call-3"),
		chromedp.WaitVisible(chromedp.CSS(`form.annotate`)),
		chromedp.SetValue(chromedp.CSS(`form.annotate input[name=name]`), "helpfulness"),
		chromedp.SetValue(chromedp.CSS(`form.annotate input[name=number]`), "0.4"),
		chromedp.Click(chromedp.CSS(`form.annotate button.save`)),
		chromedp.WaitVisible(chromedp.CSS(`table.scoretable td.value`)),
	)
	got, err = st.Scores(ctx, store.ScoreQuery{CallIDs: []string{"call-3"}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "0.4", got[0].Value.String())

	// The list's column and the overview show them.
	b.do(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`td.scores .chip.score`)))
	assert.Contains(t, eval[string](t, b, `document.querySelector("#conversations").innerText`), "helpfulness 0.4")
	b.do(t, chromedp.Navigate(srv.URL+"/overview"), chromedp.WaitVisible(chromedp.CSS(`#scores-overview`)))
	text := eval[string](t, b, `document.querySelector("#scores-overview").innerText`)
	assert.Contains(t, text, "helpfulness")
	assert.Contains(t, text, "gpt-4o")

	if dir := os.Getenv("LLMHISTORY_SCREENSHOTS"); dir != "" {
		for _, size := range []struct{ w, h int64 }{{1280, 900}, {390, 844}} {
			for _, p := range []struct{ name, path, ready string }{
				{"annotate", "/c/conv-1", "form.annotate"},
				{"scores-list", "/", "td.scores"},
				{"scores-overview", "/overview#scores-overview", "#scores-overview"},
			} {
				b.do(t, chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)), chromedp.Sleep(200*time.Millisecond))
				png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("view-%s-%d.png", p.name, size.w)), png, 0o644))
			}
		}
	}
	dialogs, problems := b.reported()
	assert.Empty(t, dialogs)
	assert.Empty(t, problems, "no CSP violation, no exception")
}

// TestBrowserAddsToADataset: with a Dataset, a call's and a
// conversation's pages have a button that gives it the call's record, or
// the conversation's records in order, and the page says what came of it.
func TestBrowserAddsToADataset(t *testing.T) {
	b := newBrowser(t)
	src := view.FromRecords(scoredRecords())
	path := filepath.Join(t.TempDir(), "h.scores.jsonl")
	sf := view.OpenScoresFile([]string{path}, src)
	defer sf.Close()
	type added struct {
		calls        []string
		conversation bool
	}
	var got []added
	seen := map[string]bool{}
	tok := view.NewToken()
	h := view.NewHandler(src, view.Options{Scores: sf, Annotate: &view.Annotation{Sink: sf, Token: tok, DatasetName: "golden.jsonl",
		Dataset: func(_ context.Context, recs []record.Record, conversation bool) (int, error) {
			a := added{conversation: conversation}
			for _, r := range recs {
				a.calls = append(a.calls, r.CallID)
			}
			got = append(got, a)
			key := strings.Join(a.calls, ",")
			if seen[key] {
				return 0, nil
			}
			seen[key] = true
			return 1, nil
		}}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()

	b.do(t,
		chromedp.Navigate(srv.URL+"/c/conv-1?token="+tok.String()),
		chromedp.WaitVisible(chromedp.CSS(`#add-to-dataset`)),
	)
	assert.Contains(t, eval[string](t, b, `document.querySelector("#add-to-dataset").innerText`), "Add this conversation to golden.jsonl")
	b.do(t, chromedp.Click(chromedp.CSS(`#add-to-dataset`)), chromedp.WaitVisible(chromedp.CSS(`#dataset-added`)))
	assert.Equal(t, "Added to golden.jsonl: 1 new item(s).", eval[string](t, b, `document.querySelector("#dataset-added").innerText`))
	// Again from a fresh page, so that the message waited for is the new
	// page's, not the one the click navigates away from.
	b.do(t,
		chromedp.Navigate(srv.URL+"/c/conv-1?token="+tok.String()),
		chromedp.WaitVisible(chromedp.CSS(`#add-to-dataset`)),
		chromedp.Click(chromedp.CSS(`#add-to-dataset`)),
		chromedp.WaitVisible(chromedp.CSS(`#dataset-added`)),
	)
	assert.Equal(t, "Already in golden.jsonl.", eval[string](t, b, `document.querySelector("#dataset-added").innerText`))

	b.do(t,
		chromedp.Navigate(srv.URL+"/call/call-4"),
		chromedp.WaitVisible(chromedp.CSS(`#add-to-dataset`)),
		chromedp.Click(chromedp.CSS(`#add-to-dataset`)),
		chromedp.WaitVisible(chromedp.CSS(`#dataset-added`)),
	)
	assert.Equal(t, []added{{[]string{"call-2", "call-3"}, true}, {[]string{"call-2", "call-3"}, true}, {[]string{"call-4"}, false}}, got)

	// Without the form token (another site's page), nothing is added.
	resp, err := http.PostForm(srv.URL+"/dataset", url.Values{"call_id": {"call-5"}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Len(t, got, 3)
	dialogs, problems := b.reported()
	assert.Empty(t, dialogs)
	assert.Empty(t, problems, "no CSP violation, no exception")
}
