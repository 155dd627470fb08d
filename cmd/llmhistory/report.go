package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/report"
)

func init() {
	register("report", "build the evidence report from JSONL history files or a store", runReport)
}

const reportAbout = `Report reads the history records of each FILE (JSON Lines, as the JSONL
sink writes them; - or none: standard input; or a store's URL,
sqlite:FILE or postgres://..., read whole) and writes the evidence report:
the evidence-review checklist with a verdict per item, the history
telemetry rates, query pattern tags with examples, calls, errors, retries,
latency (and the time to first chunk of streamed calls), tokens, spend,
depth, the largest traces and any bad input. -format json has stable
keys and "version": 1 (go doc ./report); -format html is one
self-contained page (inline CSS and SVG charts, no script, no external
resource) that opens offline. -top N sets how many traces to list, the
largest and the most expensive.

Memory stays bounded whatever the size of the input: latency quantiles
come from log-bucket histograms (within 1%), the largest and the most
expensive traces from summaries exact below 10,000 traces (above, upper
bounds with their error stated), capped key sets lump the rest into
(other), and the duplicate check holds up to 2^20 call ids.

Examples:

  llmhistory report history.jsonl                        Markdown on stdout
  llmhistory report -format json -o report.json *.jsonl
  llmhistory report -format html -o report.html history.jsonl
  llmhistory report -prices prices.json history.jsonl

Spend is the sum of the costs the records carry, which the recorder sets
from its price table when each call is made; the report names the tables,
and warns when records are more than 90 days newer than the table that
priced them. With -prices FILE, every record is priced again for this
report with one table, whatever cost it carries, so that every figure
comes from it: a record whose model the table does not know, or that has
no usage, is unpriced, even if it carried a cost. FILE is either

  - LiteLLM's model_prices_and_context_window.json, newer than the
    module's table: download it from
    https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json
    The table is the file's, named litellm- and the YYYY-MM-DD in the
    file's name, or else the day the file was last written; or
  - a file of your own prices, added to the module's table (or to the
    file LLMHISTORY_PRICES names), rates in US dollars per million tokens:

  {"version": 1, "table": "acme-2026-11", "models": {
    "my-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0,
                 "cache_read_per_mtok": 0.1}}}

A price file that cannot be read, or that is not one (an unknown field, a
rate missing, negative or not a number), stops the run (exit 1) before any
history is read, with the file's name and what is wrong.

Every FILE is opened, and the -o file created, before any is read: one
that cannot be opened stops the run (exit 1) with nothing written. The
report is written through a temporary file, so a failure never leaves half
a report. A line that is not a record (not JSON, or without the fields
every record has) is reported on standard error as FILE:LINE: reason (the
first 20), counted in the report, and skipped; so is a torn last line left
by a crash. An input with lines of which none is a record is not a history
file: the run says so and exits 1 (the report of the other inputs is still
written). Exit status: 0 when the report was written from history files, 1
when an input could not be read, was not a history, or the report could
not be written, 2 for bad flags.

With no FILE, standard input is read, unless it is a terminal: then the
command says what it wants instead of waiting. On a terminal, a progress
line shows records per second for large inputs.`

// maxWarnings bounds the garbled lines reported one by one on stderr; the
// report counts them all.
const maxWarnings = 20

func runReport(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("report", "[flags] [FILE|URL...]", reportAbout, io)
	format := fs.String("format", "markdown", "output `format`: markdown, json or html")
	out := fs.String("o", "", "write the report to `FILE` instead of standard output")
	top := fs.Int("top", 10, "list the `N` largest traces")
	minEvidence := fs.Int("min-evidence", 100, "records with program_source that make the evidence stream sufficient (`N`)")
	pricesPath := fs.String("prices", "", "price every record again with `FILE`, LiteLLM's price file or your own (see above), instead of the costs the records carry")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	if *top < 1 {
		fmt.Fprintf(io.err, "llmhistory report: -top must be at least 1, not %d\n", *top)
		return exitUsage
	}
	if *minEvidence < 1 {
		fmt.Fprintf(io.err, "llmhistory report: -min-evidence must be at least 1, not %d\n", *minEvidence)
		return exitUsage
	}
	var write reportWriter
	switch *format {
	case "markdown", "md":
		write = (*report.Report).WriteMarkdown
	case "json":
		write = (*report.Report).WriteJSON
	case "html":
		write = (*report.Report).WriteHTML
	default:
		fmt.Fprintf(io.err, "llmhistory report: unknown format %q (want markdown, json or html)\n", *format)
		return exitUsage
	}
	if fs.NArg() == 0 && isTerminal(io.in) {
		fmt.Fprintln(io.err, "llmhistory report: no FILE given, and standard input is a terminal: name the history files (llmhistory report history.jsonl), or pipe one in")
		return exitUsage
	}

	var prices *cost.Table
	if *pricesPath != "" {
		// Read first: a wrong price file fails at once, before a long read.
		var err error
		if prices, err = loadPrices(*pricesPath); err != nil {
			fmt.Fprintln(io.err, "llmhistory report:", err)
			return exitFailure
		}
	}

	sources, size, closeAll, err := openSources(ctx, fs.Args(), io.in)
	defer closeAll()
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory report:", err)
		return exitFailure
	}
	var dest *atomicFile
	if *out != "" {
		// Made before reading, so a wrong -o fails at once, not after a
		// long read.
		if dest, err = createAtomic(*out); err != nil {
			fmt.Fprintln(io.err, "llmhistory report:", err)
			return exitFailure
		}
		defer dest.abort()
	}

	scores, err := scoresOf(ctx, fs.Args())
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory report:", err)
		return exitFailure
	}
	var warned, unwarned int
	prog := newProgress(io.err, size)
	opts := report.Options{
		TopTraces:   *top,
		MinEvidence: *minEvidence,
		Prices:      prices,
		PricesFrom:  *pricesPath,
		Scores:      scores,
		Progress:    prog.update,
		OnBadLine: func(source string, line int, err error) {
			if warned == maxWarnings {
				unwarned++
				return
			}
			warned++
			prog.clear()
			fmt.Fprintf(io.err, "%s:%d: %v\n", source, line, err)
		},
	}
	r, err := report.Build(ctx, opts, sources...)
	prog.clear()
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory report:", err)
		return exitFailure
	}
	if unwarned > 0 {
		fmt.Fprintf(io.err, "llmhistory report: %s more %s\n", group(int64(unwarned)), pluralWord(unwarned, "line that is not a record", "lines that are not records"))
	}
	for _, src := range r.BadInput.TornSources {
		fmt.Fprintf(io.err, "%s: torn last line (a crash in mid-write?) skipped\n", src)
	}
	status := exitOK
	for _, in := range r.Provenance.Inputs {
		if in.NoRecords() {
			what := "none of its " + group(in.Lines) + " lines is a record"
			if in.Lines == 1 {
				what = "its one line is not a record"
			}
			fmt.Fprintf(io.err, "llmhistory report: %s: not a history file: %s\n", in.Name, what)
			status = exitFailure
		}
	}
	if status != exitOK && r.Summary.Records == 0 {
		return status // a report of nothing, from inputs that are not histories, helps no one
	}

	if dest == nil {
		err = write(r, io.out)
	} else {
		err = write(r, dest)
		if err == nil {
			err = dest.commit()
		}
	}
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory report:", err)
		return exitFailure
	}
	return status
}

