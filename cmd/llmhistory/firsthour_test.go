package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a newcomer meets in the first hour with the command.

func TestHelpCommand(t *testing.T) {
	code, stdout, stderr := runCmd(t, "", "help", "report")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.True(t, strings.HasPrefix(stdout, "usage: llmhistory report [flags] [FILE|URL...]"), stdout)
	assert.Contains(t, stdout, "-min-evidence")
	assert.Contains(t, stdout, "-prices FILE")

	code, stdout, _ = runCmd(t, "", "help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "usage: llmhistory <command>")

	code, _, stderr = runCmd(t, "", "help", "frobnicate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `llmhistory help: unknown command "frobnicate"`)
}

func TestFlagValuesAreChecked(t *testing.T) {
	good := writeHistory(t, t.TempDir(), "h.jsonl", 2, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-top", "-3", good}, "llmhistory report: -top must be at least 1, not -3"},
		{[]string{"report", "-top", "0", good}, "llmhistory report: -top must be at least 1, not 0"},
		{[]string{"report", "-min-evidence", "-1", good}, "llmhistory report: -min-evidence must be at least 1, not -1"},
		{[]string{"tail", "-n", "-1", good}, "llmhistory tail: -n must be 0 or more, not -1"},
		{[]string{"tail", "-poll", "0s", good}, "llmhistory tail: -poll must be more than 0, not 0s"},
		{[]string{"tail", "-poll", "-1s", good}, "llmhistory tail: -poll must be more than 0, not -1s"},
	} {
		code, stdout, stderr := runCmd(t, "", c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Equal(t, c.want+"\n", stderr, c.args)
		assert.Empty(t, stdout, c.args)
	}
}

// A file of random bytes, or of JSON objects that are not records, is not
// a history: the command says so and fails, instead of a report of 0
// records and success.
func TestReportNotAHistory(t *testing.T) {
	dir := t.TempDir()
	noise := writeFile(t, dir, "noise.bin", "\x8f\x00\x13garbage\xff\n\x01\x02\n{}\n")
	out := filepath.Join(dir, "r.md")
	code, stdout, stderr := runCmd(t, "", "report", "-o", out, noise)
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, noise+":1: ")
	assert.Contains(t, stderr, noise+":3: not a record: no call_id,")
	assert.Contains(t, stderr, "llmhistory report: "+noise+": not a history file: none of its 3 lines is a record\n")
	assert.NoFileExists(t, out, "no report of nothing")
	left, _ := filepath.Glob(filepath.Join(dir, ".r.md.*"))
	assert.Empty(t, left)

	objects := writeFile(t, dir, "objects.jsonl", `{"call_id":"x"}`+"\n")
	code, _, stderr = runCmd(t, "", "report", objects)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, objects+": not a history file: its one line is not a record")

	// With a history beside it, the report of the history is written, and
	// the run still fails for the input that was not one.
	good := writeHistory(t, dir, "good.jsonl", 3, "")
	code, stdout, stderr = runCmd(t, "", "report", good, noise)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, "3 calls, ")
	assert.Contains(t, stdout, "| "+noise+" | 3 | 0 | 3 |")
	assert.Contains(t, stderr, noise+": not a history file")
}

// failingReader fails the test if anything reads it.
type failingReader struct{ t *testing.T }

func (f failingReader) Read([]byte) (int, error) {
	f.t.Error("the input was read although the run could not succeed")
	return 0, os.ErrClosed
}

// A wrong -o fails before a long read, and names the file asked for.
func TestReportOutputCheckedFirst(t *testing.T) {
	target := filepath.Join(t.TempDir(), "nonexistent", "x.md")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"report", "-o", target, "-"}, stdio{in: failingReader{t}, out: &out, err: &errb})
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "llmhistory report: write "+target+": no such file or directory\n", errb.String())
	assert.NotContains(t, errb.String(), ".x.md.")
}

func TestScanDirectory(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCmd(t, "", "scan", dir)
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "llmhistory scan: "+dir+": is a directory; scan reads files\n", stderr)
}

func TestTailStandardInput(t *testing.T) {
	in := line(testRecord(1, true)) + line(testRecord(2, true)) + line(testRecord(3, false))
	code, stdout, stderr := runCmd(t, in, "tail", "-n", "2", "-color", "never", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "…00000002")
	assert.Contains(t, lines[1], "…00000003")

	// The last line of a pipe needs no newline to count.
	code, stdout, _ = runCmd(t, strings.TrimSuffix(in, "\n"), "tail", "-color", "never", "-")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "…00000003")
}

// tail lists the first 20 lines of each kind of trouble and counts the
// rest; a file none of whose lines is a record is not a history.
func TestTailBadLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	appendFile(t, path, line(testRecord(1, true))+strings.Repeat("noise\n", 50))
	code, stdout, stderr := runCmd(t, "", "tail", "-f=false", "-color", "never", path)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "…00000001")
	assert.Equal(t, 20, strings.Count(stderr, `invalid JSON at offset 0: unexpected "noise"`), stderr)
	assert.Contains(t, stderr, path+": more lines that are not records; no longer listing them\n")
	assert.Contains(t, stderr, "llmhistory tail: "+path+": 30 more lines that are not records\n")

	noise := filepath.Join(dir, "noise.bin")
	appendFile(t, noise, "\x8f\x00garbage\n\x01\x02\n")
	for _, follow := range []string{"-f=true", "-f=false"} {
		code, _, stderr = runCmd(t, "", "tail", follow, "-poll", "1ms", noise)
		assert.Equal(t, exitFailure, code, follow)
		assert.Contains(t, stderr, "llmhistory tail: "+noise+": not a history file: none of its 2 lines is a record", follow)
	}
}

