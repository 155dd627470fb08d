package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/store"
)

// startView runs llmhistory view with args until the test ends, and
// returns the URL it printed first, its standard error, and a func that
// stops it and returns its exit code.
func startView(t *testing.T, args ...string) (url string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	stderr = &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"view"}, args...), stdio{in: strings.NewReader(""), out: &out, err: stderr})
	}()
	stopped := false
	var code int
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("llmhistory view did not stop within 10 s of an interrupt")
			}
		}
		return code
	}
	t.Cleanup(func() { stop() })
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "\n") }, 10*time.Second, 5*time.Millisecond,
		"no URL printed; stderr: %s", stderr)
	first, _, _ := strings.Cut(out.String(), "\n")
	return first, stderr, stop
}

func get(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// reloadUntil gets url with c until its page matches want, for at most
// ten seconds, and returns the last page: a file is indexed while pages
// are served, so its first page may come before what it holds does (seen
// under CI's load), and a reader would load it again.
func reloadUntil(t *testing.T, c *http.Client, url string, want *regexp.Regexp) (int, []byte) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := c.Get(url)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		if want.Match(body) || time.Now().After(deadline) {
			return resp.StatusCode, body
		}
	}
}

// The first line is the URL, on loopback; the pages are served, follow
// the file, answer only to loopback's names, refuse to write, and an
// interrupt stops the server.
func TestViewServes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	appendFile(t, path, line(testRecord(1, true))+line(testRecord(2, false)))
	url, stderr, stop := startView(t, path, "-poll", "20ms")
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/$`, url)

	code, body := get(t, url, "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `data-key="t1"`)
	code, body = get(t, url+"overview", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Calls")

	// New records show up; a new conversation among them.
	r := testRecord(3, true)
	r.TraceID = "t2"
	appendFile(t, path, line(r))
	require.Eventually(t, func() bool { _, body := get(t, url, ""); return strings.Contains(body, `data-key="t2"`) },
		5*time.Second, 20*time.Millisecond)

	// DNS rebinding: another site's name is refused.
	code, _ = get(t, url, "evil.example:80")
	assert.Equal(t, http.StatusForbidden, code)
	code, _ = get(t, strings.Replace(url, "127.0.0.1", "localhost", 1), "")
	assert.Equal(t, http.StatusOK, code)

	// Read-only.
	resp, err := http.Post(url, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	assert.Equal(t, exitOK, stop())
	assert.Contains(t, stderr.String(), "read 2 records from "+path)
	assert.NotContains(t, stderr.String(), "warning")
}

// Flags may follow the files; --open opens the URL printed.
func TestViewFlagsAfterFilesAndOpen(t *testing.T) {
	opened := make(chan string, 2)
	was := openBrowser
	openBrowser = func(url string) error { opened <- url; return nil }
	t.Cleanup(func() { openBrowser = was })

	path := filepath.Join(t.TempDir(), "history.jsonl")
	appendFile(t, path, line(testRecord(1, true)))
	url, _, stop := startView(t, path, "--addr", "127.0.0.1:0", "--open")
	select {
	case got := <-opened:
		assert.Equal(t, url, got)
	case <-time.After(5 * time.Second):
		t.Fatal("no browser opened")
	}
	assert.Equal(t, exitOK, stop())
	assert.Empty(t, opened, "opened once")
}

// On an address that is not loopback, every request must carry a token:
// one made at launch and printed in the address, which a browser brings
// once and then keeps in a cookie; without it, 401. It answers to any
// name (it cannot know the machine's).
func TestViewNotLoopbackAsksForAToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	appendFile(t, path, line(testRecord(1, true)))
	url, stderr, stop := startView(t, "-addr", "0.0.0.0:0", path)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{64}$`, url)
	base, token, _ := strings.Cut(url, "?token=")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "which is not loopback") }, 5*time.Second, 5*time.Millisecond)
	port := base[len("http://127.0.0.1:") : len(base)-1]
	assert.Contains(t, stderr.String(), "listening on 0.0.0.0:"+port+", which is not loopback: every request must carry the token, the one in the address above")
	assert.Contains(t, stderr.String(), "docs/viewer.md")
	assert.NotContains(t, stderr.String(), token, "the token is printed once, in the address")

	for _, p := range []string{"", "overview", "events", "assets/view.css"} {
		code, body := get(t, base+p, "myhost.example:1234")
		assert.Equal(t, http.StatusUnauthorized, code, p)
		assert.NotContains(t, body, "t1", p)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, base, resp.Request.URL.String(), "sent on to the address without the token")
	assert.Contains(t, string(body), `data-key="t1"`)
	resp, err = browser.Get(base + "overview")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the cookie carries it on")
	assert.Equal(t, exitOK, stop())
}

