package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmhistory/llmhistory/eval/testgen"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("testgen", "turn a recorded conversation into a Go test and its cassette", runTestgen)
}

const testgenAbout = `Testgen turns the conversation TRACE (a trace ID) of the store at URL
(sqlite:FILE or postgres://...) or of a JSONL history FILE into a
regression test: a cassette in replay's format and a Go test file that
replays the recorded calls through the SDKs that made them, offline, and
checks that each returns what was recorded (the answer's text and tool
calls, the finish reason, the usage; a call that failed fails again).
Streams are replayed as streams, read through the SDK's stream reader; a
retried call replays its failed attempts as rate limits, and the test's
client retries them.

It writes DIR/NAME_test.go and DIR/testdata/NAME.jsonl (NAME from the
trace), and prints their paths. Run the test with go test in DIR's
package: its module needs the SDKs the calls used and this module
(github.com/llmhistory/llmhistory) for replay and middleware.

A record keeps the requests' messages and parameters and the answer, not
the wire bodies: testgen renders them back in each provider's format
(OpenAI chat completions, Anthropic Messages, Gemini generateContent and
streamGenerateContent). Tools are declared by name only (a record keeps
no schemas). A record does not say which OpenAI SDK sent it: -openai
chooses (go-openai by default, or openai-go). Calls of other providers
and methods (Bedrock, embeddings, the Responses API) are left out and
named, in the test's doc and on standard error.

No secret is written: the cassette is scrubbed and checked as replay
checks every cassette, and the test's clients use a placeholder key.

Examples:
  llmhistory testgen -o ./agent sqlite:history.db demo-6hdx0t-1
  llmhistory testgen -o ./agent -openai openai-go history.jsonl checkout-42
  cd agent && go test -run TestTrace

Exit status: 0 when the files were written; 1 when the trace has no call
to test or cannot be read; 2 for bad flags.`

func runTestgen(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("testgen", "[flags] URL|FILE TRACE", testgenAbout, io)
	dir := fs.String("o", ".", "write the test and its testdata/ into this `directory`")
	pkg := fs.String("package", "", "the test file's package `name` (default: the directory's name, else replaytest)")
	name := fs.String("name", "", "the test function's `name` (default: Test and the trace's ID)")
	sdk := fs.String("openai", string(testgen.GoOpenAI), "the `SDK` that made the OpenAI calls: go-openai or openai-go")
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(io.err, "llmhistory testgen: "+format+"\n", args...)
		return code
	}
	if len(positional) != 2 {
		return fail(2, "want a store URL or a file, and a trace ID (llmhistory testgen -h)")
	}
	source, trace := positional[0], positional[1]
	records, err := traceRecords(ctx, source, trace)
	if err != nil {
		return fail(1, "%v", err)
	}
	if len(records) == 0 {
		return fail(1, "%s has no record of trace %q", source, trace)
	}
	if *pkg == "" {
		*pkg = packageName(*dir)
	}
	base := fileBase(trace)
	out, err := testgen.Generate(records, testgen.Options{
		Package:  *pkg,
		Test:     *name,
		Cassette: "testdata/" + base + ".jsonl",
		OpenAI:   testgen.SDK(*sdk),
		Command:  "llmhistory testgen " + strings.Join(args, " "),
	})
	if err != nil {
		return fail(1, "%v", err)
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(io.err, "llmhistory testgen: left out %s\n", s)
	}
	testPath := filepath.Join(*dir, base+"_test.go")
	cassettePath := filepath.Join(*dir, "testdata", base+".jsonl")
	if err := os.MkdirAll(filepath.Dir(cassettePath), 0o755); err != nil {
		return fail(1, "%v", err)
	}
	if err := writeFileAtomic(cassettePath, out.Cassette); err != nil {
		return fail(1, "%v", err)
	}
	if err := writeFileAtomic(testPath, out.Test); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(io.out, "%s\n%s\n%d call(s) of trace %s\n", testPath, cassettePath, out.Calls, trace)
	return 0
}

// traceRecords reads the records of trace, oldest first, from a store or
// a JSONL file.
func traceRecords(ctx context.Context, source, trace string) ([]record.Record, error) {
	if isStoreURL(source) {
		s, err := openStoreReader(ctx, source)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		var out []record.Record
		for r, err := range s.Records(ctx, store.Filter{TraceID: trace}, store.ReadOptions{}) {
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	f, err := os.Open(source)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := record.ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var out []record.Record
	for _, r := range all {
		if r.TraceID == trace {
			out = append(out, r)
		}
	}
	return out, nil
}

// packageName is a directory's name made a Go package name, or
// replaytest.
func packageName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "replaytest"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(abs)) {
		if r >= 'a' && r <= 'z' || r == '_' || r >= '0' && r <= '9' && b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "replaytest"
	}
	return b.String()
}

// fileBase makes a trace ID a file name.
func fileBase(trace string) string {
	var b strings.Builder
	for _, r := range trace {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "conversation"
	}
	return s
}

// writeFileAtomic writes data to path through a temporary file renamed
// over it: a crash leaves the old file or the new one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
