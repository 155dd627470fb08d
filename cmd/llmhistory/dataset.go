package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
)

func init() {
	register("dataset", "build a dataset of calls or conversations, show it, export it for fine-tuning", runDataset)
}

const datasetAbout = `Dataset keeps examples taken from history in a JSONL file that a person
reviews in a pull request: one item a line (its input messages, the tools
offered, the parameters, the recorded answer as the reference, the user,
tags and metadata, and the call IDs it came from), after a header line with
the dataset's name and content version. An item's id is a digest of what
it asks and answers: the same exchange found twice is one item, its
sources merged.

  llmhistory dataset build -o FILE [flags] URL|HISTORY...
      add the calls of a store that the filters select (query's filters:
      llmhistory query -h), or of JSONL history files, to the dataset FILE
      (made when it does not exist); -conversations makes one item of each
      conversation: its last answered call, whose input is the
      conversation so far
  llmhistory dataset show FILE
      the dataset's name, version and items
  llmhistory dataset export [-format F] [-tools FILE] [-o OUT] FILE
      write the items as fine-tuning examples, F one of openai (OpenAI's
      chat format), gemini (Vertex AI's) or anthropic (Claude's on Amazon
      Bedrock: text only, so items with tool calls are skipped, and
      named). A record keeps tools' names: give their declarations
      (OpenAI's shape) with -tools

Examples:
  llmhistory dataset build -o support.jsonl -tag support -score thumbs=true \
      sqlite:history.db
  llmhistory dataset build -o trips.jsonl -conversations history.jsonl
  llmhistory dataset export -format openai -o train.jsonl support.jsonl

Exit status: 0 on success; 1 when a file or store cannot be read or
written; 2 for bad flags.`

func runDataset(ctx context.Context, args []string, io stdio) int {
	if len(args) > 0 {
		switch args[0] {
		case "build":
			return runDatasetBuild(ctx, args[1:], io)
		case "show":
			return runDatasetShow(args[1:], io)
		case "export":
			return runDatasetExport(args[1:], io)
		}
	}
	fs := newFlags("dataset", "build|show|export [flags] ...", datasetAbout, io)
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	if len(args) == 0 {
		fmt.Fprintln(io.err, "llmhistory dataset: want build, show or export")
	} else {
		fmt.Fprintf(io.err, "llmhistory dataset: unknown subcommand %q (want build, show or export)\n", args[0])
	}
	fs.SetOutput(io.err)
	fs.Usage()
	return exitUsage
}

func datasetFail(io stdio, code int, format string, args ...any) int {
	fmt.Fprintf(io.err, "llmhistory dataset: "+format+"\n", args...)
	return code
}

func runDatasetBuild(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("dataset build", "-o FILE [flags] URL|HISTORY...", datasetAbout, io)
	ff := filterFlagsOn(fs)
	out := fs.String("o", "", "the dataset `file` to add to (made when absent)")
	name := fs.String("name", "", "the dataset's `name`, when the file is new (default the file's name)")
	convs := fs.Bool("conversations", false, "one item per conversation (its last answered call) instead of one per call")
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	if *out == "" || len(positional) == 0 {
		datasetFail(io, exitUsage, "want -o FILE and a store URL or history files")
		fs.SetOutput(io.err)
		fs.Usage()
		return exitUsage
	}
	f, err := ff.filter(time.Now())
	if err != nil {
		return datasetFail(io, exitUsage, "%v", err)
	}
	o := eval.BuildOptions{Conversations: *convs}
	var items []eval.Item
	var res eval.BuildResult
	if len(positional) == 1 && isStoreURL(positional[0]) {
		st, err := openStoreReader(ctx, positional[0])
		if err != nil {
			return datasetFail(io, exitFailure, "%v", err)
		}
		items, res, err = eval.ItemsFromStore(ctx, st, f, o)
		st.Close()
		if err != nil {
			return datasetFail(io, exitFailure, "%s: %v", positional[0], err)
		}
	} else {
		if ff.given() {
			return datasetFail(io, exitUsage, "filters select records of a store; import the files first (llmhistory import FILE --into sqlite:history.db)")
		}
		var recs []record.Record
		for _, p := range positional {
			if isStoreURL(p) {
				return datasetFail(io, exitUsage, "one store URL, or history files, not both")
			}
			in, err := os.Open(p)
			if err != nil {
				return datasetFail(io, exitFailure, "%v", err)
			}
			got, err := record.ReadJSONL(in)
			in.Close()
			var le *record.LineError
			if err != nil && !errors.As(err, &le) {
				return datasetFail(io, exitFailure, "%s: %v", p, err)
			}
			if err != nil {
				fmt.Fprintf(io.err, "llmhistory dataset: %s: %v (those lines left out)\n", p, err)
			}
			recs = append(recs, got...)
		}
		items, res = eval.ItemsFromRecords(recs, o)
	}
	dsName := *name
	if dsName == "" {
		dsName = strings.TrimSuffix(filepath.Base(*out), filepath.Ext(*out))
	}
	before := 0
	if d, err := eval.ReadDatasetFile(*out); err == nil {
		before = len(d.Items)
	} else if !errors.Is(err, os.ErrNotExist) {
		return datasetFail(io, exitFailure, "%v", err)
	}
	added, err := eval.AppendToDatasetFile(*out, dsName, items...)
	if err != nil {
		return datasetFail(io, exitFailure, "%v", err)
	}
	d, err := eval.ReadDatasetFile(*out)
	if err != nil {
		return datasetFail(io, exitFailure, "%v", err)
	}
	unit := "call"
	if *convs {
		unit = "conversation"
	}
	fmt.Fprintf(io.out, "%s: %s, version %s (%d new, %d already there", *out,
		plural(int64(len(d.Items)), "item", "items"), d.Version(), added, len(items)-added)
	if before > 0 {
		fmt.Fprintf(io.out, ", %d before", before)
	}
	fmt.Fprintf(io.out, "); %s read", plural(int64(res.Calls), "call", "calls"))
	if res.Skipped > 0 {
		fmt.Fprintf(io.out, ", %s without an answer to keep left out", plural(int64(res.Skipped), unit, unit+"s"))
	}
	fmt.Fprintln(io.out)
	return exitOK
}

