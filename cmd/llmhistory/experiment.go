package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/internal/term"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("experiment", "run a dataset against models or prompts, and compare the runs item by item", runExperiment)
}

const experimentAbout = `Experiment asks every item of a dataset (llmhistory dataset build) of
each variant, a model and optionally a system prompt, through the OpenAI
chat completions API, records every call, scores the answers against the
items' references, and compares the variants item by item: the output's
diff from the first variant's (the baseline), each score and its change,
tokens, cost and latency, and the wins, losses and ties per score.

  llmhistory experiment run -variant NAME=MODEL... [flags] DATASET
      run the experiment and print the comparison; -provider fake (the
      default) asks the embedded fake OpenAI server, offline, which knows
      gpt-4o-mini and gpt-4.1-nano; -provider openai asks the API at
      -base-url with OPENAI_API_KEY (any compatible server). -o FILE keeps
      the result: given again, the trials it holds are not run again
  llmhistory experiment compare RESULT...
      compare the variants of kept results, the first the baseline

The comparison prints as Markdown, JSON or HTML (-format), to standard
output or -report FILE. Given the same answers (the fakes, a cassette) it
is the same, byte for byte, with -latency=false (latency is measured).
Scores: similarity (the F1 of the answer's words against the
reference's) and exact_match; -score picks.

Examples:
  llmhistory experiment run -variant mini=gpt-4o-mini \
      -variant nano=gpt-4.1-nano -o swap.json demo.jsonl
  llmhistory experiment compare -format html -report swap.html swap.json

Exit status: 0 on success; 1 when a trial failed or a file cannot be read
or written; 2 for bad flags.`

func runExperiment(ctx context.Context, args []string, io stdio) int {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runExperimentRun(ctx, args[1:], io)
		case "compare":
			return runExperimentCompare(args[1:], io)
		}
	}
	fs := newFlags("experiment", "run|compare [flags] ...", experimentAbout, io)
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	if len(args) == 0 {
		fmt.Fprintln(io.err, "llmhistory experiment: want run or compare")
	} else {
		fmt.Fprintf(io.err, "llmhistory experiment: unknown subcommand %q (want run or compare)\n", args[0])
	}
	fs.SetOutput(io.err)
	fs.Usage()
	return exitUsage
}

func experimentFail(io stdio, code int, format string, args ...any) int {
	fmt.Fprintf(io.err, "llmhistory experiment: "+format+"\n", args...)
	return code
}

// comparisonFlags are the flags of how a comparison is shown.
type comparisonFlags struct {
	format, report *string
	latency        *bool
}

func comparisonFlagsOn(fs interface {
	String(name, value, usage string) *string
	Bool(name string, value bool, usage string) *bool
}) comparisonFlags {
	return comparisonFlags{
		format:  fs.String("format", "md", "the comparison's `format`: md, json or html"),
		report:  fs.String("report", "", "write the comparison to this `file` instead of standard output"),
		latency: fs.Bool("latency", true, "show latency (measured: it differs from run to run)"),
	}
}

func (cf comparisonFlags) check() error {
	switch *cf.format {
	case "md", "json", "html":
		return nil
	}
	return fmt.Errorf("-format %q: want md, json or html", *cf.format)
}

