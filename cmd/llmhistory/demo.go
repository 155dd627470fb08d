package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	openai "github.com/sashabaranov/go-openai"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("demo", "run an agent conversation through the recorder (offline by default)", runDemo)
}

const demoAbout = `Demo runs a short agent conversation through real go-openai, genai and
Anthropic SDK clients wrapped by one recorder: several turns on one trace,
a 429 retried and folded into one record, a tool call whose generated code
queries conversation_history, a nested call under it, streamed answers, a
Claude turn, a pasted API key that is redacted, and a failing call.

The recorder runs with the history preview and program source on, so
every call carries the history guidance and the tool call keeps its code.
Each record is printed on standard error after the conversation lines it
belongs to (errors red, retries yellow, history reads magenta; on a
terminal every line fits its width), and appended to the -o file; the
demo checks that no key reached the file. The -o file is replaced only if
an earlier run of the demo wrote it: any other file is left alone, and
the demo stops before making a call. The evidence report built from that
file goes to -report: by default standard output, or, when standard
output is a terminal, a file beside the history whose name is printed (so
the conversation stays on the screen). The last line is a command that
follows the file, as you can run it.

With -provider auto (the default), a provider whose key is set in the
environment (OPENAI_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY) is called
for real and the others are embedded fake servers on loopback; -provider
fake never leaves the machine; -provider real needs the three keys.
OPENAI_MODEL, GEMINI_MODEL and ANTHROPIC_MODEL choose the real models
(gpt-4o-mini, gemini-2.5-flash and ` + defaultClaude + ` by default), and
OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL and ANTHROPIC_BASE_URL their
endpoints (a proxy, a compatible server). Against a real model the 429
cannot be arranged, and the model may answer without calling the tool:
the demo says so and goes on.

Each record is priced with the module's price table, or with the file
-prices names: LiteLLM's model_prices_and_context_window.json, newer than
the module's table, or a file of your own prices added to it (see
llmhistory report -h). LLMHISTORY_PRICES names such a file for the demo
and for every program that records; a file that cannot be used stops the
demo before it starts.

When OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
is set, the recorder also exports the conversation over OTLP to that
Collector, as spans (and GenAI metrics, unless only the traces endpoint is
set), with the other standard variables honoured (as llmhistory export
does; service llmhistory-demo unless OTEL_SERVICE_NAME names one), and the
demo says how many spans went where.`

// defaultClaude is the Claude model the demo asks when ANTHROPIC_MODEL
// does not say: the newest Sonnet the built-in price table prices (the
// SDK's newest, claude-sonnet-5-5, came after the table), so that the
// demo's report has every answered call priced. TestDemoIsPriced holds it.
const defaultClaude = anthropic.ModelClaudeSonnet5

// pastedKey is a key-shaped string the demo's user pastes into a prompt,
// to show that redaction catches it before a record exists.
const pastedKey = "sk-proj-Zx81bQ2mV7nL0pR4tY6uW9eK3sD5fG1hJ8kL2zX4cV6bN0mQ"

// demoTracePrefix starts the trace id of every demo run: how the demo
// knows a history file (and its report) as one it wrote.
const demoTracePrefix = "demo-"

func runDemo(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("demo", "[flags]", demoAbout, io)
	mode := fs.String("provider", "auto", "auto, fake or real (see above)")
	path := fs.String("o", "history.jsonl", "the JSONL `file` the records go to (replaced only if the demo wrote it)")
	colorMode := fs.String("color", "auto", "colour on standard error: auto, always or never")
	format := fs.String("format", "markdown", "the closing report: markdown, json, html or none")
	reportPath := fs.String("report", "", "where the report goes: a `file`, or - for standard output (default: standard output, or a file beside -o when standard output is a terminal)")
	pricesPath := fs.String("prices", "", "price the records with `FILE`: LiteLLM's price file, or your own prices added to the module's table (see llmhistory report -h)")
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
	// Read before anything is written: a wrong price file fails at once.
	var prices *cost.Table
	if *pricesPath != "" {
		prices, err = loadPrices(*pricesPath)
	} else {
		prices, err = envPrices()
	}
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory demo:", err)
		return exitFailure
	}
	width := termWidth(io.err)
	con := newConsole(io.err, color, width)
	con.noTrace = true // the banner names the demo's one trace
	d := &demo{say: io.err, con: con, width: width, path: *path, format: *format, prices: prices}
	switch {
	case *format == "none":
	case *reportPath == "-" || (*reportPath == "" && !isTerminal(io.out)):
		d.reportTo = io.out
	case *reportPath == "":
		d.reportPath = reportBeside(*path, *format)
	default:
		d.reportPath = *reportPath
	}
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
	if err := d.finish(); err != nil {
		fmt.Fprintln(io.err, "llmhistory demo:", err)
		return exitFailure
	}
	return exitOK
}