// pluralWord is one when n is 1, else many.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// openSources opens every file and store, or none: on the first failure
// it returns the error, having closed what it opened. "-" is stdin. size
// is the total size of the regular files.
func openSources(ctx context.Context, names []string, stdin io.Reader) (sources []report.Source, size int64, closeAll func(), err error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var files []io.Closer
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, name := range names {
		if name == "-" {
			sources = append(sources, report.Source{Name: "<stdin>", R: stdin})
			continue
		}
		if isStoreURL(name) {
			s, err := openStoreReader(ctx, name)
			if err != nil {
				return nil, 0, closeAll, err
			}
			r := storeJSONL(ctx, s)
			files = append(files, r, s) // the pipe first: its writer stops, then the store closes
			sources = append(sources, report.Source{Name: s.URL(), R: r})
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, closeAll, err
		}
		files = append(files, f)
		st, err := f.Stat()
		if err != nil {
			return nil, 0, closeAll, err
		}
		if st.IsDir() {
			return nil, 0, closeAll, fmt.Errorf("%s: is a directory", name)
		}
		if st.Mode().IsRegular() {
			size += st.Size()
		}
		sources = append(sources, report.Source{Name: name, R: f})
	}
	return sources, size, closeAll, nil
}

// reportWriter writes a report in one format.
type reportWriter func(*report.Report, io.Writer) error

// atomicFile is a file written under a temporary name in the directory of
// its path and renamed to it once whole, so a failed write never leaves
// half a report behind, nor replaces a good one. Its errors name the path
// the user gave, never the temporary file.
type atomicFile struct {
	path string
	tmp  *os.File
	done bool
}

func createAtomic(path string) (*atomicFile, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("write %s: is a directory", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, bare(err))
	}
	return &atomicFile{path: path, tmp: tmp}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) {
	n, err := a.tmp.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", a.path, bare(err))
	}
	return n, err
}

// commit closes the file and puts it in its place.
func (a *atomicFile) commit() error {
	err := a.tmp.Close()
	if err == nil {
		err = os.Chmod(a.tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(a.tmp.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.tmp.Name())
		return fmt.Errorf("write %s: %w", a.path, bare(err))
	}
	a.done = true
	return nil
}

// abort removes the temporary file unless commit put it in place.
func (a *atomicFile) abort() {
	if !a.done {
		a.tmp.Close()
		os.Remove(a.tmp.Name())
	}
}

// bare is the reason of a file error without the path it carries: the
// caller names the path the user knows.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Progress is shown on a terminal only, and only for an input worth
// waiting for: more than progressBytes, or still being read after
// progressAfter.
const (
	progressBytes = 8 << 20
	progressAfter = time.Second
)

type progress struct {
	line *statusLine
	size int64
}

func newProgress(w io.Writer, size int64) *progress {
	return &progress{line: newStatusLine(w), size: size}
}

func (p *progress) update(pr report.Progress) {
	if !p.line.live || (p.size <= progressBytes && pr.Elapsed < progressAfter) || pr.Elapsed <= 0 {
		return
	}
	rate := float64(pr.Records) / pr.Elapsed.Seconds()
	line := fmt.Sprintf("llmhistory report: %s records, %s records/s", group(pr.Records), group(int64(rate)))
	if p.size > 0 {
		line += fmt.Sprintf(", %d%%", min(100, pr.Bytes*100/p.size))
	}
	p.line.show(line)
}

// clear removes the progress line, if any, so that what follows starts on
// a clean line.
func (p *progress) clear() { p.line.clear() }

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