func (cf comparisonFlags) write(io stdio, results ...*eval.ExperimentResult) error {
	c, err := eval.Compare(eval.CompareOptions{NoLatency: !*cf.latency}, results...)
	if err != nil {
		return err
	}
	w := io.out
	var file *os.File
	if *cf.report != "" {
		if file, err = os.Create(*cf.report); err != nil {
			return err
		}
		w = file
	}
	switch *cf.format {
	case "json":
		err = c.WriteJSON(w)
	case "html":
		err = c.WriteHTML(w)
	default:
		err = c.WriteMarkdown(w)
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func runExperimentRun(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("experiment run", "-variant NAME=MODEL... [flags] DATASET", experimentAbout, io)
	var variants, systems, scores listFlag
	fs.Var(&variants, "variant", "a variant: `NAME=MODEL` (may be given several times; the first is the baseline)")
	fs.Var(&systems, "system", "the system prompt of a variant: `NAME=TEXT` (may be given several times)")
	fs.Var(&scores, "score", "a `score` to give: similarity or exact_match (may be given several times; default both)")
	name := fs.String("name", "", "the experiment's `name` (default the dataset's, and the variants')")
	provider := fs.String("provider", "fake", "where to ask: `fake` (offline) or openai (OPENAI_API_KEY)")
	baseURL := fs.String("base-url", "https://api.openai.com/v1", "the OpenAI-compatible API's `url`, for -provider openai")
	out := fs.String("o", "", "keep the result in this JSON `file`, and resume from it when it exists")
	into := fs.String("into", "", "record the calls into this store `URL` or JSONL file too")
	workers := fs.Int("workers", 4, "trials at once (`N`)")
	cf := comparisonFlagsOn(fs)
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	if len(positional) != 1 || len(variants) == 0 {
		experimentFail(io, exitUsage, "want one DATASET and at least one -variant NAME=MODEL")
		fs.SetOutput(io.err)
		fs.Usage()
		return exitUsage
	}
	if err := cf.check(); err != nil {
		return experimentFail(io, exitUsage, "%v", err)
	}
	if *workers < 1 {
		return experimentFail(io, exitUsage, "-workers %d: want 1 or more", *workers)
	}
	e := eval.Experiment{Workers: *workers}
	for _, v := range variants {
		n, m, ok := strings.Cut(v, "=")
		if !ok || n == "" || m == "" {
			return experimentFail(io, exitUsage, "-variant wants NAME=MODEL, not %q", v)
		}
		e.Variants = append(e.Variants, eval.Variant{Name: n, Model: m})
	}
	for _, s := range systems {
		n, text, ok := strings.Cut(s, "=")
		i := -1
		for j := range e.Variants {
			if e.Variants[j].Name == n {
				i = j
			}
		}
		if !ok || i < 0 {
			return experimentFail(io, exitUsage, "-system wants NAME=TEXT of a variant's NAME, not %q", s)
		}
		e.Variants[i].System = text
	}
	if len(scores) == 0 {
		scores = listFlag{"similarity", "exact_match"}
	}
	for _, s := range scores {
		switch s {
		case "similarity":
			e.Evaluators = append(e.Evaluators, eval.Similarity())
		case "exact_match":
			e.Evaluators = append(e.Evaluators, eval.ExactMatch())
		default:
			return experimentFail(io, exitUsage, "-score %q: want similarity or exact_match", s)
		}
	}
	d, err := eval.ReadDatasetFile(positional[0])
	if err != nil {
		return experimentFail(io, exitFailure, "%v", err)
	}
	e.Name = *name
	if e.Name == "" {
		names := make([]string, len(e.Variants))
		for i, v := range e.Variants {
			names[i] = v.Name
		}
		e.Name = d.Name + ":" + strings.Join(names, "-vs-")
	}

	// Retried inside the recorder: a rate limit is one call, retried,
	// not a failed trial.
	e.Transport = middleware.Chain(http.DefaultTransport, middleware.Retry(middleware.RetryPolicy{BaseDelay: 50 * time.Millisecond}))
	switch *provider {
	case "fake":
		srv := httptest.NewServer(fakeOpenAI())
		defer srv.Close()
		e.Task = eval.OpenAIChat(srv.URL+"/v1", fakeOpenAIKey)
	case "openai":
		key := os.Getenv("OPENAI_API_KEY")
		if key == "" {
			return experimentFail(io, exitUsage, "-provider openai wants OPENAI_API_KEY")
		}
		e.Task = eval.OpenAIChat(*baseURL, key)
	default:
		return experimentFail(io, exitUsage, "-provider %q: want fake or openai", *provider)
	}
	if *into != "" {
		var sink record.Sink
		if isStoreURL(*into) {
			st, err := store.OpenWith(ctx, *into, store.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				return experimentFail(io, exitFailure, "%v", err)
			}
			defer st.Close()
			sink = st
		} else {
			j, err := record.OpenJSONL(*into)
			if err != nil {
				return experimentFail(io, exitFailure, "%v", err)
			}
			defer j.Close()
			sink = j
		}
		e.Sinks = []record.Sink{sink}
	}
	if *out != "" {
		if f, err := os.Open(*out); err == nil {
			prev, err := eval.ReadExperimentResult(f)
			f.Close()
			if err != nil {
				return experimentFail(io, exitFailure, "%s: %v", *out, err)
			}
			e.Previous = prev
		} else if !errors.Is(err, os.ErrNotExist) {
			return experimentFail(io, exitFailure, "%v", err)
		}
	}

	bar := newStatusLine(io.err)
	start := time.Now()
	e.Progress = func(done, total int64) {
		if bar.Due(done == total) {
			bar.Show(term.Progress("experiment", "trials", done, total, time.Since(start)))
		}
	}
	res, err := eval.RunExperiment(ctx, d, e)
	bar.Clear()
	if res != nil && *out != "" {
		if werr := writeResult(*out, res); werr != nil {
			return experimentFail(io, exitFailure, "%v", werr)
		}
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(io.err, "llmhistory experiment: stopped; run it again with the same -o to go on where it was")
		return exitFailure
	}
	if err != nil {
		return experimentFail(io, exitFailure, "%v", err)
	}
	if err := cf.write(io, res); err != nil {
		return experimentFail(io, exitFailure, "%v", err)
	}
	failed := 0
	for _, t := range res.Trials {
		if t.Error != "" {
			failed++
			fmt.Fprintf(io.err, "llmhistory experiment: item %s, variant %s: %s\n", t.Item, t.Variant, t.Error)
		}
	}
	if failed > 0 {
		return exitFailure
	}
	return exitOK
}

// writeResult writes a result whole or not at all.
func writeResult(path string, res *eval.ExperimentResult) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := res.WriteTo(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func runExperimentCompare(args []string, io stdio) int {
	fs := newFlags("experiment compare", "[flags] RESULT...", experimentAbout, io)
	cf := comparisonFlagsOn(fs)
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	if len(positional) == 0 {
		return experimentFail(io, exitUsage, "compare wants one or more RESULT files (experiment run -o)")
	}
	if err := cf.check(); err != nil {
		return experimentFail(io, exitUsage, "%v", err)
	}
	var results []*eval.ExperimentResult
	for _, p := range positional {
		f, err := os.Open(p)
		if err != nil {
			return experimentFail(io, exitFailure, "%v", err)
		}
		res, err := eval.ReadExperimentResult(f)
		f.Close()
		if err != nil {
			return experimentFail(io, exitFailure, "%s: %v", p, err)
		}
		results = append(results, res)
	}
	if err := cf.write(io, results...); err != nil {
		return experimentFail(io, exitFailure, "%v", err)
	}
	return exitOK
}