var errUsage = errors.New("usage")

// reportBeside names the report of a history file: history.jsonl gives
// history-report.md (or .json, .html).
func reportBeside(history, format string) string {
	ext := map[string]string{"markdown": ".md", "json": ".json", "html": ".html"}[format]
	return strings.TrimSuffix(history, filepath.Ext(history)) + "-report" + ext
}

type demo struct {
	say    io.Writer // the conversation and the records, for people
	con    *console
	width  int // of the screen, 0 when not a terminal
	path   string
	format string

	reportTo   io.Writer // the report's stream, or nil
	reportPath string    // or its file, or ""

	prices *cost.Table // from -prices or LLMHISTORY_PRICES; nil: the module's table

	file    *record.JSONL
	made    bool   // the demo created path: it may remove it
	db      string // the SQLite store beside path, "" when none
	store   *store.Store
	rec     *middleware.Recorder
	servers []*httptest.Server
	otel    *otlpSink // the OTLP export, when an endpoint is set

	mu      sync.Mutex
	pending []record.Record // made, not yet shown

	oa      *openai.Client
	oaModel string
	gm      *genai.Client
	gmModel string
	an      anthropic.Client
	anModel string
	trace   string
}

// setUp checks that no file the demo did not make is in its way, starts
// the fake servers that are needed and builds the clients, each with the
// recorder's client as its HTTP client: the one line an application adds.
func (d *demo) setUp(mode string) error {
	oaKey, gmKey, anKey := os.Getenv("OPENAI_API_KEY"), os.Getenv("GEMINI_API_KEY"), os.Getenv("ANTHROPIC_API_KEY")
	if gmKey == "" {
		gmKey = os.Getenv("GOOGLE_API_KEY")
	}
	var realOA, realGM, realAN bool
	switch mode {
	case "auto":
		realOA, realGM, realAN = oaKey != "", gmKey != "", anKey != ""
	case "fake":
	case "real":
		if oaKey == "" || gmKey == "" || anKey == "" {
			return errors.New("-provider real needs OPENAI_API_KEY, GEMINI_API_KEY and ANTHROPIC_API_KEY")
		}
		realOA, realGM, realAN = true, true, true
	default:
		return fmt.Errorf("%w: -provider must be auto, fake or real, not %q", errUsage, mode)
	}

	if err := replaceable(d.path, isDemoHistory); err != nil {
		return err
	}
	if d.reportPath != "" {
		if err := replaceable(d.reportPath, func(data []byte) bool { return isDemoReport(data, d.path) }); err != nil {
			return err
		}
	}
	target, export, err := demoOTLP()
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := os.Remove(d.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	file, err := record.OpenJSONL(d.path)
	if err != nil {
		return err
	}
	d.file, d.made = file, true
	opts := []middleware.Option{
		middleware.WithSink(file),
	}
	if err := d.openStore(); err != nil {
		return err
	}
	if d.store != nil {
		opts = append(opts, middleware.WithSink(d.store))
	}
	opts = append(opts,
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
	if d.prices != nil {
		opts = append(opts, middleware.WithPrices(d.prices))
	}
	if export {
		// Metrics only where the variables send them: a traces-only
		// endpoint would leave the metrics to the SDK's default address.
		metrics := firstEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
		if d.otel, err = target.sink(context.Background(), otlpOptions{fallback: "llmhistory-demo", metrics: metrics}, otelsink.Options{}); err != nil {
			return err
		}
		// Given as a bare function, so that the recorder's Flush after
		// each turn does not wait for the Collector: the sink's own
		// batches export in the background, and finish flushes them.
		opts = append(opts, middleware.WithSink(record.SinkFunc(d.otel.Append)))
	}
	d.rec = middleware.NewRecorder(opts...)
	// Retry inside the recorder: the attempts of one call fold into one
	// record with "attempts" counting them. When spans are exported,
	// otelsink.Middleware before the recorder gives them the server's
	// address and port, which a record does not carry.
	mws := []middleware.Middleware{d.rec.Middleware(), middleware.Retry(middleware.RetryPolicy{BaseDelay: 50 * time.Millisecond})}
	if d.otel != nil {
		mws = append([]middleware.Middleware{otelsink.Middleware()}, mws...)
	}
	httpClient := middleware.NewClient(nil, mws...)

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

	d.anModel = envOr("ANTHROPIC_MODEL", defaultClaude)
	awhere := "api.anthropic.com"
	anOpts := []anthropicoption.RequestOption{anthropicoption.WithHTTPClient(httpClient)}
	if realAN {
		anOpts = append(anOpts, anthropicoption.WithAPIKey(anKey))
		if base := os.Getenv("ANTHROPIC_BASE_URL"); base != "" {
			// The SDK reads it too; set here so that the banner tells the truth.
			anOpts, awhere = append(anOpts, anthropicoption.WithBaseURL(base)), base
		}
	} else {
		srv := httptest.NewServer(fakeAnthropic())
		d.servers = append(d.servers, srv)
		// No credential or endpoint from the environment reaches the fake.
		anOpts = append(anOpts, anthropicoption.WithoutEnvironmentDefaults(),
			anthropicoption.WithAPIKey(fakeAnthropicKey), anthropicoption.WithBaseURL(srv.URL))
		d.anModel, awhere = defaultClaude, "a fake Anthropic server at "+srv.URL
	}
	d.an = anthropic.NewClient(anOpts...)

	d.trace = demoTracePrefix + strings.ToLower(middleware.NewCallID()[20:])
	records := d.path
	if d.store != nil {
		records += " and sqlite:" + d.db
	}
	fmt.Fprintf(d.say, "OpenAI: %s (%s)\nGemini: %s (%s)\nClaude: %s (%s)\nrecords: %s, trace %s\n",
		where, d.oaModel, gwhere, d.gmModel, awhere, d.anModel, records, d.trace)
	if d.otel != nil {
		fmt.Fprintf(d.say, "spans: %s\n", d.otel.about)
	}
	fmt.Fprintln(d.say)
	return nil
}

// demoOTLP says whether the demo exports over OTLP, and where: when the
// standard variables name an endpoint, and do not turn traces off.
func demoOTLP() (otlpTarget, bool, error) {
	if strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")) == "true" || strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")) == "none" {
		return otlpTarget{}, false, nil
	}
	t, err := otlpTargetFrom("", "")
	return t, err == nil && t.endpoint != "", err
}

