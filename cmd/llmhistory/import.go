package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("import", "load JSONL history files into a store (SQLite or PostgreSQL)", runImport)
}

const importAbout = `Import writes the records of each FILE (JSON Lines, as the JSONL sink and
a store's spill file write them; - for standard input) into the store at
URL: sqlite:FILE (created if need be) or postgres://USER@HOST/DB. Flags
may come before or after the files. A scores file (h.scores.jsonl, as
llmhistory eval writes beside h.jsonl) is told by its first line, and its
scores are kept, one per call or conversation, name and author.

Records are written exactly once by call_id: a record the store holds
already is counted and skipped, so importing a file twice, or a spill file
the store got part of after all, doubles nothing. That is how records a
store could not take (it was down, locked, full or read-only) come back:
the store wrote them to its spill file (FILE.spill.jsonl beside a SQLite
file) and said so in its log; run

  llmhistory import history.db.spill.jsonl --into sqlite:history.db

A conversation's messages are stored once each, so a history written with
args whole takes far less room in a store than in its file.

A line that is not a record is reported as FILE:LINE: reason (the first
20) and skipped; a torn last line (a crash mid-write) is skipped. Every
FILE is opened before anything is written. Exit status: 0 when every
record read was written or held already; 1 when a file could not be read
or is not a history, or the store failed (what was written before the
failure stays written: run the import again); 2 for bad flags.`

func runImport(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("import", "FILE... --into URL", importAbout, io)
	into := fs.String("into", "", "the store's `URL`: sqlite:FILE or postgres://...")
	retain := fs.String("retain", "", "what the store keeps, kept in it and applied by every writer: `RULES` as all=1y,tag:support=30d,user:u-42=7d (ages in h, d, w, y)")
	files, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	retention, err := store.ParseRetention(*retain)
	if err != nil {
		fmt.Fprintf(io.err, "llmhistory import: --retain: %v\n", err)
		return exitUsage
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(io.err, "llmhistory import: "+format+"\n", args...)
		return code
	}
	switch {
	case *into == "":
		fail(exitUsage, "want --into URL (sqlite:FILE or postgres://...)")
		fs.Usage()
		return exitUsage
	case !isStoreURL(*into):
		return fail(exitUsage, "--into %q is not a store URL: want sqlite:FILE or postgres://...", *into)
	case len(files) == 0:
		fail(exitUsage, "want at least one FILE (- for standard input)")
		fs.Usage()
		return exitUsage
	}
	// Every file is opened before anything is written; nil is standard
	// input.
	var inputs []*os.File
	var names []string
	for _, name := range files {
		if name == "-" {
			inputs, names = append(inputs, nil), append(names, "<stdin>")
			continue
		}
		if isStoreURL(name) {
			return fail(exitUsage, "%s is a store: import reads JSONL files (llmhistory export, or query -format jsonl, writes them)", name)
		}
		f, err := os.Open(name)
		if err != nil {
			return fail(exitFailure, "%v", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return fail(exitFailure, "%s: is a directory", name)
		}
		inputs, names = append(inputs, f), append(names, name)
	}
	openCtx, cancel := context.WithTimeout(ctx, openStoreTimeout)
	s, err := store.OpenWith(openCtx, *into, store.Options{Logger: slog.New(slog.DiscardHandler),
		MaxAge: retention.MaxAge, MaxBytes: retention.MaxBytes, RetentionRules: retention.Rules})
	cancel()
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer s.Close()

	status := exitOK
	var total store.ImportResult
	start := time.Now()
	for i, f := range inputs {
		name := names[i]
		in := io.in
		if f != nil {
			in = f
		}
		listed := 0
		br := bufio.NewReaderSize(in, 64<<10)
		if isScoresFile(br) {
			res, err := s.ImportScores(ctx, br, func(line int, err error) {
				if listed < maxWarnings {
					listed++
					fmt.Fprintf(io.err, "%s:%d: %v\n", name, line, err)
				}
			})
			fmt.Fprintf(io.err, "%s: %s kept, %s skipped\n", name, plural(int64(res.Scores), "score", "scores"), plural(int64(res.BadLines), "line", "lines"))
			if err != nil {
				fmt.Fprintf(io.err, "llmhistory import: %s: %v\n", name, err)
				return exitFailure
			}
			continue
		}
		res, err := s.Import(ctx, br, func(line int, err error) {
			if listed < maxWarnings {
				listed++
				fmt.Fprintf(io.err, "%s:%d: %v\n", name, line, err)
			}
		})
		total.Records += res.Records
		total.Written += res.Written
		total.Duplicates += res.Duplicates
		total.BadLines += res.BadLines
		line := fmt.Sprintf("%s: %s: %s written, %s already there", name, plural(int64(res.Records), "record", "records"),
			group(int64(res.Written)), group(int64(res.Duplicates)))
		if res.BadLines > 0 {
			line += fmt.Sprintf(", %s skipped", plural(int64(res.BadLines), "line", "lines"))
		}
		if res.Torn {
			line += ", a torn last line skipped"
		}
		fmt.Fprintln(io.err, line)
		switch {
		case err != nil:
			fmt.Fprintf(io.err, "llmhistory import: %s: %v\n", name, err)
			fmt.Fprintln(io.err, "llmhistory import: what was written stays; run the import again to write the rest (nothing is doubled)")
			return exitFailure
		case res.Records == 0 && res.BadLines > 0:
			fmt.Fprintf(io.err, "llmhistory import: %s: not a history file: none of its lines is a record\n", name)
			status = exitFailure
		}
	}
	if len(inputs) > 1 {
		fmt.Fprintf(io.err, "llmhistory import: %s from %s into %s: %s written, %s already there, in %s\n",
			plural(int64(total.Records), "record", "records"), plural(int64(len(inputs)), "file", "files"), s.URL(),
			group(int64(total.Written)), group(int64(total.Duplicates)), time.Since(start).Round(time.Millisecond))
	}
	if r := s.Retention(); !r.IsZero() && status == exitOK {
		// Imported records the retention bounds out go now, not at the
		// next writer's run.
		res, err := s.Prune(ctx, r)
		if err != nil {
			return fail(exitFailure, "retention: %v", err)
		}
		fmt.Fprintf(io.err, "retention (%s): %s deleted\n", r, plural(res.Records, "record", "records"))
	}
	return status
}

// isScoresFile reports whether the input is a scores file (as llmhistory
// eval writes beside a history): its first line is a score.
func isScoresFile(br *bufio.Reader) bool {
	for n := 1; n <= 64<<10; n *= 4 {
		b, _ := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 || len(b) < n {
			if i >= 0 {
				b = b[:i]
			}
			return store.IsScoreLine(b)
		}
	}
	return false
}

// parseInterleaved parses flags that may come before, between or after
// the arguments ("FILE... --into URL"), as the flag package alone does
// not: it stops at the first argument. It returns the arguments, and the
// exit code to stop with, or -1 to go on.
func parseInterleaved(fs *flag.FlagSet, args []string, io stdio) ([]string, int) {
	var rest []string
	for {
		if code := parseFlags(fs, args, io); code >= 0 {
			return nil, code
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, -1
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}
