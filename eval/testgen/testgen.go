package testgen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
	"github.com/llmhistory/llmhistory/replay"
)

// SDK names a client library a generated test drives.
type SDK string

// The SDKs a test is generated for.
const (
	GoOpenAI  SDK = "go-openai"        // github.com/sashabaranov/go-openai
	OpenAIGo  SDK = "openai-go"        // github.com/openai/openai-go/v3
	Anthropic SDK = "anthropic-sdk-go" // github.com/anthropics/anthropic-sdk-go
	GenAI     SDK = "genai"            // google.golang.org/genai
)

// ErrNoCalls is returned by [Generate] when none of the records given is
// a call it can turn into a test.
var ErrNoCalls = errors.New("testgen: no call to test")

// Options configure [Generate]. The zero value is the defaults.
type Options struct {
	// Package is the generated file's package name; default "replaytest".
	Package string
	// Test is the test function's name; default Test and the trace's ID
	// made a Go name ("TestTraceDemo1").
	Test string
	// Cassette is the cassette's path as the test opens it, relative to
	// the package directory; default "testdata/" and the trace's ID, with
	// ".jsonl".
	Cassette string
	// OpenAI is the SDK that made the OpenAI calls: a record does not say
	// whether go-openai or openai-go sent a chat completion (both send
	// the same JSON). Default GoOpenAI.
	OpenAI SDK
	// Command is the command line that generated the files, written in
	// the test's header so that a reader can make them again.
	Command string
}

// Output is what [Generate] writes: a Go test file and its cassette.
type Output struct {
	Test     []byte // gofmt-clean Go source
	Cassette []byte // a replay cassette (JSON Lines)
	Calls    int    // the calls the test makes
	// Skipped says, for each record left out, why: a provider or method
	// no renderer writes (Bedrock, embeddings), args cut when recorded.
	Skipped []string
}

// Generate turns the records of a conversation, oldest first, into a
// cassette and a Go test that replays the calls through their SDKs.
func Generate(records []record.Record, opts Options) (*Output, error) {
	if opts.Package == "" {
		opts.Package = "replaytest"
	}
	if opts.OpenAI == "" {
		opts.OpenAI = GoOpenAI
	}
	if opts.OpenAI != GoOpenAI && opts.OpenAI != OpenAIGo {
		return nil, fmt.Errorf("testgen: the OpenAI SDK is %s or %s, not %q", GoOpenAI, OpenAIGo, opts.OpenAI)
	}
	if !isIdent(opts.Package) {
		return nil, fmt.Errorf("testgen: package %q is not a Go name", opts.Package)
	}
	trace := ""
	if len(records) > 0 {
		trace = records[0].TraceID
	}
	if opts.Test == "" {
		opts.Test = "Test" + goName(cmpOr(trace, "Conversation"))
	}
	if !isIdent(opts.Test) || !strings.HasPrefix(opts.Test, "Test") {
		return nil, fmt.Errorf("testgen: test name %q is not a Go test name (TestXxx)", opts.Test)
	}
	if opts.Cassette == "" {
		opts.Cassette = "testdata/" + fileName(cmpOr(trace, "conversation")) + ".jsonl"
	}
	g := &gen{opts: opts, sdks: map[SDK]bool{}}
	out := &Output{}
	for i := range records {
		r := &records[i]
		c, err := g.call(r)
		if err != nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("call %d (%s %s): %v", i+1, r.CallID, r.MethodName, err))
			continue
		}
		g.calls = append(g.calls, c)
	}
	if len(g.calls) == 0 {
		return out, fmt.Errorf("%w: %d record(s), none renderable: %s", ErrNoCalls, len(records), strings.Join(out.Skipped, "; "))
	}
	var its []replay.Interaction
	for _, c := range g.calls {
		its = append(its, c.interactions...)
	}
	var cas bytes.Buffer
	if err := replay.Write(&cas, its); err != nil {
		return nil, fmt.Errorf("testgen: %w", err)
	}
	src := g.source(trace, out.Skipped)
	formatted, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("testgen: the generated test does not parse (a bug): %w\n%s", err, src)
	}
	out.Test, out.Cassette, out.Calls = formatted, cas.Bytes(), len(g.calls)
	return out, nil
}

type gen struct {
	opts  Options
	sdks  map[SDK]bool
	calls []*call
}

// call is one recorded call, rendered.
type call struct {
	r            *record.Record
	sdk          SDK
	method       string
	stream       bool
	model        string
	body         []byte // the request's JSON
	interactions []replay.Interaction
	answer       providers.Answer
	failStatus   int // the final attempt's status, when the call failed
	failed       bool
}

// A provider's renderer, its host, and the SDK that speaks it.
func (g *gen) provider(method string) (providers.Renderer, string, SDK, error) {
	switch prefix, _, _ := strings.Cut(method, "."); prefix {
	case "openai":
		return openai.Provider{}, "api.openai.com", g.opts.OpenAI, nil
	case "anthropic":
		return anthropic.Provider{}, "api.anthropic.com", Anthropic, nil
	case "gemini":
		return gemini.Provider{}, "generativelanguage.googleapis.com", GenAI, nil
	}
	return nil, "", "", fmt.Errorf("%w: no renderer for %s", providers.ErrNotRenderable, method)
}