// otelCloseTimeout bounds the demo's wait for the Collector at its end.
const otelCloseTimeout = 15 * time.Second

// closeOTel exports what the OTLP sink holds and says how it went: the
// spans exported and where, or an error when the Collector did not take
// them all.
func (d *demo) closeOTel() error {
	if d.otel == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), otelCloseTimeout)
	defer cancel()
	closeErr := d.otel.Shutdown(ctx)
	if msg := d.otel.trouble(closeErr); msg != "" {
		return fmt.Errorf("exporting spans to %s: %s", d.otel.target, msg)
	}
	st := d.otel.Stats()
	d.summary(fmt.Sprintf("  %s exported to %s.", plural(int64(st.Exported), "span", "spans"), d.otel.about))
	if closeErr != nil {
		// The spans went; the metrics, or the exporters' shutdown, did
		// not (a backend that takes traces only refuses metrics:
		// OTEL_METRICS_EXPORTER=none sends none).
		d.summary("  (OTLP: " + closeErr.Error() + ")")
	}
	return nil
}

// replaceable returns nil when path does not exist or holds what mine
// recognizes as the demo's own; otherwise an error that says so. The demo
// never destroys a file it did not make.
func replaceable(path string, mine func([]byte) bool) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a file the demo wrote; choose another path", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !mine(data) {
		return fmt.Errorf("%s exists and was not written by the demo; not replacing it (choose another file with -o or -report)", path)
	}
	return nil
}