func runDatasetShow(args []string, io stdio) int {
	fs := newFlags("dataset show", "FILE", datasetAbout, io)
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	if len(positional) != 1 {
		return datasetFail(io, exitUsage, "show wants one dataset FILE")
	}
	d, err := eval.ReadDatasetFile(positional[0])
	if err != nil {
		return datasetFail(io, exitFailure, "%v", err)
	}
	fmt.Fprintf(io.out, "dataset %q: %s, version %s\n", d.Name, plural(int64(len(d.Items)), "item", "items"), d.Version())
	for i := range d.Items {
		it := &d.Items[i]
		model := ""
		if m, ok := it.Params["model"]; ok {
			model, _ = record.String(m)
		}
		asked := ""
		for j := len(it.Input) - 1; j >= 0; j-- {
			if it.Input[j].Role == record.RoleUser {
				asked = it.Input[j].Text()
				break
			}
		}
		fmt.Fprintf(io.out, "\n%s  %s  %d messages  %s\n", it.ID, orNone(model), len(it.Input), plural(int64(len(it.Sources)), "source", "sources"))
		fmt.Fprintf(io.out, "  asked:   %s\n", clipLine(asked, 100))
		fmt.Fprintf(io.out, "  answer:  %s\n", clipLine(answerLine(it.Reference), 100))
	}
	return exitOK
}

// answerLine is a reference answer on one line: its text, or the tools it
// calls.
func answerLine(m *record.Message) string {
	if m == nil {
		return "(none)"
	}
	if t := m.Text(); t != "" {
		return t
	}
	var calls []string
	for _, p := range m.Parts {
		if p.Type == record.PartToolCall {
			calls = append(calls, p.Name+"("+p.ArgumentsText()+")")
		}
	}
	if len(calls) > 0 {
		return "calls " + strings.Join(calls, ", ")
	}
	return "(no text)"
}

func orNone(s string) string {
	if s == "" {
		return "(no model)"
	}
	return s
}

// clipLine puts s on one line of at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func runDatasetExport(args []string, io stdio) int {
	fs := newFlags("dataset export", "[-format openai|gemini|anthropic] [-tools FILE] [-o OUT] FILE", datasetAbout, io)
	format := fs.String("format", "openai", "the fine-tuning `format`: openai, gemini (Vertex AI) or anthropic (Claude on Bedrock)")
	toolsPath := fs.String("tools", "", "the tools' declarations, a JSON `file` in OpenAI's shape ([{\"type\":\"function\",\"function\":{...}}])")
	outPath := fs.String("o", "", "write to this `file` instead of standard output")
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	if len(positional) != 1 {
		return datasetFail(io, exitUsage, "export wants one dataset FILE")
	}
	if !slices.Contains(eval.ExportFormats, eval.ExportFormat(*format)) {
		return datasetFail(io, exitUsage, "-format %q: want openai, gemini or anthropic", *format)
	}
	var o eval.ExportOptions
	if *toolsPath != "" {
		b, err := os.ReadFile(*toolsPath)
		if err != nil {
			return datasetFail(io, exitUsage, "-tools: %v", err)
		}
		o.Tools = b
	}
	d, err := eval.ReadDatasetFile(positional[0])
	if err != nil {
		return datasetFail(io, exitFailure, "%v", err)
	}
	w := io.out
	var file *os.File
	if *outPath != "" {
		if file, err = os.Create(*outPath); err != nil {
			return datasetFail(io, exitFailure, "%v", err)
		}
		w = file
	}
	res, err := eval.Export(w, d, eval.ExportFormat(*format), o)
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil && *outPath != "" {
		os.Remove(*outPath) // never half an export
	}
	if err != nil {
		return datasetFail(io, exitFailure, "%v", err)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(io.err, "llmhistory dataset: item %s skipped: %s\n", s.ID, s.Reason)
	}
	if *outPath != "" {
		fmt.Fprintf(io.out, "%s: %s in %s's format", *outPath, plural(int64(res.Written), "example", "examples"), *format)
		if len(res.Skipped) > 0 {
			fmt.Fprintf(io.out, ", %d skipped", len(res.Skipped))
		}
		fmt.Fprintln(io.out)
	}
	return exitOK
}