// The demo never destroys a file it did not make: a history of someone
// else's, or a report, stays as it was and the demo stops before any call.
func TestDemoLeavesOtherFilesAlone(t *testing.T) {
	dir := t.TempDir()
	theirs := writeHistory(t, dir, "history.jsonl", 3, "")
	before, err := os.ReadFile(theirs)
	require.NoError(t, err)
	code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", theirs, "-format", "none")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "llmhistory demo: "+theirs+" exists and was not written by the demo; not replacing it")
	assert.NotContains(t, stderr, "OpenAI:", "stopped before anything ran")
	after, err := os.ReadFile(theirs)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	notes := writeFile(t, dir, "notes.txt", "my notes\n")
	code, _, stderr = runCmd(t, "", "demo", "-provider", "fake", "-o", notes, "-format", "none")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "not replacing it")
	got, _ := os.ReadFile(notes)
	assert.Equal(t, "my notes\n", string(got))

	mine := filepath.Join(dir, "demo.jsonl")
	myReport := writeFile(t, dir, "review.md", "# My review\n")
	code, _, stderr = runCmd(t, "", "demo", "-provider", "fake", "-o", mine, "-report", myReport)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, myReport+" exists and was not written by the demo")
	got, _ = os.ReadFile(myReport)
	assert.Equal(t, "# My review\n", string(got))
	assert.NoFileExists(t, mine)

	// What the demo wrote, it may write again.
	report := filepath.Join(dir, "demo-report.md")
	for range 2 {
		code, _, stderr = runCmd(t, "", "demo", "-provider", "fake", "-o", mine, "-report", report, "-color", "never")
		require.Equal(t, exitOK, code, stderr)
	}
	assert.FileExists(t, report)
}

func TestCommandFor(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n"), 0o644))
	sub := filepath.Join(root, "cmd", "llmhistory")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/app\n"), 0o644))
	goRun := filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "llmhistory") // where go run builds
	// Where go run (Go 1.24 on) starts the binary it cached, from the
	// second run on.
	hash := "2ec616f947efcc0bcbf602a839abe41ec72e0d025aa5a175e4a56d879485161c"
	cached := filepath.Join("/home/u/.cache/go-build", hash[:2], hash+"-d", "llmhistory")
	for _, c := range []struct{ arg0, exe, cwd, want string }{
		{cached, cached, root, "go run ./cmd/llmhistory"},
		{cached, cached, other, "go run " + modulePath + "/cmd/llmhistory@latest"},
		{"/x/2e/not-a-hash-d/llmhistory", "/x/2e/not-a-hash-d/llmhistory", other, "/x/2e/not-a-hash-d/llmhistory"},
		{"llmhistory", "/home/u/go/bin/llmhistory", other, "llmhistory"},
		{"./llmhistory", "/src/llmhistory", other, "./llmhistory"},
		{"/opt/my tools/llmhistory", "/opt/my tools/llmhistory", other, "'/opt/my tools/llmhistory'"},
		{goRun, goRun, root, "go run ./cmd/llmhistory"},
		{goRun, goRun, sub, "go run " + modulePath + "/cmd/llmhistory"},
		{goRun, goRun, other, "go run " + modulePath + "/cmd/llmhistory@latest"},
	} {
		assert.Equal(t, c.want, commandFor(c.arg0, c.exe, c.cwd), "%+v", c)
	}
}

// The demo's closing hint works as printed: run through the real binary,
// by its path and through PATH, the hint names that binary, and running
// the hint tails the file the demo wrote.
func TestDemoHintRunsAsPrinted(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "llmhistory")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	work := t.TempDir()
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, arg0 := range []string{bin, "llmhistory"} {
		cmd := exec.Command(arg0, "demo", "-provider", "fake", "-format", "none", "-color", "never")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "GEMINI_API_KEY=", "GOOGLE_API_KEY=", "ANTHROPIC_API_KEY=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Run(), stderr.String())
		const lead = "Follow the file as it grows: "
		i := strings.LastIndex(stderr.String(), lead)
		require.GreaterOrEqual(t, i, 0, stderr.String())
		hint, _, _ := strings.Cut(stderr.String()[i+len(lead):], "\n")
		hint = strings.TrimSpace(hint)
		assert.Equal(t, arg0+" tail history.jsonl", hint)

		// Run the hint as a shell would; it follows the file, so it is
		// stopped once it has shown the demo's records (the context is
		// only a guard against a hang).
		args := strings.Fields(hint)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		tail := exec.CommandContext(ctx, args[0], append(args[1:2], append([]string{"-color", "never"}, args[2:]...)...)...)
		tail.Dir = work
		stdout, err := tail.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, tail.Start())
		var out strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "openai.chat.completions.create") && strings.Contains(out.String(), "anthropic.messages.create") {
				break
			}
		}
		cancel()
		_ = tail.Wait()
		assert.Contains(t, out.String(), "anthropic.messages.create", "the hint tails the demo's history")
	}
}
