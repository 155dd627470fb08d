package record_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// The crash test runs a child process (this test binary again, in
// TestCrashHelperProcess) that appends records to a JSONL file through
// OpenJSONL as fast as it can, and kills it with SIGKILL at a random
// moment. A kill can land inside a write(2) of a long line, which the
// kernel then cuts short: the file ends in a torn line. The parent repairs
// the file (RepairJSONL, or OpenJSONL, which repairs on open) and checks
// that what is left is a clean prefix of what the child wrote: every line
// whole and valid, call ids consecutive from 0, nothing whole lost. The
// next round appends to the repaired file, so repairs compound.
const (
	crashEnvPath  = "LLMHISTORY_CRASH_PATH"
	crashEnvStart = "LLMHISTORY_CRASH_START"
)

// crashPayloadSizes are the sizes of the one argument of the records the
// child writes, in turn: small lines, and lines long enough (up to 4 MiB)
// that a write of one takes long enough to be interrupted.
var crashPayloadSizes = []int{200, 4 << 10, 300, 256 << 10, 1 << 20, 100, 4 << 20, 64 << 10}

func crashCallID(i int) string { return fmt.Sprintf("call-%09d", i) }

// TestCrashHelperProcess is the child: it is not a test of its own and
// returns at once unless the parent started it.
func TestCrashHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnvPath)
	if path == "" {
		t.Skip("helper process for TestJSONLSurvivesSIGKILL")
	}
	start, err := strconv.Atoi(os.Getenv(crashEnvStart))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad start:", err)
		os.Exit(2)
	}
	// One Write per line (BufferSize 1: every line is longer than the
	// buffer), so every record is on its way to the kernel when Append
	// returns, and a kill can only tear the line being written.
	j, err := record.OpenJSONLWith(path, record.JSONLOptions{BufferSize: 1, FlushInterval: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	args := make([]json.RawMessage, len(crashPayloadSizes))
	for i, n := range crashPayloadSizes {
		args[i] = record.ArgsJSON(strings.Repeat("history ", n/8))
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second) // never outlive a parent that forgot us
	for i := start; time.Now().Before(deadline); i++ {
		r := record.Record{
			CallID:     crashCallID(i),
			Timestamp:  record.FormatTime(time.Now()),
			Speaker:    record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			Args:       args[i%len(args)],
			Kwargs:     record.KwargsJSON(map[string]any{"model": "gpt-4o-mini", "n": i}),
			Outcome:    record.Success("chat.completion"),
		}
		if err := j.Append(ctx, r); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(2)
		}
		if i == start {
			fmt.Println("ready") // the parent starts its clock now
		}
	}
	os.Exit(3) // killed too late: the parent reports it
}

func TestJSONLSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	rounds := 6
	if os.Getenv("LLMHISTORY_LONG") != "" {
		rounds = 40
	}
	var torn, cutBytes, total int
	for round := range rounds {
		// Kill after 1 to 60 ms of writing: sometimes between lines,
		// sometimes inside a long one.
		delay := time.Millisecond + rand.N(60*time.Millisecond)
		crashChild(t, path, total, delay)

		before, err := os.ReadFile(path)
		require.NoError(t, err)
		whole := bytes.LastIndexByte(before, '\n') + 1 // bytes of whole lines
		tail := before[whole:]

		// Alternate the two ways of repairing.
		var cut int64
		if round%2 == 0 {
			cut, err = record.RepairJSONL(path)
			require.NoError(t, err)
		} else {
			j, err := record.OpenJSONL(path)
			require.NoError(t, err)
			require.NoError(t, j.Close())
		}
		after, err := os.ReadFile(path)
		require.NoError(t, err)

		// Repair only ever touches the torn tail: the whole lines are kept
		// byte for byte, and the tail is cut unless it was a whole record
		// missing only its newline.
		require.True(t, bytes.HasPrefix(after, before[:whole]), "round %d: repair changed whole lines", round)
		switch {
		case len(tail) == 0:
			require.Len(t, after, len(before), "round %d: nothing to repair", round)
		case json.Valid(tail):
			require.Equal(t, string(before)+"\n", string(after), "round %d: a whole last record keeps its place", round)
		default:
			torn++
			cutBytes += len(tail)
			require.Len(t, after, whole, "round %d: the torn tail is cut", round)
			if round%2 == 0 {
				require.EqualValues(t, len(tail), cut, "round %d: RepairJSONL reports the bytes cut", round)
			}
		}

		n := checkCrashFile(t, path, round)
		require.GreaterOrEqual(t, n, total, "round %d: records whole before the crash were lost", round)
		t.Logf("round %d: killed after %v; %d records (+%d); torn tail of %d bytes", round, delay, n, n-total, len(tail))
		total = n
	}
	t.Logf("%d rounds, %d torn tails repaired (%d bytes cut), %d records whole", rounds, torn, cutBytes, total)
}

// crashChild runs the helper process writing records from start on, and
// kills it delay after it has written its first record.
func crashChild(t *testing.T, path string, start int, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvPath+"="+path, crashEnvStart+"="+strconv.Itoa(start))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("unexpected output %q", line)
		}
		ready <- err
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = errors.New("child never became ready")
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	time.Sleep(delay)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	ws, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL,
		"the child must die of SIGKILL, not exit on its own: %v\n%s", err, stderr.String())
}

// checkCrashFile reads the repaired file both ways (ReadJSONL, Reader) and
// checks that every line is a whole, valid record and the call ids run
// from 0 without a gap. It returns how many records there are.
func checkCrashFile(t *testing.T, path string, round int) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	all, err := record.ReadJSONL(f)
	require.NoError(t, err, "round %d: every line decodes", round)

	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	argLen := make([]int, len(crashPayloadSizes))
	for k, n := range crashPayloadSizes {
		argLen[k] = len(record.ArgsJSON(strings.Repeat("history ", n/8)))
	}
	rd := record.NewReader(f)
	i := 0
	for ; ; i++ {
		r, err := rd.Read()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "round %d, line %d", round, rd.Line())
		require.NoError(t, r.Validate(), "round %d, line %d", round, rd.Line())
		require.Equal(t, crashCallID(i), r.CallID, "round %d: call ids run without a gap", round)
		require.Equal(t, crashCallID(i), all[i].CallID)
		var kw struct{ N int }
		require.NoError(t, json.Unmarshal(r.Kwargs, &kw))
		require.Equal(t, i, kw.N, "round %d: the record is the one written under its id", round)
		require.Len(t, r.Args, argLen[i%len(argLen)], "round %d, record %d: args whole", round, i)
	}
	require.False(t, rd.Torn(), "round %d: no torn line after repair", round)
	require.Len(t, all, i)
	return i
}