// isDemoHistory reports whether data is a history the demo wrote: every
// line a record on a demo trace (a torn last line, left by an interrupted
// run, aside).
func isDemoHistory(data []byte) bool {
	rd := record.NewReader(bytes.NewReader(data))
	rd.SkipArgs = true // only the traces are looked at
	n := 0
	for {
		r, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return n > 0
		}
		if err != nil || !strings.HasPrefix(r.TraceID, demoTracePrefix) {
			return false
		}
		n++
	}
}

// isDemoReport reports whether data is a report the demo wrote from
// history: an evidence report whose input is that file and whose traces
// are demo traces.
func isDemoReport(data []byte, history string) bool {
	s := string(data)
	report := strings.Contains(s, "LLM call history: evidence report") || strings.Contains(s, `"provenance"`)
	return report && strings.Contains(s, history) && strings.Contains(s, demoTracePrefix)
}

func (d *demo) tearDown() {
	if d.rec != nil {
		d.rec.Close()
	}
	if d.store != nil {
		d.store.Close() // closed already by the recorder, unless it never started
	}
	if d.otel != nil {
		// Stopped early: export what is there, for a short while.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		d.otel.Shutdown(ctx)
		cancel()
	}
	for _, s := range d.servers {
		s.Close()
	}
	// A run stopped before its first record leaves no empty file behind,
	// which the next run would not know as its own.
	if d.made {
		if st, err := os.Stat(d.path); err == nil && st.Size() == 0 {
			os.Remove(d.path)
		}
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
	d.note("the next call gets a 429 first; Retry waits and tries again: one record, attempts=2")
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
		d.lineIn(1, "tool call", tc.Function.Name+" "+tc.Function.Arguments)
		// 4. The tool runs. It reads the recorded history, as the
		// generated code asks, and makes a nested call under the tool call.
		result, err := d.runTool(middleware.WithParent(ctx, toolCallID))
		if err != nil {
			return err
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: result})
	}

	// 5. The answer, streamed.
	answer, err := d.streamOpenAI(ctx, msgs)
	if err != nil {
		return err
	}

	// 6. A streamed Gemini call on the same trace.
	if err := d.streamGemini(ctx, "Translate this packing advice into Portuguese, in one sentence: light layers, a rain jacket, comfortable shoes."); err != nil {
		return err
	}

	// 7. The agent asks Claude, through Anthropic's SDK, to check the answer.
	if err := d.askClaude(ctx, answer); err != nil {
		return err
	}

	// 8. A pasted key: redacted before the record exists.
	d.note("the user pastes an API key; the record keeps [REDACTED] in its place")
	if err := ask("Is this key still valid? " + pastedKey); err != nil {
		return err
	}

	// 9. A call that fails: recorded with its error type, and the error
	// reaches the caller untouched.
	d.note("a call to a model that does not exist fails with 404: one record, error_type not_found")
	_, err = d.oa.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-does-not-exist", Messages: msgs[len(msgs)-1:]})
	if err == nil {
		return errors.New("a call to an unknown model succeeded")
	}
	d.line("error", err.Error())
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

func (d *demo) streamOpenAI(ctx context.Context, msgs []openai.ChatCompletionMessage) (string, error) {
	stream, err := d.oa.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: d.oaModel, Messages: msgs, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return "", err
	}
	defer stream.Close()
	w := d.turn("assistant")
	var answer strings.Builder
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		for _, c := range chunk.Choices {
			w.WriteString(c.Delta.Content)
			answer.WriteString(c.Delta.Content)
		}
	}
	w.end("  (streamed)")
	stream.Close()
	return answer.String(), d.flush()
}

func (d *demo) streamGemini(ctx context.Context, q string) error {
	d.line("user → gemini", q)
	w := d.turn("gemini")
	for chunk, err := range d.gm.Models.GenerateContentStream(ctx, d.gmModel, genai.Text(q), nil) {
		if err != nil {
			return err
		}
		w.WriteString(chunk.Text())
	}
	w.end("  (streamed)")
	return d.flush()
}

