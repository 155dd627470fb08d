package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

func init() {
	register("demo", "run an agent conversation through the recorder (offline by default)", runDemo)
}

const demoAbout = `Demo runs a short agent conversation through real go-openai and genai
clients wrapped by the recorder: several turns on one trace, a 429 retried
and folded into one record, a tool call whose generated code queries
conversation_history, a nested call under it, streamed answers from both
providers, a pasted API key that is redacted, and a failing call.

Each record is printed on standard error as it is made and appended to the
-o file; the evidence report built from that file goes to standard output.

With -provider auto (the default), a provider whose key is set in the
environment (OPENAI_API_KEY, GEMINI_API_KEY) is called for real and the
other is an embedded fake server on loopback; -provider fake never leaves
the machine; -provider real needs both keys. OPENAI_MODEL and GEMINI_MODEL
choose the real models (gpt-4o-mini and gemini-2.5-flash by default), and
OPENAI_BASE_URL and GOOGLE_GEMINI_BASE_URL their endpoints.`

// pastedKey is a key-shaped string the demo's user pastes into a prompt,
// to show that redaction catches it before a record exists.
const pastedKey = "sk-proj-Zx81bQ2mV7nL0pR4tY6uW9eK3sD5fG1hJ8kL2zX4cV6bN0mQ"

func runDemo(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("demo", "[flags]", demoAbout, io)
	mode := fs.String("provider", "auto", "auto, fake or real (see above)")
	path := fs.String("o", "history.jsonl", "the JSONL `file` the records go to (replaced)")
	colorMode := fs.String("color", "auto", "colour on standard error: auto, always or never")
	format := fs.String("format", "markdown", "the closing report: markdown, json, html or none")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "llmhistory demo: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	color, err := useColor(*colorMode, io.err)
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory demo:", err)
		return exitUsage
	}
	switch *format {
	case "markdown", "json", "html", "none":
	default:
		fmt.Fprintf(io.err, "llmhistory demo: -format must be markdown, json, html or none, not %q\n", *format)
		return exitUsage
	}
	d := &demo{say: io.err, con: newConsole(io.err, color), path: *path}
	if err := d.setUp(*mode); err != nil {
		fmt.Fprintln(io.err, "llmhistory demo:", err)
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		return exitFailure
	}
	defer d.tearDown()
	if err := d.converse(ctx); err != nil {
		fmt.Fprintln(io.err, "llmhistory demo:", err)
		return exitFailure
	}
	if err := d.finish(io.out, *format); err != nil {
		fmt.Fprintln(io.err, "llmhistory demo:", err)
		return exitFailure
	}
	return exitOK
}

var errUsage = errors.New("usage")

type demo struct {
	say  io.Writer // the conversation and the records, for people
	con  *console
	path string

	file    *record.JSONL
	rec     *middleware.Recorder
	servers []*httptest.Server

	mu      sync.Mutex
	pending []record.Record // made, not yet shown

	oa      *openai.Client
	oaModel string
	gm      *genai.Client
	gmModel string
	trace   string
}

