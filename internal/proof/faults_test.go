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
	faultOK           fault = iota // 200 with a proper body (JSON or SSE)
	faultRateLimit                 // 429 with Retry-After
	faultInternal                  // 500
	faultUnavailable               // 503
	faultReset                     // the connection is reset (RST) after the request is read
	faultStall                     // nothing is answered until the client gives up
	faultCut                       // 200, then the body stops half way and the connection drops
	faultGarbage                   // 200 with a body that is not JSON
	faultGzip                      // 200 with the proper body gzip-encoded
	faultRedirect                  // 307 to the same URL (?hop=1), whose answer is ok
	faultLongCRLF                  // 200 with a body longer than the recorder's capture, SSE framed with CRLF
	faultEndMidEvent               // 200, then the body ends cleanly in the middle of an event
	faultStallMidBody              // 200, half the body, then nothing until the client gives up
	faultEchoKey                   // 401 whose message echoes the credentials the request carried
	faultBlocked                   // 200, the answer stopped by a content filter (Gemini int enums: 3)
	faultNilResponse               // 200, which a broken middleware below the recorder turns into (nil, nil)
	faultStallError                // 429, half its body, then nothing until the client gives up
	numFaults
)

var faultNames = [numFaults]string{"ok", "429", "500", "503", "reset", "stall", "cut", "garbage", "gzip",
	"redirect", "long-crlf", "end-mid-event", "stall-mid-body", "echo-key", "blocked", "nil-response", "stall-error"}

func (f fault) String() string { return faultNames[f] }

// faultWeights: how often each fault is drawn, out of 100. Stalls are
// rare because each one costs a client deadline.
var faultWeights = [numFaults]int{29, 7, 6, 6, 6, 1, 8, 6, 6, 5, 5, 4, 1, 3, 3, 3, 1}

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

// nilHeader on a response asks the broken middleware below the recorder
// to turn it into a nil response with a nil error.
const nilHeader = "X-Test-Nil-Response"

// callHeader carries the logical call's number, so that the server knows
// the truth: which call an attempt belongs to, and how many came before.
const callHeader = "X-Test-Call"

// faultServer answers by the script and logs what it answered to each
// attempt of each call.
type faultServer struct {
	*httptest.Server
	seed  uint64
	stall time.Duration // the longest a stall waits for the client to go away

	mu   sync.Mutex
	log  map[int][]fault // call -> what each of its attempts got
	hops map[int]int     // call -> redirects followed (hop requests are not attempts)
}

