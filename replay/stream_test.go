package replay_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/replay"
)

// reads reads a body to its end, one Read at a time with a large buffer,
// and returns what each Read gave and the error that ended it.
func reads(body io.Reader) ([]string, error) {
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			out = append(out, string(buf[:n]))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func asStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// recordStream records the OpenAI stream of testdata into a cassette.
func recordStream(t *testing.T, file string) (path string, frames []string) {
	t.Helper()
	path = cassettePath(t)
	stream := testdata(t, file)
	srv := newFake(t, reply{frames: events(stream)})
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	resp := post(t, c.Client(), srv.URL()+"/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
	assert.Equal(t, string(stream), readAll(t, resp), "the caller gets every byte live")
	require.NoError(t, c.Close())
	return path, asStrings(events(stream))
}

func TestStreamsReplayFrameByFrame(t *testing.T) {
	for _, file := range []string{"openai/openai_chat_stream.sse", "gemini/gemini_stream.sse", "anthropic_stream.sse"} {
		t.Run(file, func(t *testing.T) {
			path, want := recordStream(t, file)
			line := gjson.Parse(lines(t, path)[0])
			frames := line.Get("response.frames").Array()
			require.Len(t, frames, len(want), "one frame per server-sent event")
			var last float64
			for i, f := range frames {
				assert.Equal(t, want[i], frameText(f))
				assert.GreaterOrEqual(t, f.Get("at_ms").Float(), last, "offsets grow")
				last = f.Get("at_ms").Float()
			}
			assert.Equal(t, int64(-1), line.Get("response.content_length").Int())

			c := open(t, path)
			resp := post(t, c.Client(), "http://x/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
			assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			got, err := reads(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, want, got, "each event is a Read of its own, even with a buffer that would hold them all")
		})
	}
}

// frameText gives back the bytes of a frame of a cassette line.
func frameText(f gjson.Result) string {
	if !f.Get("data").Exists() {
		return f.Get("text").String()
	}
	s := "data: " + f.Get("data").Raw + "\n\n"
	if e := f.Get("event"); e.Exists() {
		s = "event: " + e.String() + "\n" + s
	}
	return s
}

func TestStreamFramesOfJSONAreStoredAsJSON(t *testing.T) {
	path, _ := recordStream(t, "anthropic_stream.sse")
	frames := gjson.Get(lines(t, path)[0], "response.frames").Array()
	assert.Equal(t, "message_start", frames[0].Get("event").String())
	assert.Equal(t, "msg_01P3c4UyGM6k1XEw8CEBzmEa", frames[0].Get("data.message.id").String(), "an event's JSON is JSON in the cassette")
	assert.Equal(t, "event: ping\ndata: {\"type\": \"ping\"}\n\n", frames[2].Get("text").String(), "JSON that is not compact stays text, to keep its bytes")
	path, _ = recordStream(t, "openai/openai_chat_stream.sse")
	frames = gjson.Get(lines(t, path)[0], "response.frames").Array()
	assert.Equal(t, "chat.completion.chunk", frames[0].Get("data.object").String())
	assert.False(t, frames[0].Get("event").Exists())
	assert.Equal(t, "data: [DONE]\n\n", frames[len(frames)-1].Get("text").String())
}

// sleeps is a WithSleep that records what it was asked to wait, and waits
// for nothing.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// handMade writes a cassette of one streamed answer with known times.
func handMade(t *testing.T) string {
	t.Helper()
	path := cassettePath(t)
	var sb strings.Builder
	ms := time.Millisecond
	err := replay.Write(&sb, []replay.Interaction{{
		Request: replay.Request{Method: "POST", URL: mustURL(t, "http://x/v1/stream"), Body: []byte(`{"stream":true}`)},
		Response: &replay.Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, ContentLength: -1, Stream: true, Frames: []replay.Frame{
			{At: 10 * ms, Data: []byte("data: 1\n\n")},
			{At: 30 * ms, Data: []byte("data: 2\n\n")},
			{At: 30 * ms, Data: []byte("data: 3\n\n")},
			{At: 100 * ms, Data: []byte("data: [DONE]\n\n")},
		}},
		Latency: 250 * ms,
	}})
	require.NoError(t, err)
	require.NoError(t, writeFile(path, sb.String()))
	return path
}

func TestRecordedSpeed(t *testing.T) {
	path := handMade(t)
	ms := time.Millisecond
	var s sleeps
	c := open(t, path, replay.WithRecordedSpeed(), replay.WithSleep(s.sleep))
	resp := post(t, c.Client(), "http://x/v1/stream", `{"stream":true}`)
	got, err := reads(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, []string{"data: 1\n\n", "data: 2\n\n", "data: 3\n\n", "data: [DONE]\n\n"}, got)
	assert.Equal(t, []time.Duration{250 * ms, 10 * ms, 20 * ms, 70 * ms}, s.got(), "the latency, then the gaps between the recorded offsets")

	s = sleeps{}
	c = open(t, path, replay.WithSleep(s.sleep))
	readAll(t, post(t, c.Client(), "http://x/v1/stream", `{"stream":true}`))
	assert.Empty(t, s.got(), "at once by default")
}

func TestAWaitEndsWithTheContextOrClose(t *testing.T) {
	path := handMade(t)
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			entered := make(chan struct{}, 10)
			blocking := func(ctx context.Context, d time.Duration) error {
				entered <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// A frame delay makes the second Read wait (in the sleeper,
			// which tells us it is there).
			c := open(t, path, replay.WithSleep(blocking), replay.WithFault(replay.Fault{FrameDelay: time.Hour}))
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/v1/stream", strings.NewReader(`{"stream":true}`))
			resp := mustDo(t, c, req)
			buf := make([]byte, 100)
			n, err := resp.Body.Read(buf)
			require.NoError(t, err)
			assert.Equal(t, "data: 1\n\n", string(buf[:n]), "the first frame has no delay")
			done := make(chan error)
			go func() {
				_, err := resp.Body.Read(buf)
				done <- err
			}()
			<-entered // the Read waits before the second frame
			if how == "cancel" {
				cancel()
				assert.ErrorIs(t, <-done, context.Canceled)
			} else {
				require.NoError(t, resp.Body.Close())
				assert.ErrorContains(t, <-done, "read on closed response body")
			}
		})
	}
}

