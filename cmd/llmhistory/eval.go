package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("eval", "score the calls of a store or a JSONL history with evaluators", runEval)
}

const evalAbout = `Eval judges the calls of the store at URL (sqlite:FILE or postgres://...)
that its filters select, or every call of a JSONL history FILE, with the
evaluators its flags or a rules file name, and keeps their scores: in the
store, or in FILE's scores file beside it (h.jsonl → h.scores.jsonl), which
llmhistory import and llmhistory view read.

Each evaluator has a name and a version, and a call scored by one at its
version is not judged again: a run stopped half way (^C) resumes where it
was, and a second run writes nothing new. A new version (another schema,
pattern or rubric) scores again, beside the old.

Code evaluators, from flags:
  -json-valid           the output is one JSON document
  -schema NAME=FILE     the output is valid against a JSON Schema
  -tools FILE           tool calls name an offered tool, with arguments
                        valid against its declaration (OpenAI, Anthropic
                        or Gemini tools, as the application sends them)
  -regex NAME=PATTERN   the output matches (RE2; (?i) for any case)
  -contains NAME=TEXT   the output contains TEXT
  -max-latency 2s       the call took at most this long
  -max-cost 0.01        the call cost at most this many dollars
  -answer               answered, empty or refusal

An LLM judge, and anything else, from -rules FILE (JSON; the eval
package's Rules say its form). A judge's calls are recorded into the same
store or file, tagged llmhistory.eval, and never judged.

The filters are query's (llmhistory query -h), on a store only. On a
terminal a progress line shows on standard error; at the end one line
says what was judged, written and skipped.

Examples:
  llmhistory eval sqlite:history.db -json-valid -answer -max-latency 5s
  llmhistory eval sqlite:history.db -rules rules.json -since 24h -tag checkout
  llmhistory eval history.jsonl -regex order_id='ORD-[0-9]+'

Exit status: 0 when every evaluation ran; 1 when some failed (a judge's
unreadable verdict), or the store or file could not be read; 2 for bad
flags or rules.`

