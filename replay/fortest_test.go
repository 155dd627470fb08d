package replay_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/replay"
)

// fakeTB is a testing.TB that records what ForTest does with it.
type fakeTB struct {
	testing.TB
	failed   bool
	fatal    []any
	errs     []any
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()                    {}
func (f *fakeTB) Fatal(args ...any)          { f.fatal, f.failed = args, true }
func (f *fakeTB) Error(args ...any)          { f.errs, f.failed = append(f.errs, args...), true }
func (f *fakeTB) Failed() bool               { return f.failed }
func (f *fakeTB) Cleanup(fn func())          { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(s string, args ...any) { f.logs = append(f.logs, fmt.Sprintf(s, args...)) }

func (f *fakeTB) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestForTest(t *testing.T) {
	t.Setenv(replay.EnvMode, "")
	dir := t.TempDir()

	tb := &fakeTB{}
	assert.Nil(t, replay.ForTest(tb, filepath.Join(dir, "missing.jsonl")))
	require.Len(t, tb.fatal, 1, "a missing cassette stops the test")
	assert.ErrorIs(t, tb.fatal[0].(error), replay.ErrNoCassette)

	srv := newFake(t, reply{body: []byte(`{}`)})
	for _, failed := range []bool{false, true} {
		path := filepath.Join(dir, fmt.Sprintf("failed-%v.jsonl", failed))
		tb := &fakeTB{}
		c := replay.ForTest(tb, path, replay.WithMode(replay.ModeRecord))
		readAll(t, post(t, c.Client(), srv.URL()+"/a", `{}`))
		tb.failed = failed
		tb.end()
		_, err := os.Stat(path)
		if failed {
			assert.ErrorIs(t, err, fs.ErrNotExist, "a failed test's recording is not written")
			assert.Contains(t, tb.logs[0], "was not written: the test failed")
		} else {
			assert.NoError(t, err)
			assert.Contains(t, tb.logs[0], "(record): 1 interactions")
		}
	}

	tb = &fakeTB{}
	c := replay.ForTest(tb, filepath.Join(dir, "secret.jsonl"), replay.WithMode(replay.ModeRecord))
	_, err := c.Client().Post(srv.URL()+"/a", "application/json", strings.NewReader(`{"key":"`+fakeKey()+`"}`))
	require.ErrorIs(t, err, replay.ErrSecret)
	tb.end()
	require.Len(t, tb.errs, 1, "Close's error fails the test")
	assert.ErrorIs(t, tb.errs[0].(error), replay.ErrSecret)
}
