package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// logBuffer is a logger whose lines a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

func records(seed uint64, trace string, n int) []record.Record {
	recs, _ := storebench.Conversation(rand.New(rand.NewPCG(seed, 1)), storebench.ConversationOptions{Trace: trace, Turns: n})
	return recs
}

// importInto imports a spill file into the store at url and checks that
// every record of want is there once, whole.
func importInto(t *testing.T, url, spill string, want []record.Record) store.ImportResult {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	f, err := os.Open(spill)
	require.NoError(t, err)
	defer f.Close()
	res, err := s.Import(ctx, f, func(line int, err error) { t.Errorf("spill line %d: %v", line, err) })
	require.NoError(t, err)
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, len(want), n)
	for _, r := range want {
		got, err := s.Get(ctx, r.CallID)
		require.NoError(t, err)
		assert.JSONEq(t, string(r.Args), string(got.Args))
	}
	return res
}

// unprivileged runs the calling test again as user nobody when this
// process is root, for whom file permissions mean nothing, and reports
// whether the caller is the process that should do the test's work.
func unprivileged(t *testing.T) bool {
	if os.Geteuid() != 0 || os.Getenv("LLMHISTORY_TEST_CHILD") == t.Name() {
		return true
	}
	u, err := user.Lookup("nobody")
	require.NoError(t, err, "running as root, with no user nobody to run the test as")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// The test binary is in a directory only root may enter: copy it.
	dir, err := os.MkdirTemp("", "llmhistory-child-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "test")
	in, err := os.Open(self)
	require.NoError(t, err)
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	in.Close()
	require.NoError(t, err)
	require.NoError(t, out.Close())
	cmd := exec.Command(bin, "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LLMHISTORY_TEST_CHILD="+t.Name(), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	output, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", output)
	require.NoError(t, err)
	require.Contains(t, string(output), "--- PASS: "+t.Name(), "the test ran as nobody")
	return false
}

// A store on a file made read-only opens, reads, and sends what it is
// given to the spill file beside it, logging the fault once; import
// brings the records back once the file takes writes again.
func TestReadOnlyFileSpills(t *testing.T) {
	if !unprivileged(t) {
		return
	}
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "history.db")
	url := "sqlite:" + file
	recs := records(1, "ro", 12)
	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	_, err = s.Write(ctx, recs[:4])
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, os.Chmod(file, 0o444))

	var logs logBuffer
	s, err = store.OpenWith(ctx, url, store.Options{Logger: logs.logger()})
	require.NoError(t, err, "a read-only file opens")
	var se *store.SpillError
	for i := 4; i < 12; i += 2 {
		err := s.AppendBatch(ctx, recs[i:i+2])
		require.ErrorAs(t, err, &se)
		assert.Equal(t, store.FaultReadOnly, se.Fault)
		assert.NoError(t, se.Lost)
	}
	assert.Equal(t, file+".spill.jsonl", s.SpillPath())
	got, err := s.Trace(ctx, "ro")
	require.NoError(t, err)
	assert.Len(t, got, 4, "it still reads")
	st := s.Stats()
	assert.EqualValues(t, 8, st.Spilled)
	assert.Zero(t, st.Lost)
	require.NoError(t, s.Close())
	assert.Equal(t, 1, strings.Count(logs.String(), "the database is read-only"), "logged once:\n%s", logs.String())
	assert.Contains(t, logs.String(), "llmhistory import "+file+".spill.jsonl --into "+url)

	// Writable again: the file, and the -wal and -shm files SQLite made
	// with its mode meanwhile.
	for _, f := range []string{file, file + "-wal", file + "-shm"} {
		if err := os.Chmod(f, 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
	res := importInto(t, url, file+".spill.jsonl", recs)
	assert.Equal(t, store.ImportResult{Records: 8, Written: 8}, res)
	res = importInto(t, url, file+".spill.jsonl", recs)
	assert.Equal(t, store.ImportResult{Records: 8, Duplicates: 8}, res, "importing again changes nothing")
}

// A write that waits for another process's lock past the busy timeout
// spills, without holding the caller longer; while the fault holds,
// batches go straight to the spill file; then the store writes again.
func TestLockedSpillsAndRecovers(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "history.db")
	url := "sqlite:" + file
	recs := records(2, "locked", 9)
	var logs logBuffer
	s, err := store.OpenWith(ctx, url, store.Options{Logger: logs.logger(), BusyTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.AppendBatch(ctx, recs[:3]))

	other, err := sql.Open("sqlite", sqlitedsn.DSN(file, 0, false))
	require.NoError(t, err)
	defer other.Close()
	tx, err := other.Begin() // BEGIN IMMEDIATE: the write lock
	require.NoError(t, err)

	start := time.Now()
	err = s.AppendBatch(ctx, recs[3:5])
	var se *store.SpillError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, store.FaultLocked, se.Fault)
	assert.Less(t, time.Since(start), 3*time.Second, "waited about the busy timeout")
	start = time.Now()
	require.ErrorAs(t, s.AppendBatch(ctx, recs[5:6]), &se)
	assert.Nil(t, se.Err, "held back while the fault lasts, not tried")
	assert.Less(t, time.Since(start), 50*time.Millisecond)

	require.NoError(t, tx.Rollback())
	time.Sleep(1100 * time.Millisecond) // the first backoff
	require.NoError(t, s.AppendBatch(ctx, recs[6:9]), "writes again once the lock is gone")
	assert.Equal(t, 1, strings.Count(logs.String(), "the database is locked"), logs.String())
	assert.Contains(t, logs.String(), "takes records again")
	require.NoError(t, s.Close())
	res := importInto(t, url, file+".spill.jsonl", recs)
	assert.Equal(t, 3, res.Written)
}

// A database that is full (here: at its max_page_count) spills.
func TestFullSpills(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "history.db")
	s, err := store.OpenWith(ctx, "sqlite:"+file+"?_pragma=max_page_count(50)", store.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	recs := records(3, "full", 100)
	var spilled []record.Record
	var faults []store.Fault
	for i := 0; i < len(recs); i += 3 {
		batch := recs[i:min(i+3, len(recs))]
		var se *store.SpillError
		if err := s.AppendBatch(ctx, batch); errors.As(err, &se) {
			spilled = append(spilled, batch...)
			faults = append(faults, se.Fault)
		} else {
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Close())
	require.NotEmpty(t, spilled, "50 pages cannot hold 100 turns")
	assert.Equal(t, store.FaultFull, faults[0])
	res := importInto(t, "sqlite:"+file, file+".spill.jsonl", recs)
	assert.Equal(t, len(spilled), res.Records)
}

// Several processes write one file at once, each every record, in
// batches and orders of its own: each record lands once, whole.
func TestProcessesShareAFile(t *testing.T) {
	if file := os.Getenv("LLMHISTORY_TEST_WRITER"); file != "" {
		writeAll(t, file)
		return
	}
	file := filepath.Join(t.TempDir(), "history.db")
	self, err := os.Executable()
	require.NoError(t, err)
	const procs = 3
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(self, "-test.run", "^TestProcessesShareAFile$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "LLMHISTORY_TEST_WRITER="+file, fmt.Sprint("LLMHISTORY_TEST_SEED=", i))
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for i := range procs {
		require.NoError(t, errs[i], "%s", outs[i])
	}
	want := sharedRecords()
	ctx := context.Background()
	s, err := store.OpenWith(ctx, "sqlite:"+file, store.Options{ReadOnly: true})
	require.NoError(t, err)
	defer s.Close()
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, len(want), n)
	for _, r := range want {
		got, err := s.Get(ctx, r.CallID)
		require.NoError(t, err)
		assert.JSONEq(t, string(r.Args), string(got.Args))
	}
}

func sharedRecords() []record.Record {
	var all []record.Record
	for c := range 6 {
		all = append(all, records(uint64(10+c), fmt.Sprint("shared-", c), 25)...)
	}
	return all
}

func writeAll(t *testing.T, file string) {
	seed, _ := strconv.Atoi(os.Getenv("LLMHISTORY_TEST_SEED"))
	ctx := context.Background()
	s, err := store.OpenWith(ctx, "sqlite:"+file, store.Options{BusyTimeout: time.Minute})
	require.NoError(t, err)
	defer s.Close()
	all := sharedRecords()
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	order := rng.Perm(len(all))
	for len(order) > 0 {
		n := min(len(order), 1+rng.IntN(20))
		var batch []record.Record
		for _, i := range order[:n] {
			batch = append(batch, all[i])
		}
		order = order[n:]
		_, err := s.Write(ctx, batch)
		require.NoError(t, err)
	}
}

// When the spill file fails too (here: its directory does not exist), the
// records are counted lost, the error says so, and it is logged once.
func TestSpillFailsTooCountsLost(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "history.db")
	var logs logBuffer
	s, err := store.OpenWith(ctx, "sqlite:"+file+"?_pragma=max_page_count(50)", store.Options{Logger: logs.logger(),
		SpillPath: filepath.Join(t.TempDir(), "no", "such", "dir", "spill.jsonl")})
	require.NoError(t, err)
	defer s.Close()
	recs := records(4, "lost", 100)
	var lost int
	for i := 0; i < len(recs); i += 5 {
		var se *store.SpillError
		if err := s.AppendBatch(ctx, recs[i:i+5]); errors.As(err, &se) {
			require.Error(t, se.Lost)
			assert.Contains(t, se.Error(), "lost")
			lost += se.Records
		}
	}
	require.Positive(t, lost)
	assert.EqualValues(t, lost, s.Stats().Lost)
	assert.Zero(t, s.Stats().Spilled)
	assert.Equal(t, 1, strings.Count(logs.String(), "records are lost"), logs.String())
}
