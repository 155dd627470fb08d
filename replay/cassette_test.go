package replay_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/replay"
)

const chatBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}],"temperature":0.2}`

func TestRecordThenReplay(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: testdata(t, "openai/openai_chat_response.json"), header: map[string]string{"X-Request-Id": "req_1"}})

	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	live := post(t, rec.Client(), srv.URL()+"/v1/chat/completions?api-version=1&key=AIzaNOTAREALKEY", chatBody)
	liveBody := readAll(t, live)
	require.NoError(t, rec.Close())
	srv.srv.Close()

	ls := lines(t, path)
	require.Len(t, ls, 1, "one interaction, one line")
	line := gjson.Parse(ls[0])
	assert.Equal(t, int64(1), line.Get("version").Int())
	assert.Equal(t, "POST", line.Get("request.method").String())
	assert.NotContains(t, line.Get("request.url").String(), "key=", "secret query parameters are not kept")
	assert.Contains(t, line.Get("request.url").String(), "api-version=1")
	assert.True(t, line.Get("request.body").IsObject(), "a JSON request body is stored as JSON")
	assert.Equal(t, "Hello", line.Get("request.body.messages.0.content").String())
	assert.False(t, line.Get("request.headers.Authorization").Exists())
	assert.Equal(t, "application/json", line.Get("request.headers.Content-Type").String())
	assert.True(t, line.Get("response.body").IsObject(), "a JSON response body is stored as JSON")
	assert.Equal(t, "  ", line.Get("response.body_indent").String())
	assert.Equal(t, "req_1", line.Get("response.headers.X-Request-Id").String())
	assert.Len(t, line.Get("response.sha256").String(), 64)
	assert.NotContains(t, ls[0], fakeKey())

	play := open(t, path, replay.WithTransport(noNetwork{t}))
	assert.Equal(t, replay.ModeReplay, play.Mode(), "the default mode")
	resp := post(t, play.Client(), "http://elsewhere.example/v1/chat/completions?api-version=1", chatBody)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "200 OK", resp.Status)
	assert.Equal(t, live.Header, resp.Header, "the headers as recorded")
	assert.Equal(t, live.ContentLength, resp.ContentLength)
	assert.Equal(t, liveBody, readAll(t, resp), "the exact bytes")
	assert.Empty(t, play.Unused())
	require.NoError(t, play.Close())
}

func TestMissingCassetteIsAnErrorByDefault(t *testing.T) {
	t.Setenv(replay.EnvMode, "")
	_, err := replay.New(filepath.Join(t.TempDir(), "none.jsonl"))
	require.ErrorIs(t, err, replay.ErrNoCassette)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "LLMHISTORY_REPLAY=record", "the error says how to record it")
}

func TestModeFromTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	for _, m := range []replay.Mode{replay.ModeRecord, replay.ModeOnce, replay.ModePassthrough} {
		t.Setenv(replay.EnvMode, m.String())
		c := open(t, path)
		assert.Equal(t, m, c.Mode())
		require.NoError(t, c.Close())
	}
	t.Setenv(replay.EnvMode, "record")
	c := open(t, path, replay.WithMode(replay.ModeOnce))
	assert.Equal(t, replay.ModeOnce, c.Mode(), "WithMode wins over the environment")
	t.Setenv(replay.EnvMode, "recrod")
	_, err := replay.New(path)
	assert.ErrorContains(t, err, `unknown mode "recrod"`)
}

func TestRecordWithNothingRecordedKeepsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("keep me\n"), 0o644))
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	require.NoError(t, c.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "keep me\n", string(b))
}

func TestCallerRequestIsNotChanged(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"ok":true}`)})
	for _, mode := range []replay.Mode{replay.ModeRecord, replay.ModeReplay} {
		t.Run(mode.String(), func(t *testing.T) {
			c := open(t, path, replay.WithMode(mode))
			for _, getBody := range []bool{true, false} {
				req, err := http.NewRequest(http.MethodPost, srv.URL()+"/v1/x?key=AIzaNOTAREALKEY", strings.NewReader(chatBody))
				require.NoError(t, err)
				if !getBody {
					req.GetBody = nil
				}
				req.Header.Set("Authorization", "Bearer "+fakeKey())
				before := req.Clone(context.Background())
				body, getBodyFn := req.Body, req.GetBody
				resp, err := c.RoundTrip(req)
				require.NoError(t, err)
				readAll(t, resp)
				assert.Equal(t, before.Header, req.Header)
				assert.Equal(t, before.URL, req.URL)
				assert.Equal(t, before.ContentLength, req.ContentLength)
				assert.True(t, body == req.Body, "the body field is the caller's")
				assert.Equal(t, getBodyFn == nil, req.GetBody == nil)
				if getBodyFn != nil {
					rc, err := req.GetBody()
					require.NoError(t, err)
					b, _ := io.ReadAll(rc)
					assert.Equal(t, chatBody, string(b), "GetBody still gives the body")
				}
			}
			require.NoError(t, c.Close())
		})
	}
}