func (g *gen) call(r *record.Record) (*call, error) {
	if slices.Contains(r.Truncated, "args") || slices.Contains(r.Truncated, "kwargs") || slices.Contains(r.Truncated, "output_message") {
		return nil, fmt.Errorf("%w: the record was cut to fit (%s)", providers.ErrNotRenderable, strings.Join(r.Truncated, ", "))
	}
	rend, host, sdk, err := g.provider(r.MethodName)
	if err != nil {
		return nil, err
	}
	msgs := record.Messages(r.Args)
	path, body, err := rend.RenderRequest(r.MethodName, msgs, r.Kwargs)
	if err != nil {
		return nil, err
	}
	c := &call{r: r, sdk: sdk, method: r.MethodName, body: []byte(redact.Secrets(string(body))), answer: providers.AnswerOf(r)}
	c.stream = isStream(r)
	c.model = kwargString(r.Kwargs, "model")
	u, err := url.Parse("https://" + host + path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", providers.ErrNotRenderable, err)
	}
	req := replay.Request{Method: http.MethodPost, URL: u, Header: http.Header{"Content-Type": {"application/json"}}, Body: c.body}
	// The attempts before the last failed: a rate limit each, answered at
	// once, which the retry in the test's client takes as the recorder's
	// Retry did.
	for range max(r.Attempts-1, 0) {
		b := rend.RenderError(http.StatusTooManyRequests, "Rate limit reached (recorded attempt; replayed by llmhistory testgen)")
		c.interactions = append(c.interactions, replay.Interaction{Request: req, Response: &replay.Response{
			Status:        http.StatusTooManyRequests,
			Header:        http.Header{"Content-Type": {"application/json"}, "Retry-After": {"0"}},
			ContentLength: int64(len(b)), Body: b}})
	}
	last := replay.Interaction{Request: req}
	switch {
	case r.Outcome.OK:
		ctype, frames, err := rend.RenderResponse(r.MethodName, c.answer, c.stream)
		if err != nil {
			return nil, err
		}
		resp := &replay.Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {ctype}}}
		for i := range frames {
			frames[i] = []byte(redact.Secrets(string(frames[i])))
		}
		if c.stream {
			resp.Stream, resp.ContentLength = true, -1
			for _, f := range frames {
				resp.Frames = append(resp.Frames, replay.Frame{Data: f})
			}
		} else {
			resp.Body, resp.ContentLength = frames[0], int64(len(frames[0]))
		}
		last.Response = resp
	case r.Outcome.HTTPStatus >= 400:
		c.failed, c.failStatus = true, r.Outcome.HTTPStatus
		b := rend.RenderError(r.Outcome.HTTPStatus, redact.Secrets(cmpOr(r.ErrorMessage, http.StatusText(r.Outcome.HTTPStatus))))
		last.Response = &replay.Response{Status: r.Outcome.HTTPStatus, Header: http.Header{"Content-Type": {"application/json"}},
			ContentLength: int64(len(b)), Body: b}
	default:
		// A call that got no response (a refused connection, a canceled
		// call): its transport error, replayed.
		c.failed = true
		last.Err = redact.Secrets(cmpOr(r.ErrorMessage, "connection failed"))
	}
	c.interactions = append(c.interactions, last)
	g.sdks[sdk] = true
	return c, nil
}

// isStream says whether the record's call asked for a stream: a
// streaming method (Gemini's), or "stream": true in its kwargs.
func isStream(r *record.Record) bool {
	if r.MethodName == gemini.MethodStreamGenerateContent {
		return true
	}
	return bytes.Contains(compact(r.Kwargs), []byte(`"stream":true`))
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if jsonCompact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

func kwargString(kwargs []byte, key string) string {
	var kw map[string]any
	jsonUnmarshal(kwargs, &kw)
	s, _ := kw[key].(string)
	return s
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// goName makes s a Go name's tail: its words, each capitalized
// ("demo-6hdx0t-1" → "Demo6hdx0t1").
func goName(s string) string {
	var b strings.Builder
	for _, w := range nonWord.Split(s, -1) {
		if w == "" {
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	if b.Len() == 0 || unicode.IsDigit(rune(b.String()[0])) {
		return "Trace" + b.String()
	}
	return "Trace" + b.String()
}

// fileName makes s a safe file name.
func fileName(s string) string {
	s = strings.Trim(nonWord.ReplaceAllString(s, "-"), "-")
	if s == "" {
		return "conversation"
	}
	return s
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// goString writes s as a Go string literal: raw when it can be, so that
// a request's JSON reads as JSON.
func goString(s string) string {
	if !strings.ContainsAny(s, "`\r") && strconv.CanBackquote(s) {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}
