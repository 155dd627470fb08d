package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go"

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

const demoAbout = `Demo runs a small team's morning through real go-openai, genai and
Anthropic SDK clients wrapped by one recorder: four conversations of three
users, each attributed to its user and tagged with the feature that made
it. The first is an agent: several turns on one trace, a 429 retried and
folded into one record, a tool call whose generated code queries
conversation_history, a nested call under it, streamed answers, a Claude
turn, a pasted API key that is redacted, and a failing call. The others
are a support chat, a translation and a handover note.

The recorder runs with the history preview and program source on, so
every call carries the history guidance and the tool call keeps its code.
Each record is printed on standard error after the conversation lines it
belongs to (errors red, retries yellow, history reads magenta; on a
terminal every line fits its width), and appended to the -o file and to
a SQLite store beside it (history.db for history.jsonl); the demo checks
that no key reached the file. The -o file and the store are replaced only
if an earlier run of the demo wrote them: any other file is left alone
(and a store that is not the demo's is not written), and the demo stops
before making a call. The evidence report built from that
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

// demoTracePrefix starts the trace id of every conversation of a demo
// run: how the demo knows a history file, a store and a report as its
// own.
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
	con.noTrace = true // each conversation's heading names its trace
	d := &demo{say: io.err, con: con, path: *path, format: *format, prices: prices}
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
	say    io.Writer // the conversations and the records, for people
	con    *console  // writing to say
	path   string
	format string

	reportTo   io.Writer // the report's stream, or nil
	reportPath string    // or its file, or ""

	prices *cost.Table // from -prices or LLMHISTORY_PRICES; nil: the module's table

	file  *record.JSONL
	made  bool   // the demo created path: it may remove it
	db    string // the SQLite store beside path, "" when none
	store *store.Store
	rec   *middleware.Recorder
	cl    *clients  // the SDK clients, over the recorder (democlients.go)
	otel  *otlpSink // the OTLP export, when an endpoint is set
	run   string    // this run's trace prefix; conversation i is on run-i

	mu      sync.Mutex
	pending []record.Record // made, not yet shown
}

// setUp checks that no file the demo did not make is in its way, starts
// the fake servers that are needed and builds the clients, each with the
// recorder's client as its HTTP client: the one line an application adds.
func (d *demo) setUp(mode string) error {
	choice, err := chooseProviders(mode)
	if err != nil {
		return err
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
	if d.cl, err = newClients(choice, middleware.NewClient(nil, mws...)); err != nil {
		return err
	}

	d.run = demoTracePrefix + strings.ToLower(middleware.NewCallID()[20:])
	records := d.path
	if d.store != nil {
		records += " and sqlite:" + d.db
	}
	fmt.Fprintf(d.say, "%srecords: %s, %d conversations on traces %s-*\n", d.cl.banner, records, len(script), d.run)
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
	d.con.summary(fmt.Sprintf("  %s exported to %s.", plural(int64(st.Exported), "span", "spans"), d.otel.about))
	if closeErr != nil {
		// The spans went; the metrics, or the exporters' shutdown, did
		// not (a backend that takes traces only refuses metrics:
		// OTEL_METRICS_EXPORTER=none sends none).
		d.con.summary("  (OTLP: " + closeErr.Error() + ")")
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
	if d.cl != nil {
		d.cl.close()
	}
	// A run stopped before its first record leaves no empty file behind,
	// which the next run would not know as its own.
	if d.made {
		if st, err := os.Stat(d.path); err == nil && st.Size() == 0 {
			os.Remove(d.path)
		}
	}
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
	d.con.summary(saved + ".")
	checklist := fmt.Sprintf("checklist %d of %d met", met, len(rep.Checklist))
	for _, c := range rep.Checklist {
		if c.ID == "evidence_stream" && c.Verdict == report.NotMet {
			// The point of a checklist item a demo cannot meet.
			checklist += " (the other needs 100+ records)"
		}
	}
	d.con.summary(fmt.Sprintf("  %s · calls by provider: %s · %d retried · %d in error",
		spendText(rep), providersLine(rep.Providers), rep.Retries.RetriedRecords, s.ErrorRecords))
	d.con.summary(fmt.Sprintf("  %s · history read in %s", checklist, plural(rep.History.Access, "record", "records")))
	if err := d.closeOTel(); err != nil {
		return err
	}
	if d.store != nil {
		d.con.summary("Query them: " + selfCommand() + " query " + shellQuote("sqlite:"+d.db) + " -traces")
	}
	d.con.summary("Follow the file as it grows: " + selfCommand() + " tail " + shellQuote(d.path))
	d.con.summary("See it in a browser: " + selfCommand() + " view " + shellQuote(d.path))
	return nil
}

// dbBeside names the SQLite store of a history file: history.jsonl gives
// history.db.
func dbBeside(history string) string {
	return strings.TrimSuffix(history, filepath.Ext(history)) + ".db"
}

// openStore opens the SQLite store beside the history file, which the
// demo's records go to as well. A store an earlier run of the demo wrote
// is replaced, as the file is, so that the two hold the same run; a file
// of that name that is not a store, or a store that holds records of
// anything but the demo, is left alone, and said so.
func (d *demo) openStore() error {
	d.db = dbBeside(d.path)
	if d.db == d.path {
		d.db = ""
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), openStoreTimeout)
	defer cancel()
	if st, err := os.Stat(d.db); err == nil && st.Size() > 0 {
		mine, err := isDemoStore(ctx, d.db)
		if err != nil {
			fmt.Fprintf(d.say, "%s is not a llmhistory store (%v): the records go to %s only\n", d.db, err, d.path)
			d.db = ""
			return nil
		}
		if !mine {
			fmt.Fprintf(d.say, "%s holds records the demo did not write: the records go to %s only\n", d.db, d.path)
			d.db = ""
			return nil
		}
		// The store's own files beside it go with it.
		for _, f := range []string{d.db, d.db + "-wal", d.db + "-shm", d.db + ".spill.jsonl"} {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	s, err := store.OpenWith(ctx, "sqlite:"+d.db, store.Options{Logger: slog.New(slog.NewTextHandler(d.say, nil))})
	if err != nil {
		return err
	}
	d.store = s
	return nil
}

// isDemoStore reports whether the SQLite store at path holds only what
// the demo writes: records on demo traces. It reads until the first
// record that is not, so a store of a real history answers at once.
func isDemoStore(ctx context.Context, path string) (bool, error) {
	s, err := store.OpenWith(ctx, "sqlite:"+path, store.Options{ReadOnly: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return false, err
	}
	defer s.Close()
	for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{NoArgs: true, NoOutput: true}) {
		if err != nil {
			return false, err
		}
		if !strings.HasPrefix(r.TraceID, demoTracePrefix) {
			return false, nil
		}
	}
	return true, nil
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