func runEval(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("eval", "[flags] URL|FILE", evalAbout, io)
	ff := filterFlagsOn(fs)
	rulesPath := fs.String("rules", "", "read evaluators, a filter and a budget from this JSON `file`")
	jsonValid := fs.Bool("json-valid", false, "score json_valid: the output is one JSON document")
	answer := fs.Bool("answer", false, "score answer: answered, empty or refusal")
	var schemas, regexes, contains listFlag
	fs.Var(&schemas, "schema", "score NAME: the output is valid against the JSON Schema in FILE (`NAME=FILE`, may be given several times)")
	fs.Var(&regexes, "regex", "score NAME: the output matches PATTERN (`NAME=PATTERN`, may be given several times)")
	fs.Var(&contains, "contains", "score NAME: the output contains TEXT (`NAME=TEXT`, may be given several times)")
	tools := fs.String("tools", "", "score tool_args against the tool declarations in this JSON `file`")
	maxLatency := fs.Duration("max-latency", 0, "score latency_ok: the call took at most this `long`")
	maxCost := fs.Float64("max-cost", 0, "score cost_ok: the call cost at most this many US `dollars`")
	workers := fs.Int("workers", 0, "evaluations at once (`N`; default the CPUs)")
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(io.err, "llmhistory eval: "+format+"\n", args...)
		return code
	}
	if len(positional) != 1 {
		fail(exitUsage, "want one store URL or JSONL history FILE")
		fs.Usage()
		return exitUsage
	}
	target := positional[0]
	onStore := isStoreURL(target)
	f, err := ff.filter(time.Now())
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if !onStore && ff.given() {
		return fail(exitUsage, "filters select records of a store; import %s first (llmhistory import %s --into sqlite:history.db)", target, target)
	}

	// The recorder records the judges' calls where the history is.
	var sink record.Sink
	var st *store.Store
	var historyFile string
	if onStore {
		openCtx, cancel := context.WithTimeout(ctx, openStoreTimeout)
		st, err = store.OpenWith(openCtx, target, store.Options{Logger: slog.New(slog.DiscardHandler)})
		cancel()
		if err != nil {
			return fail(exitFailure, "%v", err)
		}
		defer st.Close()
		sink = st
	} else {
		historyFile = target
		if _, err := os.Stat(historyFile); err != nil {
			return fail(exitFailure, "%v", err)
		}
		j, err := record.OpenJSONL(historyFile)
		if err != nil {
			return fail(exitFailure, "%v", err)
		}
		sink = j // closed by the recorder
	}
	rec := middleware.NewRecorder(middleware.WithSink(sink), middleware.WithLogger(slog.New(slog.DiscardHandler)))
	defer rec.Close()

	var evs []eval.Evaluator
	if *rulesPath != "" {
		data, err := os.ReadFile(*rulesPath)
		if err != nil {
			return fail(exitUsage, "-rules: %v", err)
		}
		rules, err := eval.ParseRules(data, eval.RulesOptions{Dir: filepath.Dir(*rulesPath), Client: rec.Client(nil)})
		if err != nil {
			return fail(exitUsage, "%s: %v", *rulesPath, err)
		}
		evs = rules.Evaluators
		if !onStore && !emptyFilter(rules.Filter) {
			return fail(exitUsage, "%s: a filter selects records of a store; import %s first", *rulesPath, target)
		}
		f = mergeFilters(f, rules.Filter)
	}
	flagEvs, err := flagEvaluators(*jsonValid, *answer, schemas, regexes, contains, *tools, *maxLatency, *maxCost)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	evs = append(evs, flagEvs...)
	if len(evs) == 0 {
		fail(exitUsage, "no evaluator: give -rules FILE or an evaluator's flag (-json-valid, -answer, -regex ...)")
		fs.Usage()
		return exitUsage
	}

	bar := newStatusLine(io.err)
	start := time.Now()
	o := eval.RunOptions{Filter: f, Workers: *workers, Progress: func(done, total int64) {
		if !bar.due(total > 0 && done == total) {
			return
		}
		bar.show(progressLine(done, total, time.Since(start)))
	}}
	var res eval.RunResult
	if onStore {
		res, err = eval.Run(ctx, st, evs, o)
	} else {
		res, err = evalFile(ctx, historyFile, evs, o, io)
	}
	bar.clear()
	took := time.Since(start)
	summary := fmt.Sprintf("llmhistory eval: %s judged, %s written, %s already there",
		plural(res.Calls, "call", "calls"), plural(res.Scores, "score", "scores"), group(res.Skipped))
	if res.Conversations > 0 {
		summary += fmt.Sprintf(", over %s", plural(res.Conversations, "conversation", "conversations"))
	}
	if res.Failed > 0 {
		summary += fmt.Sprintf(", %s failed", group(res.Failed))
	}
	if took > 0 && res.Calls > 0 {
		summary += fmt.Sprintf(", in %s (%s calls/s)", took.Round(time.Millisecond), group(int64(float64(res.Calls)/took.Seconds())))
	}
	fmt.Fprintln(io.out, summary)
	for _, e := range res.Errors {
		fmt.Fprintf(io.err, "llmhistory eval: %v\n", e)
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(io.err, "llmhistory eval: stopped; run it again to go on where it was (nothing is judged twice)")
		return exitFailure
	case err != nil:
		return fail(exitFailure, "%v", err)
	case res.Failed > 0:
		return exitFailure
	}
	return exitOK
}

// evalFile judges a JSONL history and appends the scores to its scores
// file.
func evalFile(ctx context.Context, path string, evs []eval.Evaluator, o eval.RunOptions, io stdio) (eval.RunResult, error) {
	in, err := os.Open(path)
	if err != nil {
		return eval.RunResult{}, err
	}
	recs, err := record.ReadJSONL(in)
	in.Close()
	var le *record.LineError
	if err != nil && (len(recs) == 0 || !errors.As(err, &le)) {
		return eval.RunResult{}, fmt.Errorf("%s: %w", path, err)
	}
	scoresPath := store.ScoresPath(path)
	var have []store.Score
	if f, err := os.Open(scoresPath); err == nil {
		have, err = store.ReadScores(f)
		f.Close()
		if err != nil && !errors.As(err, &le) {
			return eval.RunResult{}, fmt.Errorf("%s: %w", scoresPath, err)
		}
	} else if !os.IsNotExist(err) {
		return eval.RunResult{}, err
	}
	out, err := store.OpenScoreJSONL(scoresPath)
	if err != nil {
		return eval.RunResult{}, err
	}
	res, err := eval.RunRecords(ctx, recs, have, out, evs, o)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if res.Scores > 0 {
		fmt.Fprintf(io.err, "llmhistory eval: scores in %s\n", scoresPath)
	}
	return res, err
}