func TestJSONBodiesMatchAsJSON(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"answer":1}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, rec.Client(), srv.URL()+"/v1/chat?b=2&a=1", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`))
	require.NoError(t, rec.Close())

	tests := []struct {
		name  string
		url   string
		body  string
		opts  []replay.Option
		match bool
	}{
		{"the same", "/v1/chat?b=2&a=1", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`, nil, true},
		{"keys reordered, spaced, numbers written otherwise, query reordered", "/v1/chat?a=1&b=2",
			`{ "messages" : [ {"content":"hi","role":"user"} ], "n": 1.0e0, "metadata":{"app":"x","request_id":"r-1"}, "user":"u-1", "model":"m" }`, nil, true},
		{"a field changed", "/v1/chat?a=1&b=2", `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`, nil, false},
		{"fields that change every run, ignored", "/v1/chat?a=1&b=2", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-2","metadata":{"request_id":"r-2","app":"x"}}`,
			[]replay.Option{replay.WithIgnoredFields("user", "metadata.request_id")}, true},
		{"wildcards", "/v1/chat?a=1&b=2", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi","name":"n"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`,
			[]replay.Option{replay.WithIgnoredFields("messages.#.name")}, true},
		{"a subtree ignored", "/v1/chat?a=1&b=2", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-1"}`,
			[]replay.Option{replay.WithIgnoredFields("metadata")}, true},
		{"query changed", "/v1/chat?a=1&b=3", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`, nil, false},
		{"query ignored, secret params always", "/v1/chat?a=1&b=3&key=AIzaNOTAREALKEY", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`,
			[]replay.Option{replay.WithIgnoredQuery("b")}, true},
		{"another path", "/v1/chat2?a=1&b=2", `{"model":"m","n":1,"messages":[{"role":"user","content":"hi"}],"user":"u-1","metadata":{"request_id":"r-1","app":"x"}}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := open(t, path, append(tt.opts, replay.WithTransport(noNetwork{t}))...)
			defer c.Close()
			req, _ := http.NewRequest(http.MethodPost, "http://x"+tt.url, strings.NewReader(tt.body))
			resp, err := c.RoundTrip(req)
			if tt.match {
				require.NoError(t, err)
				assert.Equal(t, `{"answer":1}`, readAll(t, resp))
			} else {
				require.ErrorIs(t, err, replay.ErrMiss)
			}
		})
	}
}

func TestHeadersAndCustomMatchers(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"v":"2023"}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithMatchedHeaders("Anthropic-Version"))
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/messages", strings.NewReader(`{"prompt":"Today is 2026-11-22."}`))
	req.Header.Set("Anthropic-Version", "2023-06-01")
	readAll(t, mustDo(t, rec, req))
	require.NoError(t, rec.Close())
	assert.Contains(t, lines(t, path)[0], `"Anthropic-Version":"2023-06-01"`, "a matched header is kept")

	send := func(c *replay.Cassette, version, prompt string) error {
		req, _ := http.NewRequest(http.MethodPost, "http://x/v1/messages", strings.NewReader(`{"prompt":"`+prompt+`"}`))
		if version != "" {
			req.Header.Set("Anthropic-Version", version)
		}
		resp, err := c.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	c := open(t, path)
	assert.NoError(t, send(c, "", "Today is 2026-11-22."), "headers are not matched by default")
	c = open(t, path, replay.WithMatchedHeaders("anthropic-version"))
	var miss *replay.MissError
	require.ErrorAs(t, send(c, "2024-01-01", "Today is 2026-11-22."), &miss)
	assert.Equal(t, []replay.Difference{{Field: "header.Anthropic-Version", Recorded: `"2023-06-01"`, Got: `"2024-01-01"`}}, miss.Differences)

	// Loosen: the date in the prompt changes every day.
	dateless := func(r *replay.Request) *replay.Request {
		r.Body = bytes.ReplaceAll(r.Body, []byte("2026-11-22"), []byte("DATE"))
		r.Body = bytes.ReplaceAll(r.Body, []byte("2026-11-23"), []byte("DATE"))
		return r
	}
	c = open(t, path, replay.WithMatcher(func(got, rec *replay.Request, next replay.MatchFunc) bool {
		return next(dateless(got), dateless(rec))
	}))
	assert.NoError(t, send(c, "", "Today is 2026-11-23."))
	// Tighten: and the rejection says so.
	c = open(t, path, replay.WithMatcher(func(got, rec *replay.Request, next replay.MatchFunc) bool {
		return next(got, rec) && got.Header.Get("Anthropic-Version") == rec.Header.Get("Anthropic-Version")
	}))
	err := send(c, "2024-01-01", "Today is 2026-11-22.")
	require.ErrorAs(t, err, &miss)
	assert.True(t, miss.Rejected)
	assert.Contains(t, err.Error(), "WithMatcher turned it down")
}

func mustDo(t *testing.T, rt http.RoundTripper, req *http.Request) *http.Response {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	return resp
}

func TestIdenticalRequestsReplayInOrder(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"n":1}`)}, reply{body: []byte(`{"n":2}`)}, reply{body: []byte(`{"n":3}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	for range 2 {
		readAll(t, post(t, rec.Client(), srv.URL()+"/poll", `{}`))
	}
	require.NoError(t, rec.Close())

	c := open(t, path)
	assert.Equal(t, `{"n":1}`, readAll(t, post(t, c.Client(), "http://x/poll", `{}`)))
	assert.Equal(t, []int{1}, c.Unused())
	assert.Equal(t, `{"n":2}`, readAll(t, post(t, c.Client(), "http://x/poll", `{}`)))
	req, _ := http.NewRequest(http.MethodPost, "http://x/poll", strings.NewReader(`{}`))
	_, err := c.RoundTrip(req)
	var miss *replay.MissError
	require.ErrorAs(t, err, &miss, "a third call was not recorded: an error, not a silent repeat")
	assert.True(t, miss.UsedUp)
	assert.Equal(t, 2, miss.Answers)
	assert.Contains(t, err.Error(), "its 2 recorded answer(s) were all used")

	c = open(t, path, replay.WithRepeatLast())
	for _, want := range []string{`{"n":1}`, `{"n":2}`, `{"n":2}`, `{"n":2}`} {
		assert.Equal(t, want, readAll(t, post(t, c.Client(), "http://x/poll", `{}`)))
	}
}

func TestMissSaysWhy(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, rec.Client(), srv.URL()+"/v1/embeddings", `{"model":"e","input":"x"}`))
	readAll(t, post(t, rec.Client(), srv.URL()+"/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"What's the weather in Paris?"}],"temperature":0.2,"tools":[{"name":"a"},{"name":"b"}]}`))
	readAll(t, post(t, rec.Client(), srv.URL()+"/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"Something else entirely"}],"seed":1,"n":2,"stop":["x"]}`))
	require.NoError(t, rec.Close())

	c := open(t, path)
	long := strings.Repeat("very long ", 30)
	body := `{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"What's the weather in Rome? ` + long + `"}],"tools":[{"name":"a"}],"user":"` + fakeKey() + `"}`
	req, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(body))
	_, err := (&http.Client{Transport: c}).Do(req)
	var miss *replay.MissError
	require.ErrorAs(t, err, &miss, "errors.As through the http.Client's *url.Error")
	require.ErrorIs(t, err, replay.ErrMiss)
	assert.Equal(t, 1, miss.Index, "the closest: same method and path, fewest differences")
	assert.Equal(t, 2, miss.Line)
	fields := map[string]replay.Difference{}
	for _, d := range miss.Differences {
		fields[d.Field] = d
	}
	require.Len(t, fields, 4, "%v", miss.Differences)
	assert.Equal(t, `"What's the weather in Paris?"`, fields["body.messages.1.content"].Recorded)
	assert.True(t, strings.HasPrefix(fields["body.messages.1.content"].Got, `"What's the weather in Rome? very long`))
	assert.LessOrEqual(t, len(fields["body.messages.1.content"].Got), 90, "values are shortened")
	assert.Equal(t, replay.Difference{Field: "body.temperature", Recorded: "0.2", Got: "(absent)"}, fields["body.temperature"])
	assert.Equal(t, replay.Difference{Field: "body.tools.1", Recorded: `{"name":"b"}`, Got: "(absent)"}, fields["body.tools.1"])
	assert.Equal(t, `"[REDACTED]"`, fields["body.user"].Got, "secrets never reach an error message")

	msg := err.Error()
	t.Log(msg)
	assert.Contains(t, msg, "no recorded answer for POST /v1/chat/completions")
	assert.Contains(t, msg, "closest: interaction 1 (line 2), POST /v1/chat/completions, 4 difference(s):")
	assert.Contains(t, msg, `body.temperature: recorded 0.2, got (absent)`)
	assert.Contains(t, msg, "LLMHISTORY_REPLAY=record")
	assert.NotContains(t, msg, fakeKey())
	assert.Less(t, len(msg), 1200, "bounded")

	req, _ = http.NewRequest(http.MethodGet, "http://x/v1/models", nil)
	_, err = c.RoundTrip(req)
	require.ErrorAs(t, err, &miss)
	assert.Equal(t, "path", miss.Differences[1].Field)

	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = open(t, empty).RoundTrip(req)
	assert.ErrorContains(t, err, "the cassette has no interactions")
}