// setUp starts the fake servers that are needed and builds the clients,
// each with the recorder's client as its HTTP client: the one line an
// application adds.
func (d *demo) setUp(mode string) error {
	oaKey, gmKey := os.Getenv("OPENAI_API_KEY"), os.Getenv("GEMINI_API_KEY")
	if gmKey == "" {
		gmKey = os.Getenv("GOOGLE_API_KEY")
	}
	var realOA, realGM bool
	switch mode {
	case "auto":
		realOA, realGM = oaKey != "", gmKey != ""
	case "fake":
	case "real":
		if oaKey == "" || gmKey == "" {
			return errors.New("-provider real needs OPENAI_API_KEY and GEMINI_API_KEY")
		}
		realOA, realGM = true, true
	default:
		return fmt.Errorf("%w: -provider must be auto, fake or real, not %q", errUsage, mode)
	}

	if err := os.Remove(d.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	file, err := record.OpenJSONL(d.path)
	if err != nil {
		return err
	}
	d.file = file
	d.rec = middleware.NewRecorder(
		middleware.WithSink(file),
		middleware.WithSink(record.SinkFunc(func(_ context.Context, r record.Record) error {
			d.mu.Lock()
			d.pending = append(d.pending, r)
			d.mu.Unlock()
			return nil
		})),
		middleware.WithProgramSource(),
		// Tell the model its history exists, with a preview of the last
		// three calls of the conversation (see HistoryGuidance).
		middleware.WithHistoryPreview(3),
	)
	// Retry inside the recorder: the attempts of one call fold into one
	// record with "attempts" counting them.
	httpClient := middleware.NewClient(nil, d.rec.Middleware(), middleware.Retry(middleware.RetryPolicy{BaseDelay: 50 * time.Millisecond}))

	oaCfg := openai.DefaultConfig(oaKey)
	d.oaModel = envOr("OPENAI_MODEL", openai.GPT4oMini)
	where := "api.openai.com"
	if base := os.Getenv("OPENAI_BASE_URL"); realOA && base != "" {
		// The official SDK's variable: a proxy or a compatible server.
		oaCfg.BaseURL, where = base, base
	}
	if !realOA {
		srv := httptest.NewServer(fakeOpenAI())
		d.servers = append(d.servers, srv)
		oaCfg = openai.DefaultConfig(fakeOpenAIKey)
		oaCfg.BaseURL = srv.URL + "/v1"
		d.oaModel, where = openai.GPT4oMini, "a fake OpenAI server at "+srv.URL
	}
	oaCfg.HTTPClient = httpClient
	d.oa = openai.NewClientWithConfig(oaCfg)

	gmCfg := &genai.ClientConfig{APIKey: gmKey, Backend: genai.BackendGeminiAPI, HTTPClient: httpClient}
	d.gmModel = envOr("GEMINI_MODEL", "gemini-2.5-flash")
	gwhere := "generativelanguage.googleapis.com"
	if base := os.Getenv("GOOGLE_GEMINI_BASE_URL"); realGM && base != "" {
		// genai reads it too; set here so that the banner tells the truth.
		gmCfg.HTTPOptions.BaseURL, gwhere = base, base
	}
	if !realGM {
		srv := httptest.NewServer(fakeGemini())
		d.servers = append(d.servers, srv)
		gmCfg.APIKey = fakeGeminiKey
		gmCfg.HTTPOptions.BaseURL = srv.URL
		d.gmModel, gwhere = "gemini-2.5-flash", "a fake Gemini server at "+srv.URL
	}
	d.gm, err = genai.NewClient(context.Background(), gmCfg)
	if err != nil {
		return err
	}
	d.trace = "demo-" + strings.ToLower(middleware.NewCallID()[20:])
	fmt.Fprintf(d.say, "OpenAI: %s (%s)\nGemini: %s (%s)\nrecords: %s, trace %s\n\n", where, d.oaModel, gwhere, d.gmModel, d.path, d.trace)
	return nil
}

func (d *demo) tearDown() {
	if d.rec != nil {
		d.rec.Close()
	}
	for _, s := range d.servers {
		s.Close()
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// converse is the agent conversation. Every call goes through the
// recorder; after each, the demo waits for its record so that the screen
// reads in order.
func (d *demo) converse(ctx context.Context) error {
	ctx = middleware.WithTrace(ctx, d.trace)
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: "You are a concise travel assistant."}}

	ask := func(q string) error {
		d.line("user", q)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: q})
		resp, err := d.oa.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: d.oaModel, Messages: msgs})
		if err != nil {
			return err
		}
		msgs = append(msgs, resp.Choices[0].Message)
		d.line("assistant", resp.Choices[0].Message.Content)
		return d.flush()
	}

	// 1. A turn, and 2. one the fake server first answers with a 429.
	if err := ask("I'm going to Lisbon in May. What should I pack?"); err != nil {
		return err
	}
	d.note("the next call gets a 429 first; Retry waits and tries again, and the record says attempts=2")
	if err := ask("And what's the weather like then?"); err != nil {
		return err
	}

	// 3. A tool call whose generated code queries conversation_history.
	q := "Summarise what I've asked so far."
	d.line("user", q)
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: q})
	toolCallID := middleware.NewCallID()
	resp, err := d.oa.CreateChatCompletion(middleware.WithCallID(ctx, toolCallID), openai.ChatCompletionRequest{
		Model: d.oaModel, Messages: msgs, Tools: []openai.Tool{runRubyTool},
		ToolChoice: "required",
	})
	if err != nil {
		return err
	}
	if err := d.flush(); err != nil {
		return err
	}
	msg := resp.Choices[0].Message
	msgs = append(msgs, msg)
	if len(msg.ToolCalls) == 0 {
		d.note("the model answered without calling the tool: " + clip(msg.Content, 100))
	}
	for _, tc := range msg.ToolCalls {
		d.line("tool call", tc.Function.Name+" "+clip(tc.Function.Arguments, 120))
		// 4. The tool runs. It reads the recorded history, as the
		// generated code asks, and makes a nested call under the tool call.
		result, err := d.runTool(middleware.WithParent(ctx, toolCallID))
		if err != nil {
			return err
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: result})
	}

	// 5. The answer, streamed.
	if err := d.streamOpenAI(ctx, msgs); err != nil {
		return err
	}

	// 6. A streamed Gemini call on the same trace.
	if err := d.streamGemini(ctx, "Translate this packing advice into Portuguese, in one sentence: light layers, a rain jacket, comfortable shoes."); err != nil {
		return err
	}

	// 7. A pasted key: redacted before the record exists.
	d.note("the user pastes an API key; the record keeps [REDACTED] in its place")
	if err := ask("Is this key still valid? " + pastedKey); err != nil {
		return err
	}

	// 8. A call that fails: recorded with its error type, and the error
	// reaches the caller untouched.
	d.note("a call to a model that does not exist fails with 404: one record, error_type not_found")
	_, err = d.oa.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-does-not-exist", Messages: msgs[len(msgs)-1:]})
	if err == nil {
		return errors.New("a call to an unknown model succeeded")
	}
	d.line("error", clip(err.Error(), 120))
	return d.flush()
}

var runRubyTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name:        "run_ruby",
	Description: "Run Ruby code. The conversation so far is available as conversation_history, an array of hashes with :speaker, :method_name, :args and :outcome_summary.",
	Parameters:  []byte(`{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}`),
}}

// runTool stands in for the sandbox that would run the generated Ruby:
// it does what the code asks (the last three things the user said) on the
// recorder's history, then asks Gemini, as the tool, to condense them.
func (d *demo) runTool(ctx context.Context) (string, error) {
	asked := 0
	for _, r := range d.rec.History().Trace(d.trace) {
		if r.Speaker == record.SpeakerUser {
			asked++
		}
	}
	asked = min(asked, 3)
	ctx = middleware.WithSpeaker(ctx, record.SpeakerTool)
	prompt := fmt.Sprintf("Condense into one line the %d questions a traveller asked about Lisbon in May: what to pack, and the weather.", asked)
	d.line("tool → gemini", prompt)
	resp, err := d.gm.Models.GenerateContent(ctx, d.gmModel, genai.Text(prompt), nil)
	if err != nil {
		return "", err
	}
	d.line("gemini", resp.Text())
	if err := d.flush(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d questions: %s", asked, resp.Text()), nil
}

func (d *demo) streamOpenAI(ctx context.Context, msgs []openai.ChatCompletionMessage) error {
	stream, err := d.oa.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: d.oaModel, Messages: msgs, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return err
	}
	defer stream.Close()
	fmt.Fprintf(d.say, "%14s ▸ ", "assistant")
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, c := range chunk.Choices {
			fmt.Fprint(d.say, c.Delta.Content)
		}
	}
	fmt.Fprintln(d.say, "  (streamed)")
	stream.Close()
	return d.flush()
}

func (d *demo) streamGemini(ctx context.Context, q string) error {
	d.line("user → gemini", q)
	fmt.Fprintf(d.say, "%14s ▸ ", "gemini")
	for chunk, err := range d.gm.Models.GenerateContentStream(ctx, d.gmModel, genai.Text(q), nil) {
		if err != nil {
			return err
		}
		fmt.Fprint(d.say, chunk.Text())
	}
	fmt.Fprintln(d.say, "  (streamed)")
	return d.flush()
}

// flush waits for the records of the calls made so far and shows them,
// after the conversation lines they belong to rather than in the middle of
// a streamed answer.
func (d *demo) flush() error {
	err := d.rec.Flush()
	d.mu.Lock()
	shown := d.pending
	d.pending = nil
	d.mu.Unlock()
	for _, r := range shown {
		d.con.print(r)
	}
	return err
}

// line shows one turn of the conversation, redacted like a record: the
// screen may be shared or its output kept in a file.
func (d *demo) line(who, text string) {
	fmt.Fprintf(d.say, "%14s ▸ %s\n", who, middleware.Redact(strings.TrimSpace(text)))
}

func (d *demo) note(text string) {
	fmt.Fprintf(d.say, "\n  # %s\n", text)
}

// finish closes the recorder (every record written), checks that no key
// reached the file, and prints the evidence report built from the file.
func (d *demo) finish(out io.Writer, format string) error {
	err := d.rec.Close()
	d.rec = nil
	for _, r := range d.pending {
		d.con.print(r)
	}
	if err != nil {
		return fmt.Errorf("closing the recorder: %w", err)
	}
	data, err := os.ReadFile(d.path)
	if err != nil {
		return err
	}
	for _, key := range []string{pastedKey, fakeOpenAIKey, fakeGeminiKey, os.Getenv("OPENAI_API_KEY"), os.Getenv("GEMINI_API_KEY"), os.Getenv("GOOGLE_API_KEY")} {
		if len(key) >= 8 && bytes.Contains(data, []byte(key)) {
			return fmt.Errorf("an API key reached %s: this is a bug, please report it", d.path)
		}
	}
	n := bytes.Count(data, []byte{'\n'})
	fmt.Fprintf(d.say, "\n%d records in %s; no API key in it. Follow it with: llmhistory tail %s\n\n", n, d.path, d.path)
	if format == "none" {
		return nil
	}
	rep, err := report.Build(context.Background(), report.Options{}, report.Source{Name: d.path, R: bytes.NewReader(data)})
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return rep.WriteJSON(out)
	case "html":
		return rep.WriteHTML(out)
	}
	return rep.WriteMarkdown(out)
}