// A token given (the flag, else the environment variable) is the one
// asked for, on loopback too, and is not printed.
func TestViewGivenToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	appendFile(t, path, line(testRecord(1, true)))
	const token = "a-token-given-by-its-user"
	for _, args := range [][]string{{"-token", token}, nil} {
		if args == nil {
			t.Setenv(envViewToken, token)
		}
		url, stderr, stop := startView(t, append(args, "-addr", "0.0.0.0:0", path)...)
		assert.Regexp(t, `^http://127\.0\.0\.1:\d+/$`, url, "not printed")
		code, _ := get(t, url, "")
		assert.Equal(t, http.StatusUnauthorized, code)
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Get(url + "?token=" + token)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.NotContains(t, stderr.String(), token)
		assert.Equal(t, exitOK, stop())
	}
	url, _, stop := startView(t, "-token", token, path)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/$`, url)
	code, _ := get(t, url, "")
	assert.Equal(t, http.StatusUnauthorized, code, "asked for on loopback too")
	assert.Equal(t, exitOK, stop())

	code, _, stderr := runCmd(t, "", "view", "-token", "short", path)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "16 characters or more")
}

func TestViewBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{nil, exitUsage, "want one or more FILEs"},
		{[]string{filepath.Join(dir, "missing.jsonl")}, exitFailure, "no such file"},
		{[]string{dir}, exitFailure, "is a directory"},
		{[]string{"sqlite:" + filepath.Join(dir, "a.db"), "x.jsonl"}, exitUsage, "a store URL is read alone"},
		{[]string{"-"}, exitUsage, "standard input cannot be viewed"},
		{[]string{"-poll", "0s", "x.jsonl"}, exitUsage, "-poll must be more than 0"},
		{[]string{"-addr", "256.0.0.1:80", filepath.Join(dir, "h.jsonl")}, exitFailure, ""},
	} {
		if c.args != nil && strings.HasSuffix(c.args[len(c.args)-1], "h.jsonl") {
			appendFile(t, c.args[len(c.args)-1], line(testRecord(1, true)))
		}
		code, stdout, stderr := runCmd(t, "", append([]string{"view"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.say, c.args)
		assert.Empty(t, stdout, "%v: nothing printed when it cannot serve", c.args)
	}
}

// The demo ends by saying how to view what it recorded, and that line
// works as printed.
func TestDemoSaysHowToView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	const lead = "See it in a browser: "
	i := strings.LastIndex(stderr, lead)
	require.GreaterOrEqual(t, i, 0, stderr)
	hint, _, _ := strings.Cut(stderr[i+len(lead):], "\n")
	fields := strings.Fields(hint)
	require.GreaterOrEqual(t, len(fields), 3, hint)
	require.Equal(t, "view", fields[len(fields)-2], hint)
	assert.Equal(t, path, fields[len(fields)-1])

	url, _, stop := startView(t, fields[len(fields)-1])
	code, body := reloadUntil(t, http.DefaultClient, url, regexp.MustCompile("going to Lisbon in May"))
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), "going to Lisbon in May", "the demo's conversation, listed")
	assert.Equal(t, exitOK, stop())
}

// A store URL is served as files are, and what the store receives shows.
func TestViewStore(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "history.db")
	w, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Append(ctx, testRecord(1, true)))
	require.NoError(t, w.Flush())

	page, _, stop := startView(t, url, "-poll", "20ms")
	code, body := get(t, page, "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `data-key="t1"`)
	r := testRecord(2, true)
	r.TraceID = "t2"
	require.NoError(t, w.Append(ctx, r))
	require.NoError(t, w.Flush())
	_, body = get(t, page, "")
	assert.Contains(t, body, `data-key="t2"`, "asked of the store at each page")
	code, _ = get(t, page+"call/"+r.CallID, "")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, exitOK, stop())
}