func TestNonTextBodiesAreBase64(t *testing.T) {
	path := cassettePath(t)
	payload := []byte{0x89, 'P', 'N', 'G', 0xff, 0x00, 0xfe}
	srv := newFake(t, reply{body: payload, header: map[string]string{"Content-Type": "image/png"}})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/upload", bytes.NewReader(payload))
	readAll(t, mustDo(t, rec, req))
	require.NoError(t, rec.Close())
	line := gjson.Parse(lines(t, path)[0])
	assert.True(t, line.Get("request.body_base64").Exists())
	assert.True(t, line.Get("response.body_base64").Exists())

	c := open(t, path)
	req, _ = http.NewRequest(http.MethodPost, "http://x/upload", bytes.NewReader(payload))
	assert.Equal(t, string(payload), readAll(t, mustDo(t, c, req)))
}

func TestDecompressedBodiesReplayAsTheCallerGotThem(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"zipped":true}`))
	w.Close()
	path := cassettePath(t)
	srv := newFake(t, reply{body: gz.Bytes(), header: map[string]string{"Content-Encoding": "gzip"}})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	live := post(t, rec.Client(), srv.URL()+"/z", `{}`)
	assert.Equal(t, `{"zipped":true}`, readAll(t, live))
	require.True(t, live.Uncompressed, "the transport decompressed it")
	require.NoError(t, rec.Close())

	resp := post(t, open(t, path).Client(), "http://x/z", `{}`)
	assert.True(t, resp.Uncompressed)
	assert.Equal(t, live.Header, resp.Header)
	assert.Equal(t, `{"zipped":true}`, readAll(t, resp))
}

func TestOnceReplaysWhatItHasAndRecordsTheRest(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"n":1}`)}, reply{body: []byte(`{"n":2}`)})
	c := open(t, path, replay.WithMode(replay.ModeOnce))
	assert.Equal(t, `{"n":1}`, readAll(t, post(t, c.Client(), srv.URL()+"/a", `{"q":1}`)))
	require.NoError(t, c.Close())
	assert.Equal(t, int32(1), srv.hits.Load())

	c = open(t, path, replay.WithMode(replay.ModeOnce))
	assert.Equal(t, `{"n":1}`, readAll(t, post(t, c.Client(), srv.URL()+"/a", `{"q":1}`)), "replayed")
	assert.Equal(t, int32(1), srv.hits.Load(), "without calling the provider")
	assert.Equal(t, `{"n":2}`, readAll(t, post(t, c.Client(), srv.URL()+"/a", `{"q":2}`)), "recorded")
	require.NoError(t, c.Close())
	assert.Len(t, lines(t, path), 2, "the new interaction is added to the file")

	c = open(t, path)
	assert.Equal(t, `{"n":2}`, readAll(t, post(t, c.Client(), "http://x/a", `{"q":2}`)))
	assert.Equal(t, `{"n":1}`, readAll(t, post(t, c.Client(), "http://x/a", `{"q":1}`)))
}