func TestAStreamClosedHalfWayIsReplayedSo(t *testing.T) {
	path := cassettePath(t)
	evs := events(testdata(t, "openai/openai_chat_stream.sse"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range evs[:2] {
			w.Write(e)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // the rest never comes: the caller gives up
	}))
	defer srv.Close()
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	resp := post(t, c.Client(), srv.URL+"/v1/chat/completions", `{"stream":true}`)
	br := bufio.NewReader(resp.Body)
	for range 4 { // two events: "data: ...\n" and "\n" each
		_, err := br.ReadString('\n')
		require.NoError(t, err)
	}
	require.NoError(t, resp.Body.Close())
	require.NoError(t, c.Close())
	line := gjson.Parse(lines(t, path)[0])
	assert.Equal(t, "closed", line.Get("response.end").String())
	assert.Len(t, line.Get("response.frames").Array(), 2)

	c = open(t, path)
	resp = post(t, c.Client(), "http://x/v1/chat/completions", `{"stream":true}`)
	got, err := reads(resp.Body)
	assert.Equal(t, asStrings(evs[:2]), got)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "reading past what was recorded is a cut stream")
	var recorded *replay.RecordedError
	assert.ErrorAs(t, err, &recorded)
}

func TestAReadErrorIsRecorded(t *testing.T) {
	path := cassettePath(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() { // a server that drops the connection in the middle of a stream
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		br := bufio.NewReader(conn)
		req, err := http.ReadRequest(br)
		if err == nil {
			io.Copy(io.Discard, req.Body)
			fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			fmt.Fprintf(conn, "%x\r\n%s\r\n", len("data: 1\n\n"), "data: 1\n\n")
		}
		conn.Close()
	}()
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	resp := post(t, c.Client(), "http://"+ln.Addr().String()+"/s", `{}`)
	liveReads, liveErr := reads(resp.Body)
	require.Error(t, liveErr)
	resp.Body.Close()
	require.NoError(t, c.Close())
	assert.Equal(t, "error", gjson.Get(lines(t, path)[0], "response.end").String())

	c = open(t, path)
	resp = post(t, c.Client(), "http://x/s", `{}`)
	got, err := reads(resp.Body)
	assert.Equal(t, liveReads, got)
	var recorded *replay.RecordedError
	require.ErrorAs(t, err, &recorded)
	assert.Equal(t, liveErr.Error(), recorded.Message)
}

func TestCloseRecordsBodiesLeftOpen(t *testing.T) {
	path := cassettePath(t)
	evs := events(testdata(t, "openai/openai_chat_stream.sse"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(evs[0])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	resp := post(t, c.Client(), srv.URL+"/s", `{}`)
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	n, err := resp.Body.Read(buf)
	require.NoError(t, err)
	require.Equal(t, string(evs[0]), string(buf[:n]))
	require.NoError(t, c.Close(), "the body is still open")
	line := gjson.Parse(lines(t, path)[0])
	assert.Equal(t, "closed", line.Get("response.end").String())
	assert.Equal(t, string(evs[0]), frameText(line.Get("response.frames.0")))
}

func TestConcurrentReplay(t *testing.T) {
	path, want := recordStream(t, "openai/openai_chat_stream.sse")
	c := open(t, path, replay.WithRepeatLast())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o","stream":true}`))
			resp, err := c.RoundTrip(req)
			if err != nil {
				errs <- err
				return
			}
			got, err := reads(resp.Body)
			if err == nil && strings.Join(got, "") != strings.Join(want, "") {
				err = errors.New("a different stream")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}
