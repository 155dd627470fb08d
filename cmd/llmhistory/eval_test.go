package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/store"
)

// demoStore runs the offline demo in a fresh directory and returns its
// history file and store URL.
func demoStore(t *testing.T) (history, url string) {
	t.Helper()
	dir := t.TempDir()
	history = filepath.Join(dir, "history.jsonl")
	code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", history, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	return history, "sqlite:" + filepath.Join(dir, "history.db")
}

var evalSummary = regexp.MustCompile(`llmhistory eval: (\d+) calls? judged, (\d+) scores? written, (\d+) already there`)

func TestEvalTheDemoStoreTwiceWritesOnce(t *testing.T) {
	_, url := demoStore(t)
	args := []string{"eval", url, "-json-valid", "-answer", "-max-latency", "5s", "-contains", "polite=please"}
	code, stdout, stderr := runCmd(t, "", args...)
	require.Equal(t, exitOK, code, stderr)
	m := evalSummary.FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	assert.Equal(t, "13", m[1], "the demo's 13 calls")
	assert.NotEqual(t, "0", m[2])
	assert.Equal(t, "0", m[3])
	written := m[2]

	code, stdout, stderr = runCmd(t, "", args...)
	require.Equal(t, exitOK, code, stderr)
	m = evalSummary.FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	assert.Equal(t, "0", m[2], "run twice, written once")
	assert.Equal(t, written, m[3])

	s, err := store.OpenWith(context.Background(), url, store.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	all, err := s.Scores(context.Background(), store.ScoreQuery{})
	require.NoError(t, err)
	assert.Equal(t, written, itoa(len(all)))
	answers, err := s.Scores(context.Background(), store.ScoreQuery{Name: "answer"})
	require.NoError(t, err)
	require.NotEmpty(t, answers)
	for _, sc := range answers {
		assert.Contains(t, []string{"answered", "empty", "refusal"}, sc.Value.Label())
		assert.Equal(t, store.SourceCode, sc.Source)
		assert.Equal(t, "answer@1", sc.Author)
	}

	// The scores select conversations in query.
	code, stdout, stderr = runCmd(t, "", "query", url, "-traces", "-score", "answer=answered")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "maria")
	code, _, stderr = runCmd(t, "", "query", url, "-score", "answer<refusal")
	require.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-score")
}

func TestEvalAFileAndImportItsScores(t *testing.T) {
	history, _ := demoStore(t)
	code, stdout, stderr := runCmd(t, "", "eval", history, "-json-valid", "-regex", "paris=(?i)paris")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "13 calls judged")
	scores := store.ScoresPath(history)
	assert.Contains(t, stderr, scores)
	f, err := os.Open(scores)
	require.NoError(t, err)
	got, err := store.ReadScores(f)
	f.Close()
	require.NoError(t, err)
	require.NotEmpty(t, got)

	code, stdout, _ = runCmd(t, "", "eval", history, "-json-valid", "-regex", "paris=(?i)paris")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, " 0 scores written")

	url := "sqlite:" + filepath.Join(t.TempDir(), "imported.db")
	code, _, stderr = runCmd(t, "", "import", history, scores, "--into", url)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "scores")
	s, err := store.OpenWith(context.Background(), url, store.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	back, err := s.Scores(context.Background(), store.ScoreQuery{})
	require.NoError(t, err)
	assert.Len(t, back, len(store.LatestScores(got)))
}

func TestEvalRulesAndBadFlags(t *testing.T) {
	_, url := demoStore(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	require.NoError(t, os.WriteFile(rules, []byte(`{"filter": {"tags": ["support"]}, "evaluators": [{"type": "answer"}]}`), 0o600))
	code, stdout, stderr := runCmd(t, "", "eval", url, "-rules", rules)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "3 calls judged", "the support conversations' calls")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", url}, "no evaluator"},
		{[]string{"eval"}, "want one store URL"},
		{[]string{"eval", url, "-regex", "x"}, "NAME=PATTERN"},
		{[]string{"eval", url, "-regex", "x=("}, "-regex"},
		{[]string{"eval", url, "-schema", "x=/nonexistent.json"}, "-schema"},
		{[]string{"eval", url, "-json-valid", "-score", "x<"}, "-score"},
		{[]string{"eval", "h.jsonl", "-json-valid", "-model", "m"}, "import h.jsonl first"},
		{[]string{"eval", url, "-rules", filepath.Join(dir, "none.json")}, "-rules"},
	} {
		code, _, stderr := runCmd(t, "", tc.args...)
		assert.Equal(t, exitUsage, code, strings.Join(tc.args, " "))
		assert.Contains(t, stderr, tc.want, strings.Join(tc.args, " "))
	}
	code, stdout, _ = runCmd(t, "", "eval", "-h")
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(stdout, "usage: llmhistory eval"), stdout)
}

func itoa(n int) string { return strings.TrimSpace(group(int64(n))) }

