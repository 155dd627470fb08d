package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("delete", "erase records (a user's, a conversation, a call, the old ones) from a store or history files", runDelete)
}

const deleteAbout = `Delete erases the records a filter selects from a store (sqlite:FILE,
postgres://...) or from JSONL history files, and everything that holds
something of them: in a store, their text index entries, tags and
metadata, scores, the messages no other record uses, the users and tags
no other record has, and their share of the hourly figures, rebuilt from
the records that stay; beside a history file, their scores in its scores
file. A message another record still uses stays: it is that record's too.

  llmhistory delete --user user-42 sqlite:history.db
  llmhistory delete --trace 01JD2Q8Z... --yes postgres://llm@db/history
  llmhistory delete --before 8760h history.jsonl old/*.jsonl

It first says what it will delete, counted, and asks (reading the answer
from standard input) unless --yes. A store then makes the deleted bytes
unreadable in its files (SQLite: zeroed, in the text index too, the WAL
truncated; PostgreSQL: VACUUM FULL of the tables it touched) and prints
its receipt: what went, by kind, and the queries run afterwards that
found nothing of it. A file is rewritten whole, atomically (a temporary
file beside it, synced, renamed over it); --backup keeps the old one as
FILE.bak. docs/privacy.md says what stays where (PostgreSQL's WAL, backups).

Exit status: 0 when the records are deleted (or none matched); 1 when
something failed, or the answer was not yes; 2 for a usage error (no
filter: delete never empties a history by default).`

// deleteFilter is what the delete command selects by: the fields a JSONL
// file can be tested against as a store is.
type deleteFilter struct {
	user, trace, call string
	before            time.Time
}

func (d deleteFilter) store() store.Filter {
	return store.Filter{UserID: d.user, TraceID: d.trace, CallID: d.call, Until: d.before}
}

func (d deleteFilter) empty() bool {
	return d.user == "" && d.trace == "" && d.call == "" && d.before.IsZero()
}

// matches reports whether a record line's fields are selected.
func (d deleteFilter) matches(r *lineFields) bool {
	if d.user != "" && r.UserID != d.user || d.trace != "" && r.TraceID != d.trace || d.call != "" && r.CallID != d.call {
		return false
	}
	if !d.before.IsZero() {
		t, err := record.ParseTime(r.Timestamp)
		if err != nil || !t.Before(d.before) {
			return false
		}
	}
	return true
}

// lineFields are the fields of a record line the filter reads.
type lineFields struct {
	CallID    string `json:"call_id"`
	TraceID   string `json:"trace_id"`
	UserID    string `json:"user_id"`
	Timestamp string `json:"timestamp"`
}

func runDelete(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("delete", "[flags] URL|FILE...", deleteAbout, io)
	var df deleteFilter
	var before string
	fs.StringVar(&df.user, "user", "", "the records of this user `id`")
	fs.StringVar(&df.trace, "trace", "", "the records of this `trace` (conversation)")
	fs.StringVar(&df.call, "call", "", "the record of this call `id`")
	fs.StringVar(&before, "before", "", "the records before this `time` (RFC 3339, a date, or this long ago: 720h)")
	yes := fs.Bool("yes", false, "delete without asking")
	backup := fs.Bool("backup", false, "keep each rewritten history file as FILE.bak (and its scores file)")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	var err error
	if df.before, err = parseWhen(before, time.Now()); err != nil {
		fmt.Fprintf(io.err, "llmhistory delete: --before: %v\n", err)
		return exitUsage
	}
	if df.empty() {
		fmt.Fprintln(io.err, "llmhistory delete: say what to delete: --user, --trace, --call or --before (delete never empties a history by default)")
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(io.err, "llmhistory delete: name a store (sqlite:FILE, postgres://...) or history files")
		return exitUsage
	}
	targets := make([]deleteTarget, 0, fs.NArg())
	defer func() {
		for _, t := range targets {
			t.close()
		}
	}()
	total := 0
	for _, arg := range fs.Args() {
		t, err := openDeleteTarget(ctx, arg, df)
		if err != nil {
			fmt.Fprintf(io.err, "llmhistory delete: %s: %v\n", arg, err)
			return exitFailure
		}
		targets = append(targets, t)
		n, plan, err := t.plan(ctx)
		if err != nil {
			fmt.Fprintf(io.err, "llmhistory delete: %s: %v\n", arg, err)
			return exitFailure
		}
		total += n
		fmt.Fprintf(io.out, "%s: %s\n", arg, plan)
	}
	if total == 0 {
		fmt.Fprintln(io.out, "nothing to delete")
		return exitOK
	}
	if !*yes {
		fmt.Fprintf(io.out, "Delete %s? [y/N] ", plural(int64(total), "record", "records"))
		answer, _ := bufio.NewReader(io.in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(io.out, "nothing deleted")
			return exitFailure
		}
	}
	code := exitOK
	for i, t := range targets {
		receipt, err := t.delete(ctx, *backup)
		if receipt != "" {
			fmt.Fprintf(io.out, "%s: %s\n", fs.Arg(i), receipt)
		}
		if err != nil {
			fmt.Fprintf(io.err, "llmhistory delete: %s: %v\n", fs.Arg(i), err)
			code = exitFailure
		}
	}
	return code
}