func TestPassthroughNeitherReadsNorWrites(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"live":true}`)})
	c := open(t, path, replay.WithMode(replay.ModePassthrough))
	assert.Equal(t, `{"live":true}`, readAll(t, post(t, c.Client(), srv.URL()+"/a", `{}`)))
	require.NoError(t, c.Close())
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestTransportErrorsAreRecorded(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{})
	url := srv.URL()
	srv.srv.Close() // nobody listens there now
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	req, _ := http.NewRequest(http.MethodPost, url+"/a", strings.NewReader(`{}`))
	_, liveErr := rec.RoundTrip(req)
	require.Error(t, liveErr)
	require.NoError(t, rec.Close())
	assert.Equal(t, liveErr.Error(), gjson.Get(lines(t, path)[0], "error").String())

	c := open(t, path)
	req, _ = http.NewRequest(http.MethodPost, "http://x/a", strings.NewReader(`{}`))
	_, err := c.RoundTrip(req)
	var recorded *replay.RecordedError
	require.ErrorAs(t, err, &recorded)
	assert.Equal(t, liveErr.Error(), recorded.Message)
}

func TestClosedCassetteRefusesCalls(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{}`)})
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	require.NoError(t, c.Close())
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/a", strings.NewReader(`{}`))
	_, err := c.RoundTrip(req)
	assert.ErrorIs(t, err, replay.ErrClosed)
	assert.Equal(t, int32(0), srv.hits.Load())
}