// askClaude has the agent ask Claude to check the assistant's answer.
func (d *demo) askClaude(ctx context.Context, answer string) error {
	q := "Check this packing advice for Lisbon in May; say in one sentence what is missing: "
	d.line("agent → claude", q+"(the answer above)")
	q += answer
	msg, err := d.an.Messages.New(middleware.WithSpeaker(ctx, record.SpeakerAgent), anthropic.MessageNewParams{
		Model:     d.anModel,
		MaxTokens: 300,
		System:    []anthropic.TextBlockParam{{Text: "You review travel advice. Be brief."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(q))},
	})
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	d.line("claude", text.String())
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

// turnLines is how many lines one turn of the conversation may take on a
// terminal: a long answer from a real model is cut, not scrolled.
const turnLines = 3

// line shows one turn of the conversation, redacted like a record: the
// screen may be shared or its output kept in a file.
func (d *demo) line(who, text string) { d.lineIn(turnLines, who, text) }

// lineIn is line in at most maxLines lines on a terminal.
func (d *demo) lineIn(maxLines int, who, text string) {
	w := d.turn(who)
	w.maxLines = maxLines
	w.WriteString(strings.TrimSpace(text))
	w.end("")
}

// turn starts a turn of the conversation; what is written to it is
// wrapped to the screen's width.
func (d *demo) turn(who string) *wrapper {
	fmt.Fprintf(d.say, "%14s ▸ ", who)
	return &wrapper{w: d.say, width: d.width, indent: 17, col: 17, maxLines: turnLines}
}

func (d *demo) note(text string) {
	fmt.Fprintf(d.say, "  # %s\n", text)
}

// wrapper writes the text of a turn, redacted, wrapped at word boundaries
// to width columns with a hanging indent, and cut after maxLines lines.
// Without a width (not a terminal) it writes the text on one line.
type wrapper struct {
	w             io.Writer
	width, indent int
	col, lines    int
	maxLines      int
	word          strings.Builder
	space         bool // a space is due before the next word
	started       bool // the current line has a word
	cut           bool
}

func (w *wrapper) WriteString(s string) {
	for _, c := range s {
		if c == '\n' || c == '\r' || c == '\t' {
			c = ' '
		}
		if c == ' ' {
			w.flushWord()
			w.space = true
			continue
		}
		w.word.WriteRune(c)
	}
}

func (w *wrapper) flushWord() {
	if w.word.Len() == 0 {
		return
	}
	word := middleware.Redact(w.word.String())
	w.word.Reset()
	n := len([]rune(word))
	if w.space && w.started {
		n++
	}
	if w.width > 0 && w.col+n > w.width && w.started {
		if w.lines+1 >= w.maxLines {
			if !w.cut {
				io.WriteString(w.w, "…")
			}
			w.cut = true
			return
		}
		fmt.Fprintf(w.w, "\n%*s", w.indent, "")
		w.col, w.lines, w.space, w.started = w.indent, w.lines+1, false, false
	}
	if w.space && w.started {
		w.put(" ")
	}
	w.space, w.started = false, true
	w.put(word)
}

func (w *wrapper) put(s string) {
	if w.cut {
		return
	}
	io.WriteString(w.w, s)
	w.col += len([]rune(s))
}

// end finishes the turn with suffix, on the same line if it fits.
func (w *wrapper) end(suffix string) {
	w.flushWord()
	if !w.cut && suffix != "" {
		w.put(suffix)
	}
	io.WriteString(w.w, "\n")
}

// finish closes the recorder (every record written), checks that no key
// reached the file, writes the evidence report built from the file, and
// says what was made and what to run next.
func (d *demo) finish() error {
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
	for _, key := range []string{pastedKey, fakeOpenAIKey, fakeGeminiKey, fakeAnthropicKey,
		os.Getenv("OPENAI_API_KEY"), os.Getenv("GEMINI_API_KEY"), os.Getenv("GOOGLE_API_KEY"), os.Getenv("ANTHROPIC_API_KEY")} {
		if len(key) >= 8 && bytes.Contains(data, []byte(key)) {
			return fmt.Errorf("an API key reached %s: this is a bug, please report it", d.path)
		}
	}
	rep, err := report.Build(context.Background(), report.Options{}, report.Source{Name: d.path, R: bytes.NewReader(data)})
	if err != nil {
		return err
	}
	where, err := d.writeReport(rep)
	if err != nil {
		return err
	}

	s := rep.Summary
	met := 0
	for _, c := range rep.Checklist {
		if c.Verdict == report.Met {
			met++
		}
	}
	fmt.Fprintln(d.say)
	saved := fmt.Sprintf("%s in %s, no API key in it", plural(s.Records, "record", "records"), d.path)
	if where != "" {
		saved += "; the report is in " + where
	}
	d.summary(saved + ".")
	checklist := fmt.Sprintf("checklist %d of %d met", met, len(rep.Checklist))
	for _, c := range rep.Checklist {
		if c.ID == "evidence_stream" && c.Verdict == report.NotMet {
			// The point of a checklist item a demo cannot meet.
			checklist += " (the other needs 100+ records)"
		}
	}
	d.summary(fmt.Sprintf("  %s · calls by provider: %s · %d retried · %d in error",
		spendText(rep), providersLine(rep.Providers), rep.Retries.RetriedRecords, s.ErrorRecords))
	d.summary(fmt.Sprintf("  %s · history read in %s", checklist, plural(rep.History.Access, "record", "records")))
	if err := d.closeOTel(); err != nil {
		return err
	}
	if d.store != nil {
		d.summary("Query them: " + selfCommand() + " query " + shellQuote("sqlite:"+d.db) + " -traces")
	}
	d.summary("Follow the file as it grows: " + selfCommand() + " tail " + shellQuote(d.path))
	d.summary("See it in a browser: " + selfCommand() + " view " + shellQuote(d.path))
	return nil
}

// dbBeside names the SQLite store of a history file: history.jsonl gives
// history.db.
func dbBeside(history string) string {
	return strings.TrimSuffix(history, filepath.Ext(history)) + ".db"
}

// openStore opens the SQLite store beside the history file, which the
// demo's records go to as well, run after run (a record is stored once).
// A file of that name that is not a store is left alone, and said so.
func (d *demo) openStore() error {
	d.db = dbBeside(d.path)
	if d.db == d.path {
		d.db = ""
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), openStoreTimeout)
	defer cancel()
	if st, err := os.Stat(d.db); err == nil && st.Size() > 0 {
		s, err := store.OpenWith(ctx, "sqlite:"+d.db, store.Options{ReadOnly: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Fprintf(d.say, "%s is not a llmhistory store (%v): the records go to %s only\n", d.db, err, d.path)
			d.db = ""
			return nil
		}
		s.Close()
	}
	s, err := store.OpenWith(ctx, "sqlite:"+d.db, store.Options{Logger: slog.New(slog.NewTextHandler(d.say, nil))})
	if err != nil {
		return err
	}
	d.store = s
	return nil
}

// summary writes one line of the closing summary, wrapped to the screen.
func (d *demo) summary(text string) {
	indent := len(text) - len(strings.TrimLeft(text, " "))
	w := &wrapper{w: d.say, width: d.width, indent: indent + 2, col: indent, maxLines: 1 << 20}
	io.WriteString(d.say, text[:indent])
	w.WriteString(text[indent:])
	w.end("")
}

// writeReport writes the report where it goes and says where, for people:
// a file's name, or "" for standard output.
func (d *demo) writeReport(rep *report.Report) (string, error) {
	write := map[string]reportWriter{
		"markdown": (*report.Report).WriteMarkdown,
		"json":     (*report.Report).WriteJSON,
		"html":     (*report.Report).WriteHTML,
	}[d.format]
	switch {
	case write == nil:
		return "", nil
	case d.reportTo != nil:
		return "", write(rep, d.reportTo)
	}
	f, err := createAtomic(d.reportPath)
	if err != nil {
		return "", err
	}
	defer f.abort()
	if err := write(rep, f); err != nil {
		return "", err
	}
	return d.reportPath, f.commit()
}

// providersLine sums up the providers called: "openai 6, gemini 3, anthropic 1".
func providersLine(ps []report.Provider) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s %d", p.Name, p.Records))
	}
	return strings.Join(parts, ", ")
}

// spendText says what the calls cost and how many that used tokens were
// not priced, short enough to share the providers' line on a 100-column
// terminal: "spend $0.000601 (1 call unpriced)". A failed call that used
// no tokens costs nothing and is not unpriced. The report says why, by
// model.
func spendText(rep *report.Report) string {
	s := rep.Spend
	text := "no call priced"
	if s.PricedRecords > 0 {
		text = "spend " + report.FormatUSD(s.USD)
	}
	if n := s.UnpricedRecords; n > 0 && s.PricedRecords > 0 {
		text += " (" + plural(n, "call", "calls") + " unpriced)"
	}
	return text
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return group(n) + " " + many
}
