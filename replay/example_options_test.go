package replay_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/replay"
)

// recordExample records what calls makes against a provider answering
// with answer, each call's answers in turn, into a cassette in a new
// directory, and returns the cassette's path. The examples replay it.
func recordExample(calls func(client *http.Client, base string), answers ...func(w http.ResponseWriter)) string {
	n := 0
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		answers[min(n, len(answers)-1)](w)
		n++
	}))
	defer provider.Close()
	dir, err := os.MkdirTemp("", "replay-example")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "cassette.jsonl")
	c, err := replay.New(path, replay.WithMode(replay.ModeRecord))
	if err != nil {
		panic(err)
	}
	calls(c.Client(), provider.URL)
	if err := c.Close(); err != nil {
		panic(err)
	}
	return path
}

func answerJSON(status int, header map[string]string, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// chat posts a chat completion request and returns the status and body.
func chat(client *http.Client, base, body string) (int, string, http.Header, error) {
	resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, err
}

// In a test, open the cassette with ForTest: it is closed when the test
// ends, and written when recording (LLMHISTORY_REPLAY=record or once) if
// the test passed. Without the variable it replays, and never calls the
// provider.
func ExampleForTest() {
	testAgent := func(t *testing.T) { // func TestAgent(t *testing.T) in a _test.go file
		cassette := replay.ForTest(t, "testdata/agent.jsonl")
		client := cassette.Client() // or middleware.NewClient(nil, rec.Middleware(), cassette.Middleware())
		_, _, _, err := chat(client, "https://api.openai.com", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`)
		if err != nil {
			t.Fatal(err) // a *replay.MissError says what changed since the recording
		}
	}
	_ = testAgent
}

// A miss on a long value shows both values from just before where they
// differ: here the middle of a long system prompt.
func ExampleMissError() {
	prompt := func(days string) string {
		return strings.Repeat("Answer briefly and politely. ", 6) + "Refunds take " + days + " days. " + strings.Repeat("Never invent an order number. ", 6)
	}
	body := func(days string) string {
		return `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + prompt(days) + `"},{"role":"user","content":"Refund?"}]}`
	}
	path := recordExample(func(client *http.Client, base string) {
		chat(client, base, body("14"))
	}, answerJSON(200, nil, `{"choices":[]}`))
	defer os.RemoveAll(filepath.Dir(path))

	cassette, _ := replay.New(path)
	defer cassette.Close()
	_, _, _, err := chat(cassette.Client(), "https://api.openai.com", body("30"))
	fmt.Println(strings.Split(err.Error(), "\n")[2])
	// Output:
	// body.messages.0.content: recorded …"itely. Refunds take 14 days. Never invent an order number. Never invent an orde…, got …"itely. Refunds take 30 days. Never invent an order number. Never invent an orde…
}

// A multipart upload (an audio file to transcribe) replays although its
// boundary is new on every request: the parts are compared, not the
// bytes.
func Example_multipart() {
	upload := func(client *http.Client, base string) (string, error) {
		var form bytes.Buffer
		w := multipart.NewWriter(&form) // a random boundary
		w.WriteField("model", "whisper-1")
		f, _ := w.CreateFormFile("file", "hello.wav")
		f.Write([]byte("RIFF\x00\x01\x02\x03WAVE"))
		w.Close()
		resp, err := client.Post(base+"/v1/audio/transcriptions", w.FormDataContentType(), &form)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	path := recordExample(func(client *http.Client, base string) {
		upload(client, base)
	}, answerJSON(200, nil, `{"text":"Hello."}`))
	defer os.RemoveAll(filepath.Dir(path))

	cassette, _ := replay.New(path)
	defer cassette.Close()
	text, err := upload(cassette.Client(), "https://api.openai.com")
	fmt.Println(text, err)
	// Output:
	// {"text":"Hello."} <nil>
}

// WithRetryAfter replays a recorded rate limit with a shorter wait, so
// the client's retry runs at once. (ForTest does this by default.)
func ExampleWithRetryAfter() {
	const request = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`
	path := recordExample(func(client *http.Client, base string) {
		chat(client, base, request) // rate limited: retry after 30 s
		chat(client, base, request) // the retry
	}, answerJSON(429, map[string]string{"Retry-After": "30"}, `{"error":{"type":"rate_limit"}}`),
		answerJSON(200, nil, `{"choices":[]}`))
	defer os.RemoveAll(filepath.Dir(path))

	cassette, _ := replay.New(path, replay.WithRetryAfter(0))
	defer cassette.Close()
	for range 2 {
		status, _, header, _ := chat(cassette.Client(), "https://api.openai.com", request)
		fmt.Println(status, header.Get("Retry-After"))
	}
	// Output:
	// 429 0
	// 200
}

// WithReplayableInteractions answers a call made more often than when it
// was recorded with the recorded answers again.
func ExampleWithReplayableInteractions() {
	const request = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Ping?"}]}`
	path := recordExample(func(client *http.Client, base string) {
		chat(client, base, request)
	}, answerJSON(200, nil, `{"choices":[{"message":{"content":"Pong."}}]}`))
	defer os.RemoveAll(filepath.Dir(path))

	cassette, _ := replay.New(path, replay.WithReplayableInteractions())
	defer cassette.Close()
	for range 3 {
		status, _, _, err := chat(cassette.Client(), "https://api.openai.com", request)
		fmt.Println(status, err)
	}
	// Output:
	// 200 <nil>
	// 200 <nil>
	// 200 <nil>
}

// WithPassthrough sends the requests it picks to the network in replay
// too, unrecorded: here a service of the test's own, next to a replayed
// provider.
func ExampleWithPassthrough() {
	const request = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Weather?"}]}`
	path := recordExample(func(client *http.Client, base string) {
		chat(client, base, request)
	}, answerJSON(200, nil, `{"choices":[{"message":{"content":"Let me check."}}]}`))
	defer os.RemoveAll(filepath.Dir(path))

	weather := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "21 °C")
	}))
	defer weather.Close()

	cassette, _ := replay.New(path, replay.WithPassthrough(func(r *http.Request) bool {
		return r.URL.Path == "/weather"
	}))
	defer cassette.Close()
	client := cassette.Client()
	_, answer, _, _ := chat(client, "https://api.openai.com", request) // replayed
	resp, err := client.Get(weather.URL + "/weather?city=Paris")       // sent
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.Contains(answer, "Let me check."), string(b))
	// Output:
	// true 21 °C
}