func TestSaveIsAtomic(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{}`)})
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, c.Client(), srv.URL()+"/a", `{}`))
	require.NoError(t, c.Save())
	readAll(t, post(t, c.Client(), srv.URL()+"/b", `{}`))
	require.NoError(t, c.Close())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")
	assert.Len(t, lines(t, path), 2)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}

func TestReplayedBodiesEndWithTheContext(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"a":1}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, rec.Client(), srv.URL()+"/a", `{}`))
	require.NoError(t, rec.Close())

	c := open(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/a", strings.NewReader(`{}`))
	resp := mustDo(t, c, req)
	cancel()
	_, err := resp.Body.Read(make([]byte, 10))
	assert.ErrorIs(t, err, context.Canceled)

	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "http://x/a", strings.NewReader(`{}`))
	c = open(t, path)
	_, err = c.RoundTrip(req)
	assert.ErrorIs(t, err, context.Canceled, "a call whose context has ended gets no response")

	c = open(t, path)
	req, _ = http.NewRequest(http.MethodPost, "http://x/a", strings.NewReader(`{}`))
	resp = mustDo(t, c, req)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, resp.Body.Close(), "Close twice is fine")
	_, err = resp.Body.Read(make([]byte, 10))
	assert.ErrorContains(t, err, "read on closed response body")
}

func TestABodyOverTheLimitIsNotRecorded(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"big":"0123456789abcdef"}`)})
	c := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithMaxBody(10))
	resp := post(t, c.Client(), srv.URL()+"/a", `{}`)
	got, err := io.ReadAll(resp.Body)
	assert.Equal(t, `{"big":"0123456789abcdef"}`, string(got), "the caller still gets it all")
	assert.ErrorContains(t, err, "larger than 10 bytes")
	assert.ErrorContains(t, c.Close(), "larger than 10 bytes")
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
