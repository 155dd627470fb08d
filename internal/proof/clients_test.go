package proof

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	goopenai "github.com/sashabaranov/go-openai"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
)

// A soak call is made by one of these clients, chosen by the call's number.
// Each covers a different way of retrying:
const (
	kindHTTP           = iota // net/http, middleware.Retry inside the recorder
	kindGoOpenAI              // go-openai, middleware.Retry inside the recorder
	kindGoOpenAILoop          // go-openai, an application retry loop outside the recorder
	kindGoOpenAIStream        // go-openai streaming, middleware.Retry inside the recorder
	kindGenai                 // genai, its own retries (HTTPOptions.RetryOptions) outside the recorder
	kindOpenAISDK             // openai-go, its own retries (WithMaxRetries) outside the recorder
	numKinds
)

var kindNames = [numKinds]string{"net/http+Retry", "go-openai+Retry", "go-openai+app-loop", "go-openai-stream+Retry", "genai+own-retry", "openai-go+own-retry"}

// callKey holds the logical call's number in a context; tagCall puts it on
// every attempt as the X-Test-Call header.
type callKey struct{}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// brokenBelow stands for a broken middleware below the recorder: it turns
// a response the server marked into a nil response with a nil error, which
// breaks the RoundTripper contract.
func brokenBelow(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil && resp.Header.Get(nilHeader) != "" {
			resp.Body.Close()
			return nil, nil
		}
		return resp, err
	})
}

// tagCall is the outermost middleware: it marks each attempt with the call
// it belongs to, on a clone, as the RoundTripper contract asks.
func tagCall(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		n, ok := req.Context().Value(callKey{}).(int)
		if !ok {
			return next.RoundTrip(req)
		}
		r2 := req.Clone(req.Context())
		r2.Header.Set(callHeader, strconv.Itoa(n))
		return next.RoundTrip(r2)
	})
}

// soakClients are the clients of one run, all against one fault server,
// all through the recorder when there is one.
type soakClients struct {
	base     *http.Transport
	url      string
	retry    *http.Client // recorder, then middleware.Retry
	plain    *http.Client // recorder, then a broken middleware: retries are the client's own
	goOpenAI *goopenai.Client
	goLoop   *goopenai.Client
	genai    *genai.Client
	sdk      openaisdk.Client
}

// innerRetry is the middleware.Retry policy of the soak: quick, so the
// soak does not sleep, and honouring the server's retry-after-ms.
var innerRetry = middleware.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond, MaxRetryAfter: 2 * time.Second}

const (
	testOpenAIKey = "sk-proof-0123456789abcdefghijklmnop"
	testGeminiKey = "AIzaSyPROOF-0123456789abcdefghijklmnopq"
	testAzureKey  = "00112233445566778899aabbccddeeff" // not key-shaped: only its literal value can be found
)

// The net/http calls take turns among these requests (call n uses
// variant (n / numKinds) % numHTTPVariants).
const (
	httpChat         = iota // OpenAI chat, a body with GetBody
	httpChatNoRewind        // OpenAI chat, a body without GetBody: streamed as read
	httpGeminiInts          // Gemini generateContent with enum-encoding=int and an Azure-style api-key
	httpKeyInPath           // an endpoint no provider knows, with a Google key in its path
	numHTTPVariants
)

// httpVariant is the request call n makes when it is a net/http call.
func httpVariant(n int) int { return (n / numKinds) % numHTTPVariants }

