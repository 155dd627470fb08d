package proof

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fault is what the fault server does with one HTTP attempt.
type fault int

const (
	faultOK          fault = iota // 200 with a proper body (JSON or SSE)
	faultRateLimit                // 429 with Retry-After
	faultInternal                 // 500
	faultUnavailable              // 503
	faultReset                    // the connection is reset (RST) after the request is read
	faultStall                    // nothing is answered until the client gives up
	faultCut                      // 200, then the body stops half way and the connection drops
	faultGarbage                  // 200 with a body that is not JSON
	faultGzip                     // 200 with the proper body gzip-encoded
	numFaults
)

var faultNames = [numFaults]string{"ok", "429", "500", "503", "reset", "stall", "cut", "garbage", "gzip"}

func (f fault) String() string { return faultNames[f] }

// faultWeights: how often each fault is drawn, out of 100. Stalls are
// rare because each one costs a client deadline.
var faultWeights = [numFaults]int{41, 8, 8, 8, 8, 1, 10, 8, 8}

// faultFor draws the fault of attempt (0-based) of call from seed: the
// same call gets the same sequence of faults in every run with the seed,
// whatever the order the calls are served in.
func faultFor(seed uint64, call, attempt int) fault {
	rng := rand.New(rand.NewPCG(seed, uint64(call)<<8|uint64(attempt)))
	x := rng.IntN(100)
	for f, w := range faultWeights {
		if x < w {
			return fault(f)
		}
		x -= w
	}
	panic("weights do not add up to 100")
}

// callHeader carries the logical call's number, so that the server knows
// the truth: which call an attempt belongs to, and how many came before.
const callHeader = "X-Test-Call"

// faultServer answers by the script and logs what it answered to each
// attempt of each call.
type faultServer struct {
	*httptest.Server
	seed  uint64
	stall time.Duration // the longest a stall waits for the client to go away

	mu  sync.Mutex
	log map[int][]fault // call -> what each of its attempts got
}

func newFaultServer(t testing.TB, seed uint64) *faultServer {
	s := &faultServer{seed: seed, stall: 30 * time.Second, log: make(map[int][]fault)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Server.Config.ErrorLog = discardLog // aborted handlers are the point here
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// forget drops the log; the server itself lives until the test's cleanup.
func (s *faultServer) forget() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
}

// attempts returns what the server answered to call, attempt by attempt.
func (s *faultServer) attempts(call int) []fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log[call]
}

func (s *faultServer) serve(w http.ResponseWriter, r *http.Request) {
	call, err := strconv.Atoi(r.Header.Get(callHeader))
	if err != nil {
		http.Error(w, "no "+callHeader, http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	f := faultFor(s.seed, call, len(s.log[call]))
	s.log[call] = append(s.log[call], f)
	s.mu.Unlock()

	gemini := strings.Contains(r.URL.Path, ":generateContent") || strings.Contains(r.URL.Path, ":streamGenerateContent")
	stream := strings.Contains(r.URL.Path, ":streamGenerateContent") || bytes.Contains(body, []byte(`"stream":true`))
	ok := okBody(call, gemini, stream)
	contentType := "application/json"
	if stream {
		contentType = "text/event-stream"
	}

	switch f {
	case faultOK:
		w.Header().Set("Content-Type", contentType)
		w.Write(ok)
	case faultRateLimit, faultInternal, faultUnavailable:
		status := map[fault]int{faultRateLimit: 429, faultInternal: 500, faultUnavailable: 503}[f]
		w.Header().Set("Content-Type", "application/json")
		// Retry-After in seconds for clients that read only that, and
		// retry-after-ms, which Retry and openai-go read first, so the
		// soak does not sleep a second per retry.
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Retry-After-Ms", "2")
		w.WriteHeader(status)
		w.Write(errorBody(call, status, gemini))
	case faultReset:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with RST, not FIN
		}
		conn.Close()
	case faultStall:
		select {
		case <-r.Context().Done(): // the client gave up
		case <-time.After(s.stall):
		}
	case faultCut:
		w.Header().Set("Content-Type", contentType)
		if !stream {
			w.Header().Set("Content-Length", strconv.Itoa(len(ok)))
		}
		w.Write(ok[:len(ok)/2])
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	case faultGarbage:
		w.Header().Set("Content-Type", contentType)
		fmt.Fprintf(w, "<html>\x00\xff garbage %d {{{", call)
	case faultGzip:
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(ok)
		zw.Close()
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(buf.Bytes())
	}
}

// okBody is the answer to call: an OpenAI chat completion or a Gemini
// response, whole or as a stream, saying which call it answers.
func okBody(call int, gemini, stream bool) []byte {
	var b bytes.Buffer
	switch {
	case gemini && stream:
		for i := range 5 {
			finish := ""
			if i == 4 {
				finish = `,"finishReason":"STOP"`
			}
			fmt.Fprintf(&b, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"part %d of call %d. \"}],\"role\":\"model\"}%s,\"index\":0}],\"modelVersion\":\"gemini-2.0-flash\",\"responseId\":\"r-%d\"}\r\n\r\n", i, call, finish, call)
		}
	case gemini:
		fmt.Fprintf(&b, `{"candidates":[{"content":{"parts":[{"text":"answer to call %d"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4,"totalTokenCount":9},"modelVersion":"gemini-2.0-flash","responseId":"r-%d"}`, call, call)
	case stream:
		for i := range 8 {
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"},\"finish_reason\":null}]}\n\n", call, i)
		}
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", call)
		b.WriteString("data: [DONE]\n\n")
	default:
		fmt.Fprintf(&b, `{"id":"chatcmpl-%d","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"answer to call %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}}`, call, call)
	}
	return b.Bytes()
}

func errorBody(call, status int, gemini bool) []byte {
	if gemini {
		gs := map[int]string{429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
		return fmt.Appendf(nil, `{"error":{"code":%d,"message":"fault %d for call %d","status":%q}}`, status, status, call, gs)
	}
	code := map[int]string{429: "rate_limit_exceeded", 500: "server_error", 503: "overloaded"}[status]
	return fmt.Appendf(nil, `{"error":{"message":"fault %d for call %d","type":"server_error","param":null,"code":%q}}`, status, call, code)
}

// discardLog silences the server's complaints about the connections the
// faults break on purpose.
var discardLog = log.New(io.Discard, "", 0)