// deleteTarget is a store or a history file to delete from.
type deleteTarget interface {
	// plan counts what will go, and says it.
	plan(ctx context.Context) (int, string, error)
	// delete deletes it, and says what it did.
	delete(ctx context.Context, backup bool) (string, error)
	close()
}

func openDeleteTarget(ctx context.Context, arg string, df deleteFilter) (deleteTarget, error) {
	if isStoreURL(arg) {
		openCtx, cancel := context.WithTimeout(ctx, openStoreTimeout)
		defer cancel()
		s, err := store.OpenWith(openCtx, arg, store.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, err
		}
		return &storeTarget{s: s, f: df.store()}, nil
	}
	if _, err := os.Stat(arg); err != nil {
		return nil, err
	}
	return &fileTarget{path: arg, df: df}, nil
}

type storeTarget struct {
	s *store.Store
	f store.Filter
}

func (t *storeTarget) plan(ctx context.Context) (int, string, error) {
	n, err := t.s.Count(ctx, t.f)
	if err != nil {
		return 0, "", err
	}
	all, err := t.s.Count(ctx, store.Filter{})
	if err != nil {
		return 0, "", err
	}
	return int(n), fmt.Sprintf("%d of %d records match", n, all), nil
}

func (t *storeTarget) delete(ctx context.Context, _ bool) (string, error) {
	rc, err := t.s.Delete(ctx, t.f)
	return formatReceipt(&rc), err
}

func (t *storeTarget) close() { t.s.Close() }