func newFaultServer(t testing.TB, seed uint64) *faultServer {
	s := &faultServer{seed: seed, stall: 30 * time.Second, log: make(map[int][]fault), hops: make(map[int]int)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Server.Config.ErrorLog = discardLog // aborted handlers are the point here
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// forget drops the log; the server itself lives until the test's cleanup.
func (s *faultServer) forget() {
	s.mu.Lock()
	s.log, s.hops = nil, nil
	s.mu.Unlock()
}

// hopsOf returns how many redirects of call were followed.
func (s *faultServer) hopsOf(call int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hops[call]
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
	hop := r.URL.Query().Has("hop")
	s.mu.Lock()
	f := faultOK // the target of a redirect always answers
	if hop {
		s.hops[call]++
	} else {
		f = faultFor(s.seed, call, len(s.log[call]))
		s.log[call] = append(s.log[call], f)
	}
	s.mu.Unlock()

	gemini := strings.Contains(r.URL.Path, ":generateContent") || strings.Contains(r.URL.Path, ":streamGenerateContent")
	stream := strings.Contains(r.URL.Path, ":streamGenerateContent") || bytes.Contains(body, []byte(`"stream":true`))
	ints := strings.Contains(r.URL.RawQuery, "enum-encoding%3Dint") || strings.Contains(r.URL.RawQuery, "enum-encoding=int")
	ok := okBody(call, gemini, stream, ints)
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
	case faultRedirect:
		q := r.URL.Query()
		q.Set("hop", "1")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusTemporaryRedirect)
	case faultLongCRLF:
		w.Header().Set("Content-Type", contentType)
		w.Write(longBody(call, gemini, stream))
	case faultEndMidEvent:
		w.Header().Set("Content-Type", contentType) // no Content-Length: the end is clean
		w.Write(ok[:len(ok)*2/3])
	case faultStallMidBody, faultStallError:
		status := http.StatusOK
		out := ok
		if f == faultStallError {
			status, out = http.StatusTooManyRequests, errorBody(call, 429, gemini)
			w.Header().Set("Retry-After-Ms", "2")
			contentType = "application/json"
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(status)
		w.Write(out[:len(out)/2])
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(s.stall):
		}
	case faultEchoKey:
		creds := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " " + r.Header.Get("X-Goog-Api-Key") + " " + r.Header.Get("Api-Key")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		if gemini {
			fmt.Fprintf(w, `{"error":{"code":401,"message":"API key not valid: %s (call %d)","status":"UNAUTHENTICATED"}}`, creds, call)
		} else {
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (call %d)","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, creds, call)
		}
	case faultBlocked:
		w.Header().Set("Content-Type", contentType)
		w.Write(blockedBody(call, gemini, stream, ints))
	case faultNilResponse:
		w.Header().Set("Content-Type", contentType)
		w.Header().Set(nilHeader, "1")
		w.Write(ok)
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
// response, whole or as a stream, saying which call it answers. ints asks
// for Gemini's enums as numbers (enum-encoding=int).
func okBody(call int, gemini, stream, ints bool) []byte {
	return answer(call, gemini, stream, ints, "stop", 8, "\n")
}

// blockedBody is an answer a content filter stopped.
func blockedBody(call int, gemini, stream, ints bool) []byte {
	return answer(call, gemini, stream, ints, "content_filter", 8, "\n")
}

// longBody is an answer longer than the soak recorder's capture, with
// CRLF line endings when it is a stream: its finish reason and usage are
// in the capture's tail only.
func longBody(call int, gemini, stream bool) []byte {
	return answer(call, gemini, stream, false, "stop", 200, "\r\n")
}

// answer writes an answer of parts pieces of text, ending with finish (the
// OpenAI name: "stop" or "content_filter"), streams framed with eol.
func answer(call int, gemini, stream, ints bool, finish string, parts int, eol string) []byte {
	var b bytes.Buffer
	geminiFinish := map[string]string{"stop": `"STOP"`, "content_filter": `"SAFETY"`}[finish]
	if ints {
		geminiFinish = map[string]string{"stop": "1", "content_filter": "3"}[finish]
	}
	switch {
	case gemini && stream:
		for i := range parts {
			reason := ""
			if i == parts-1 {
				reason = `,"finishReason":` + geminiFinish
			}
			fmt.Fprintf(&b, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"part %d of call %d. \"}],\"role\":\"model\"}%s,\"index\":0}],\"modelVersion\":\"gemini-2.0-flash\",\"responseId\":\"r-%d\"}"+eol+eol, i, call, reason, call)
		}
	case gemini:
		fmt.Fprintf(&b, `{"candidates":[{"content":{"parts":[{"text":"answer to call %d%s"}],"role":"model"},"finishReason":%s,"index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4,"totalTokenCount":9},"modelVersion":"gemini-2.0-flash","responseId":"r-%d"}`,
			call, strings.Repeat(" and more", 8*parts), geminiFinish, call)
	case stream:
		for i := range parts {
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"},\"finish_reason\":null}]}"+eol+eol, call, i)
		}
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}"+eol+eol, call, finish)
		b.WriteString("data: [DONE]" + eol + eol)
	default:
		fmt.Fprintf(&b, `{"id":"chatcmpl-%d","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"answer to call %d%s"},"finish_reason":%q}],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}}`,
			call, call, strings.Repeat(" and more", 8*parts), finish)
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