func TestReportHasTheScores(t *testing.T) {
	history, url := demoStore(t)
	code, _, stderr := runCmd(t, "", "eval", url, "-answer")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr := runCmd(t, "", "report", url, "-format", "markdown")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "## Scores")
	assert.Regexp(t, `\| answer \| tag \| support \| \d+ \| answered \d+`, stdout)

	code, _, stderr = runCmd(t, "", "eval", history, "-answer")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr = runCmd(t, "", "report", history, "-format", "markdown")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `\| answer \| model \| [^|]+ \| \d+ \| answered \d+`, stdout, "from the scores file beside the history")
}

// view -annotate prints an address with the launch's token; the browser
// that opens it may annotate, and the score lands in the store, or in the
// scores file beside a history.
func TestViewAnnotate(t *testing.T) {
	history, storeURL := demoStore(t)
	for _, target := range []string{storeURL, history} {
		t.Run(target[:6], func(t *testing.T) {
			page, _, stop := startView(t, target, "-annotate", "-author", "ann", "-poll", "20ms")
			require.Regexp(t, `^http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{64}$`, page)
			base, _, _ := strings.Cut(page, "?")
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			resp, err := c.Get(page)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, base, resp.Request.URL.String(), "the token leaves the address")
			key := regexp.MustCompile(`data-key="([^"]+)"`)
			if !key.Match(body) {
				_, body = reloadUntil(t, c, base, key)
			}
			trace := key.FindSubmatch(body)
			require.NotNil(t, trace, "a conversation on the list page: %s", body)
			resp, err = c.Get(base + "c/" + string(trace[1]))
			require.NoError(t, err)
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			tok := regexp.MustCompile(`name="form_token" value="([0-9a-f]+)"`).FindSubmatch(body)
			require.NotNil(t, tok, "the form, for the browser that opened the address")
			form := url.Values{"form_token": {string(tok[1])}, "trace_id": {string(trace[1])}, "name": {"thumbs"}, "thumb": {"up"}}
			req, _ := http.NewRequest(http.MethodPost, base+"annotate", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", strings.TrimSuffix(base, "/"))
			resp, err = c.Do(req)
			require.NoError(t, err)
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			assert.Contains(t, string(body), "✓ true")
			require.Equal(t, exitOK, stop())

			var got []store.Score
			if target == storeURL {
				s, err := store.OpenWith(context.Background(), storeURL, store.Options{ReadOnly: true})
				require.NoError(t, err)
				got, err = s.Scores(context.Background(), store.ScoreQuery{Name: "thumbs"})
				require.NoError(t, err)
				s.Close()
			} else {
				f, err := os.Open(store.ScoresPath(history))
				require.NoError(t, err)
				got, err = store.ReadScores(f)
				f.Close()
				require.NoError(t, err)
			}
			require.Len(t, got, 1)
			assert.Equal(t, string(trace[1]), got[0].TraceID)
			assert.Equal(t, "ann", got[0].Author)
			assert.Equal(t, store.SourceHuman, got[0].Source)
		})
	}
}

// viewerForm opens the address view printed with a cookie jar (taking its
// token) and the page of its newest conversation; it returns the base
// address, the client, the conversation's trace and the form token.
func viewerForm(t *testing.T, page string) (base string, c *http.Client, trace, formTok []byte, body []byte) {
	t.Helper()
	base, _, _ = strings.Cut(page, "?")
	jar, _ := cookiejar.New(nil)
	c = &http.Client{Jar: jar}
	resp, err := c.Get(page)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, base, resp.Request.URL.String(), "the token leaves the address")
	m := regexp.MustCompile(`data-key="([^"]+)"`).FindSubmatch(body)
	require.NotNil(t, m)
	resp, err = c.Get(base + "c/" + string(m[1]))
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	tok := regexp.MustCompile(`name="form_token" value="([0-9a-f]+)"`).FindSubmatch(body)
	require.NotNil(t, tok, "the form, for the browser that opened the address")
	return base, c, m[1], tok[1], body
}

// TestViewAddsToADataset: view -dataset FILE keeps a conversation of the
// demo's store, from its page, as an item of a dataset file that
// llmhistory dataset reads; a second time adds nothing.
func TestViewAddsToADataset(t *testing.T) {
	_, storeURL := demoStore(t)
	ds := filepath.Join(t.TempDir(), "golden.jsonl")
	page, _, stop := startView(t, storeURL, "-dataset", ds, "-poll", "20ms")
	base, c, trace, tok, body := viewerForm(t, page)
	require.Contains(t, string(body), "to golden.jsonl")
	add := func() string {
		form := url.Values{"form_token": {string(tok)}, "trace_id": {string(trace)}}
		req, _ := http.NewRequest(http.MethodPost, base+"dataset", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", strings.TrimSuffix(base, "/"))
		resp, err := c.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		return string(body)
	}
	assert.Contains(t, add(), "Added to golden.jsonl: 1 new item(s).")
	assert.Contains(t, add(), "Already in golden.jsonl.")
	require.Equal(t, exitOK, stop())

	code, stdout, stderr := runCmd(t, "", "dataset", "show", ds)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `dataset "golden": 1 item`)
}