// formatReceipt says a store's receipt, a line a kind.
func formatReceipt(rc *store.Receipt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "deleted %s (%s whole)\n", plural(rc.Records, "record", "records"), plural(rc.Traces, "conversation", "conversations"))
	for _, l := range []struct {
		n    int64
		what string
	}{
		{rc.TextEntries, "full-text entries"},
		{rc.Attributes, "tags and metadata values"},
		{rc.Scores, "scores"},
		{rc.Messages, "messages no other record uses"},
		{rc.MessagesShared, "messages kept: other records use them"},
		{rc.Restacked, "records that built on a deleted one, rewritten to stand alone"},
		{rc.Names, "filter values no other record has (users, tags, models...)"},
		{rc.RollupRows, fmt.Sprintf("rollup rows rebuilt from the records that stay (%d before)", rc.RollupRowsBefore)},
	} {
		fmt.Fprintf(&b, "  %6d  %s\n", l.n, l.what)
	}
	for _, s := range rc.Scrubbed {
		fmt.Fprintf(&b, "  done: %s\n", s)
	}
	for _, c := range rc.Checks {
		fmt.Fprintf(&b, "  check: %-46s %d left\n", c.Name, c.Found)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// fileTarget is a JSONL history file, and the scores file beside it.
type fileTarget struct {
	path string
	df   deleteFilter

	calls, traces map[string]bool // of the records that go
	keptTraces    map[string]bool
	records, kept int
	scores        int // scores that go
}

// scan reads the file, counting what goes; keep, when not nil, gets each
// line that stays.
func (t *fileTarget) scan(keep func(line []byte) error) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	t.calls, t.traces, t.keptTraces = map[string]bool{}, map[string]bool{}, map[string]bool{}
	t.records, t.kept = 0, 0
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var lf lineFields
			if json.Unmarshal(line, &lf) == nil && lf.CallID != "" && t.df.matches(&lf) {
				t.records++
				t.calls[lf.CallID] = true
				if lf.TraceID != "" {
					t.traces[lf.TraceID] = true
				}
			} else {
				if lf.CallID != "" {
					t.kept++
					t.keptTraces[lf.TraceID] = true
				}
				if keep != nil {
					if err := keep(line); err != nil {
						return err
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// scoreGoes reports whether a score line is on a record that goes, or on
// a conversation none of whose records stays.
func (t *fileTarget) scoreGoes(line []byte) bool {
	sc, err := store.DecodeScoreLine(line)
	if err != nil {
		return false
	}
	if sc.CallID != "" {
		return t.calls[sc.CallID]
	}
	return t.traces[sc.TraceID] && !t.keptTraces[sc.TraceID]
}

func (t *fileTarget) plan(context.Context) (int, string, error) {
	if err := t.scan(nil); err != nil {
		return 0, "", err
	}
	t.scores = 0
	err := eachLine(store.ScoresPath(t.path), func(line []byte) error {
		if t.scoreGoes(line) {
			t.scores++
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, "", err
	}
	plan := fmt.Sprintf("%d of %d records match", t.records, t.records+t.kept)
	if t.scores > 0 {
		plan += fmt.Sprintf("; %s in %s", plural(int64(t.scores), "score", "scores"), filepath.Base(store.ScoresPath(t.path)))
	}
	return t.records, plan, nil
}

func (t *fileTarget) delete(_ context.Context, backup bool) (string, error) {
	if t.records == 0 {
		return "nothing to delete", nil
	}
	err := rewriteAtomically(t.path, backup, func(w io.Writer) error {
		return t.scan(func(line []byte) error { _, err := w.Write(line); return err })
	})
	if err != nil {
		return "", err
	}
	scores := 0
	sp := store.ScoresPath(t.path)
	if _, err := os.Stat(sp); err == nil {
		err := rewriteAtomically(sp, backup, func(w io.Writer) error {
			return eachLine(sp, func(line []byte) error {
				if t.scoreGoes(line) {
					scores++
					return nil
				}
				_, err := w.Write(line)
				return err
			})
		})
		if err != nil {
			return "", err
		}
	}
	// The check: read again, nothing of the filter is left.
	deleted := t.records
	if err := t.scan(nil); err != nil {
		return "", err
	}
	out := fmt.Sprintf("deleted %s, kept %d; deleted %s", plural(int64(deleted), "record", "records"), t.kept, plural(int64(scores), "score", "scores"))
	if backup {
		out += "; the old file kept as " + t.path + ".bak"
	}
	out += fmt.Sprintf("\n  check: records of the filter left in the file  %d left", t.records)
	if t.records != 0 {
		return out, fmt.Errorf("%d records of the filter are still in the file", t.records)
	}
	return out, nil
}

func (t *fileTarget) close() {}

// eachLine calls fn with each line of a file.
func eachLine(path string, fn func(line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// rewriteAtomically replaces a file with what write writes: into a
// temporary file beside it (same directory, so the rename is atomic),
// synced, with the file's mode, renamed over it, and the directory
// synced; the old file is kept as path.bak when backup. A failure leaves
// the file as it was.
func rewriteAtomically(path string, backup bool, write func(io.Writer) error) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".delete-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<16)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if backup {
		if err := os.Link(path, path+".bak"); err != nil {
			if err := os.Remove(path + ".bak"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if err := os.Link(path, path+".bak"); err != nil {
				return fmt.Errorf("keep a backup: %w", err)
			}
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