// flagEvaluators makes the code evaluators the flags ask for.
func flagEvaluators(jsonValid, answer bool, schemas, regexes, contains []string, tools string, maxLatency time.Duration, maxCost float64) ([]eval.Evaluator, error) {
	var evs []eval.Evaluator
	if jsonValid {
		evs = append(evs, eval.JSONValid())
	}
	for _, s := range schemas {
		name, file, ok := strings.Cut(s, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("-schema wants NAME=FILE, not %q", s)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-schema: %v", err)
		}
		e, err := eval.JSONSchema(name, b)
		if err != nil {
			return nil, fmt.Errorf("-schema %s: %v", file, err)
		}
		evs = append(evs, e)
	}
	if tools != "" {
		b, err := os.ReadFile(tools)
		if err != nil {
			return nil, fmt.Errorf("-tools: %v", err)
		}
		e, err := eval.ToolArgs(b)
		if err != nil {
			return nil, fmt.Errorf("-tools %s: %v", tools, err)
		}
		evs = append(evs, e)
	}
	for _, s := range regexes {
		name, pattern, ok := strings.Cut(s, "=")
		if !ok || name == "" || pattern == "" {
			return nil, fmt.Errorf("-regex wants NAME=PATTERN, not %q", s)
		}
		e, err := eval.Regex(name, pattern)
		if err != nil {
			return nil, fmt.Errorf("-regex: %v", err)
		}
		evs = append(evs, e)
	}
	for _, s := range contains {
		name, text, ok := strings.Cut(s, "=")
		if !ok || name == "" || text == "" {
			return nil, fmt.Errorf("-contains wants NAME=TEXT, not %q", s)
		}
		evs = append(evs, eval.Contains(name, text))
	}
	if maxLatency < 0 || maxCost < 0 {
		return nil, errors.New("-max-latency and -max-cost must not be negative")
	}
	if maxLatency > 0 {
		evs = append(evs, eval.Latency(maxLatency))
	}
	if maxCost > 0 {
		evs = append(evs, eval.Cost(maxCost))
	}
	if answer {
		evs = append(evs, eval.Answer())
	}
	return evs, nil
}

// mergeFilters adds what the rules' filter says to the flags': a flag
// given wins over the rules for a single value; lists add up.
func mergeFilters(flags, rules store.Filter) store.Filter {
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	f := flags
	if f.Since.IsZero() {
		f.Since = rules.Since
	}
	if f.Until.IsZero() {
		f.Until = rules.Until
	}
	f.UserID, f.TraceID, f.Model = pick(f.UserID, rules.UserID), pick(f.TraceID, rules.TraceID), pick(f.Model, rules.Model)
	f.Provider, f.Method, f.Status = pick(f.Provider, rules.Provider), pick(f.Method, rules.Method), pick(f.Status, rules.Status)
	f.ErrorType, f.Text = pick(f.ErrorType, rules.ErrorType), pick(f.Text, rules.Text)
	f.MinCostUSD, f.MinDuration = max(f.MinCostUSD, rules.MinCostUSD), max(f.MinDuration, rules.MinDuration)
	f.Tags = append(append([]string(nil), f.Tags...), rules.Tags...)
	f.Scores = append(append([]store.ScoreFilter(nil), f.Scores...), rules.Scores...)
	for k, v := range rules.Metadata {
		if _, ok := f.Metadata[k]; !ok {
			if f.Metadata == nil {
				f.Metadata = map[string]string{}
			}
			f.Metadata[k] = v
		}
	}
	return f
}

// progressLine is the progress shown on a terminal: a bar when the total
// is known, the count and the rate.
func progressLine(done, total int64, took time.Duration) string {
	rate := ""
	if s := took.Seconds(); s > 0 {
		rate = fmt.Sprintf("  %s calls/s", group(int64(float64(done)/s)))
	}
	if total <= 0 {
		return fmt.Sprintf("eval: %s done%s", group(done), rate)
	}
	const width = 24
	filled := int(int64(width) * min(done, total) / total)
	eta := ""
	if done > 0 && done < total {
		eta = "  " + (time.Duration(float64(took) * float64(total-done) / float64(done))).Round(time.Second).String() + " left"
	}
	return fmt.Sprintf("eval [%s%s] %s/%s calls%s%s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		group(done), group(total), rate, eta)
}

// scoresOf reads the scores of the inputs of a report: a store's, or the
// scores file beside each history file (none is no error).
func scoresOf(ctx context.Context, inputs []string) ([]store.Score, error) {
	var all []store.Score
	for _, name := range inputs {
		if name == "-" {
			continue
		}
		if isStoreURL(name) {
			s, err := openStoreReader(ctx, name)
			if err != nil {
				return nil, err
			}
			got, err := s.Scores(ctx, store.ScoreQuery{})
			s.Close()
			if err != nil {
				return nil, err
			}
			all = append(all, got...)
			continue
		}
		f, err := os.Open(store.ScoresPath(name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		got, err := store.ReadScores(f)
		f.Close()
		var le *record.LineError
		if err != nil && !errors.As(err, &le) {
			return nil, fmt.Errorf("%s: %w", store.ScoresPath(name), err)
		}
		all = append(all, got...)
	}
	return all, nil
}
