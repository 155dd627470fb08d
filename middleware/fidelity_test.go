package middleware_test

import (
	"bufio"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// onlyReader hides every method of its reader but Read, as a body built
// from a pipe or a custom reader does: http.NewRequest cannot make a
// GetBody for it.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// A small body without GetBody and of unknown length, read whole by a
// server that answers 500, is sent again by a Retry inside the recorder:
// the recorder captured it as the transport read it, and once read whole
// within the cap it can be sent again. Over HTTP/1.1 (chunked) and HTTP/2,
// with the length unknown and known.
func TestRetryResendsBodyWithoutGetBody(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, length := range []int64{-1, int64(len(chatBody))} {
			t.Run("h2="+strconv.FormatBool(h2)+" length="+strconv.FormatInt(length, 10), func(t *testing.T) {
				var calls atomic.Int32
				bodies := make(chan string, 2)
				srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					bodies <- string(b)
					if calls.Add(1) == 1 {
						http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, http.StatusInternalServerError)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, chatResponse)
				}))
				if h2 {
					srv.EnableHTTP2 = true
					srv.StartTLS()
				} else {
					srv.Start()
				}
				defer srv.Close()

				rec := middleware.NewRecorder()
				defer rec.Close()
				client := &http.Client{Transport: middleware.Chain(srv.Client().Transport, rec.Middleware(),
					middleware.Retry(middleware.RetryPolicy{BaseDelay: 1, MaxDelay: 1}))}
				req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions", onlyReader{strings.NewReader(chatBody)})
				require.NoError(t, err)
				req.ContentLength = length
				require.Nil(t, req.GetBody)
				resp, err := client.Do(req)
				require.NoError(t, err)
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, chatBody, <-bodies)
				assert.Equal(t, chatBody, <-bodies)
				recs := rec.History().Records()
				require.Len(t, recs, 1)
				assert.Equal(t, 2, recs[0].Attempts)
				assert.True(t, recs[0].Outcome.OK)
			})
		}
	}
}

// A 200 whose JSON is cut short is a decode error when its body came
// whole, as its framing declared: nothing was lost on the way, and it is
// not worth a retry. Only a body that really ended early is a transport
// failure: fewer bytes than its Content-Length, or a chunked body whose
// connection dropped before its last chunk. A body framed by nothing but
// its connection's end cannot tell the two apart; the bytes decide.
func TestCutJSONIsDecodeWhenTheBodyCameWhole(t *testing.T) {
	cut := chatResponse[:len(chatResponse)/2]
	cases := []struct {
		name  string
		serve func(w http.ResponseWriter)
		want  string
		retry bool
	}{
		{"content-length, all of it", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", strconv.Itoa(len(cut)))
			io.WriteString(w, cut)
		}, record.ErrorDecode, false},
		{"chunked, to its last chunk", func(w http.ResponseWriter) {
			io.WriteString(w, cut)
			http.NewResponseController(w).Flush() // no length: chunked
		}, record.ErrorDecode, false},
		{"content-length, fewer bytes than declared", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", strconv.Itoa(len(chatResponse)))
			io.WriteString(w, cut)
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}, record.ErrorTransport, true},
		{"chunked, the connection dropped", func(w http.ResponseWriter) {
			io.WriteString(w, cut)
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}, record.ErrorTransport, true},
		{"ended by the connection's close", func(w http.ResponseWriter) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + cut)
			buf.Flush()
			conn.Close()
		}, record.ErrorTransport, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				c.serve(w)
			}))
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // aborted handlers are the point
			srv.Start()
			defer srv.Close()
			rec := middleware.NewRecorder(middleware.WithDedupWindow(0))
			defer rec.Close()
			resp, err := post(t, rec.Client(nil), t.Context(), srv.URL+"/v1/chat/completions", chatBody)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
			resp.Body.Close()
			recs := rec.History().Records()
			require.Len(t, recs, 1)
			r := recs[0]
			assert.Equal(t, c.want, r.Outcome.ErrorType, r.ErrorMessage)
			assert.Equal(t, c.retry, r.Outcome.Retriable)
			assert.Equal(t, http.StatusOK, r.Outcome.HTTPStatus)
		})
	}
}

// Such a decode error still waits for a retry: SDKs report JSON cut short
// as an unexpected EOF, as they report a cut connection, and a retry loop
// sends the call again. The two attempts are one record.
func TestCutJSONWholeIsFoldedIntoItsRetry(t *testing.T) {
	cut := chatResponse[:len(chatResponse)/2]
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(cut)))
			io.WriteString(w, cut)
			return
		}
		io.WriteString(w, chatResponse)
	}))
	defer srv.Close()
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatBody))
	require.NoError(t, err)
	for range 2 {
		req.Body, _ = req.GetBody()
		resp, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recs := rec.History().Records()
	require.Len(t, recs, 1)
	assert.Equal(t, 2, recs[0].Attempts)
	assert.True(t, recs[0].Outcome.OK)
}

// The out-of-range counts, through a real client: the record has
// no usage (and so no cost) and names "usage" in truncated. It once had
// total_tokens -2.
func TestOutOfRangeTokenCountsLeaveUsageOut(t *testing.T) {
	body := `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1e400,"completion_tokens":99999999999999999999999999,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":1.5e300}}}`
	srv := serve(t, 200, "application/json", body)
	rec := middleware.NewRecorder()
	defer rec.Close()
	resp, err := post(t, rec.Client(nil), t.Context(), srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	recs := rec.History().Records()
	require.Len(t, recs, 1)
	assert.True(t, recs[0].Outcome.OK)
	assert.Nil(t, recs[0].Usage)
	assert.Nil(t, recs[0].Cost)
	assert.Contains(t, recs[0].Truncated, "usage")
}
