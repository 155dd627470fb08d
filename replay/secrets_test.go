package replay_test

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/replay"
)

func TestASecretInARequestIsRefusedBeforeItIsSent(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{}`)})
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"my key is `+fakeKey()+`"}]}`))
	_, err := c.RoundTrip(req)
	var serr *replay.SecretError
	require.ErrorAs(t, err, &serr)
	require.ErrorIs(t, err, replay.ErrSecret)
	assert.Equal(t, "request.body.messages.0.content", serr.Field)
	assert.Equal(t, "a key-shaped string", serr.What)
	assert.Equal(t, "POST /v1/chat/completions", serr.Request)
	assert.NotContains(t, err.Error(), fakeKey(), "the error names the field, never the secret")
	assert.Equal(t, int32(0), srv.hits.Load(), "nothing was sent")

	cerr := c.Close()
	require.ErrorAs(t, cerr, &serr, "Close reports it too")
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, fs.ErrNotExist, "nothing was written")
}

func TestASecretInAResponseFailsItsReadAndIsLeftOut(t *testing.T) {
	path := cassettePath(t)
	leak := []byte(`{"choices":[{"message":{"content":"Sure: ` + fakeKey() + `"}}]}`)
	srv := newFake(t, reply{body: []byte(`{"fine":true}`)}, reply{body: leak})
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, c.Client(), srv.URL()+"/fine", `{}`))
	resp := post(t, c.Client(), srv.URL()+"/leak", `{}`)
	got, err := io.ReadAll(resp.Body)
	assert.Equal(t, string(leak), string(got), "the caller got every byte")
	var serr *replay.SecretError
	require.ErrorAs(t, err, &serr, "and then the error, instead of EOF")
	assert.Equal(t, "response.body.choices.0.message.content", serr.Field)
	assert.Equal(t, 1, serr.Interaction)
	assert.ErrorAs(t, resp.Body.Close(), &serr)

	cerr := c.Close()
	require.ErrorAs(t, cerr, &serr)
	assert.Contains(t, cerr.Error(), "interaction 1 (POST /leak)")
	ls := lines(t, path)
	assert.Len(t, ls, 1, "the other interaction is written")
	assert.NotContains(t, strings.Join(ls, "\n"), fakeKey())
}

func TestACredentialEchoedBackIsRefused(t *testing.T) {
	// Not key-shaped, so only the literal check finds it.
	cred := "plain-credential-" + "0123456789"
	for _, where := range []string{"header", "stream"} {
		t.Run(where, func(t *testing.T) {
			path := cassettePath(t)
			r := reply{header: map[string]string{"X-Debug": "you sent " + cred}, body: []byte(`{}`)}
			field := "response.headers.X-Debug"
			if where == "stream" {
				r = reply{frames: [][]byte{[]byte("data: 1\n\n"), []byte("data: " + cred + "\n\n")}}
				field = "response.frames.1"
			}
			srv := newFake(t, r)
			c := open(t, path, replay.WithMode(replay.ModeRecord))
			req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/a", strings.NewReader(`{}`))
			req.Header.Set("X-Api-Key", cred)
			resp, err := c.RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			var serr *replay.SecretError
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, field, serr.Field)
			assert.Equal(t, "the value of the request's X-Api-Key header", serr.What)
			assert.Error(t, c.Close())
		})
	}
}

func TestBeforeSaveCanScrub(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"echo":"` + fakeKey() + `"}`)})
	scrub := func(it *replay.Interaction) error {
		it.Response.Body = bytes.ReplaceAll(it.Response.Body, []byte(fakeKey()), []byte("sk-SCRUBBED"))
		return nil
	}
	c := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithBeforeSave(scrub))
	readAll(t, post(t, c.Client(), srv.URL()+"/a", `{}`))
	require.NoError(t, c.Close())
	assert.Contains(t, lines(t, path)[0], `"echo":"sk-SCRUBBED"`)
}

func TestCredentialHeadersAreNeverWritten(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{}`), header: map[string]string{"Set-Cookie": "session=abc", "X-Request-Id": "req_1"}})
	c := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithRequestHeaders("Authorization", "X-Trace", "Cookie"))
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/a?token=t0ken-value-123&q=1", strings.NewReader(`{}`))
	for _, h := range []string{"Authorization", "Proxy-Authorization", "Api-Key", "X-Api-Key", "X-Goog-Api-Key", "Cookie"} {
		req.Header.Set(h, "credential-of-"+h)
	}
	req.Header.Set("X-Trace", "t-1")
	req.Header.Set("User-Agent", "app/1.0 (linux)")
	readAll(t, mustDo(t, c, req))
	require.NoError(t, c.Close())
	line := lines(t, path)[0]
	assert.NotContains(t, line, "credential-of-")
	assert.NotContains(t, line, "session=abc")
	assert.NotContains(t, line, "t0ken-value")
	assert.Contains(t, line, `"X-Trace":"t-1"`, "a header asked for is kept")
	assert.NotContains(t, line, "User-Agent", "headers that vary by machine are not kept by default")
	assert.Contains(t, line, `"X-Request-Id":"req_1"`)
}

func TestWriteRefusesSecrets(t *testing.T) {
	var buf bytes.Buffer
	err := replay.Write(&buf, []replay.Interaction{
		{Request: replay.Request{Method: "GET", URL: mustURL(t, "http://x/a")}, Response: &replay.Response{Status: 200}},
		{Request: replay.Request{Method: "GET", URL: mustURL(t, "http://x/b"), Header: http.Header{"X-Key": {"Bearer abcdefghijklmnop"}}}, Response: &replay.Response{Status: 200}},
	})
	var serr *replay.SecretError
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, 1, serr.Interaction)
	assert.Equal(t, "request.headers.X-Key", serr.Field)
	assert.Zero(t, buf.Len(), "nothing written")
}