func newSoakClients(t testing.TB, url string, rec *middleware.Recorder) *soakClients {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 128 // 64 callers: keep their connections
	var recMW middleware.Middleware
	if rec != nil {
		recMW = rec.Middleware()
	}
	c := &soakClients{
		base:  base,
		url:   url,
		retry: &http.Client{Transport: middleware.Chain(base, tagCall, recMW, middleware.Retry(innerRetry))},
		plain: &http.Client{Transport: middleware.Chain(base, tagCall, recMW, brokenBelow)},
	}
	cfg := goopenai.DefaultConfig(testOpenAIKey)
	cfg.BaseURL = url + "/v1"
	cfg.HTTPClient = c.retry
	c.goOpenAI = goopenai.NewClientWithConfig(cfg)
	cfg.HTTPClient = c.plain
	c.goLoop = goopenai.NewClientWithConfig(cfg)

	attempts, delay, maxDelay, jitter := int32(3), 0.001, 0.004, 0.0
	var err error
	c.genai, err = genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     testGeminiKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: c.plain,
		HTTPOptions: genai.HTTPOptions{BaseURL: url, RetryOptions: &genai.HTTPRetryOptions{
			Attempts: &attempts, InitialDelay: &delay, MaxDelay: &maxDelay, Jitter: &jitter,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.sdk = openaisdk.NewClient(
		option.WithBaseURL(url+"/v1"),
		option.WithAPIKey(testOpenAIKey),
		option.WithHTTPClient(c.plain),
		option.WithMaxRetries(2),
		option.WithMaxRetryDelay(4*time.Millisecond), // the default backoff starts at half a second
	)
	return c
}

func (c *soakClients) close() { c.base.CloseIdleConnections() }

// call makes logical call n with the client its number picks and returns
// how it ended, in a form that can be compared across runs: the answer,
// or the class of the error with addresses taken out.
func (c *soakClients) call(ctx context.Context, n int) string {
	ctx = context.WithValue(ctx, callKey{}, n)
	prompt := fmt.Sprintf("Hello from call %d", n) // no two calls send the same body
	msgs := []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: prompt}}
	switch n % numKinds {
	case kindHTTP:
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}`, prompt)
		url := c.url + "/v1/chat/completions"
		switch httpVariant(n) {
		case httpGeminiInts:
			body = fmt.Sprintf(`{"contents":[{"role":"user","parts":[{"text":%q}]}]}`, prompt)
			url = c.url + "/v1beta/models/gemini-2.0-flash:generateContent?%24alt=json%3Benum-encoding%3Dint"
		case httpKeyInPath:
			url = c.url + "/gateway/" + testGeminiKey + "/v1/rerank"
		}
		var rd io.Reader = strings.NewReader(body)
		if httpVariant(n) == httpChatNoRewind {
			rd = io.NopCloser(rd) // hides the type: no GetBody
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, rd)
		if err != nil {
			return "bad request: " + err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testOpenAIKey)
		if httpVariant(n) == httpGeminiInts {
			req.Header.Set("Api-Key", testAzureKey)
		}
		if n%2 == 0 {
			// Ask for gzip ourselves: the body comes back encoded, and the
			// recorder must decode its own copy.
			req.Header.Set("Accept-Encoding", "gzip")
		}
		client := c.retry
		if httpVariant(n) == httpChatNoRewind {
			// Retry cannot resend a body without GetBody, and the recorder
			// can once it has read it: without retries inside, both runs
			// make the same attempts.
			client = c.plain
		}
		resp, err := client.Do(req)
		if err != nil {
			return "error: " + classify(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fmt.Sprintf("%d %q %x read: %s", resp.StatusCode, resp.Header.Get("Content-Encoding"), sha256.Sum256(b), classify(err))

	case kindGoOpenAI:
		resp, err := c.goOpenAI.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
		return chatResult(resp, err)

	case kindGoOpenAILoop:
		// go-openai has no retries of its own: the application retries
		// what looks transient, the same request again.
		var resp goopenai.ChatCompletionResponse
		var err error
		for try := 1; ; try++ {
			resp, err = c.goLoop.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
			if err == nil || try == 3 || ctx.Err() != nil || !transient(err) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		return fmt.Sprintf("%s (loop)", chatResult(resp, err))

	case kindGoOpenAIStream:
		s, err := c.goOpenAI.CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs, Stream: true})
		if err != nil {
			return "stream error: " + classify(err)
		}
		defer s.Close()
		var text strings.Builder
		for {
			chunk, err := s.Recv()
			if err == io.EOF {
				return "stream: " + short(text.String())
			}
			if err != nil {
				return fmt.Sprintf("stream: %s then %s", short(text.String()), classify(err))
			}
			for _, ch := range chunk.Choices {
				text.WriteString(ch.Delta.Content)
			}
		}

	case kindGenai:
		resp, err := c.genai.Models.GenerateContent(ctx, "gemini-2.0-flash", genai.Text(prompt), nil)
		if err != nil {
			return "genai error: " + classify(err)
		}
		return "genai: " + resp.ResponseID + " " + short(resp.Text())

	case kindOpenAISDK:
		resp, err := c.sdk.Chat.Completions.New(ctx, openaisdk.ChatCompletionNewParams{
			Model:    "gpt-4o-mini",
			Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage(prompt)},
		})
		if err != nil {
			return "openai-go error: " + classify(err)
		}
		return "openai-go: " + resp.ID + " " + short(resp.Choices[0].Message.Content)
	}
	panic("unreachable")
}

func chatResult(resp goopenai.ChatCompletionResponse, err error) string {
	if err != nil {
		return "go-openai error: " + classify(err)
	}
	if len(resp.Choices) == 0 {
		return "go-openai: no choices"
	}
	return "go-openai: " + resp.ID + " " + short(resp.Choices[0].Message.Content)
}

// short keeps a long answer's result line short: its length and hash.
func short(s string) string {
	if len(s) <= 80 {
		return s
	}
	return fmt.Sprintf("%d bytes %x", len(s), sha256.Sum256([]byte(s)))
}

// transient is the application's retry rule around go-openai: rate
// limits, server errors and broken connections.
func transient(err error) bool {
	var api *goopenai.APIError
	if errors.As(err, &api) {
		return api.HTTPStatusCode == 429 || api.HTTPStatusCode >= 500
	}
	var req *goopenai.RequestError
	if errors.As(err, &req) {
		return req.HTTPStatusCode == 429 || req.HTTPStatusCode >= 500
	}
	return classify(err) == "conn"
}

var addrRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// classify names an error the same way in both runs: the API error as the
// SDK parsed it, or the kind of failure, with ports taken out.
func classify(err error) string {
	if err == nil {
		return "nil"
	}
	var (
		goAPI  *goopenai.APIError
		goReq  *goopenai.RequestError
		gAPI   genai.APIError
		sdkAPI *openaisdk.Error
	)
	switch {
	case errors.As(err, &goAPI):
		return fmt.Sprintf("api %d %v %s", goAPI.HTTPStatusCode, goAPI.Code, goAPI.Message)
	case errors.As(err, &goReq):
		return fmt.Sprintf("request %d %s", goReq.HTTPStatusCode, addrRE.ReplaceAllString(goReq.Error(), "ADDR"))
	case errors.As(err, &gAPI):
		return fmt.Sprintf("api %d %s %s", gAPI.Code, gAPI.Status, gAPI.Message)
	case errors.As(err, &sdkAPI):
		return fmt.Sprintf("api %d %s", sdkAPI.StatusCode, sdkAPI.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "conn"
	}
	return "other: " + addrRE.ReplaceAllString(err.Error(), "ADDR")
}
