package record_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// batchGate is a BatchSink that holds its first call until released and
// notes the size of every batch and the order of the records.
type batchGate struct {
	entered chan struct{} // one send per call, when it starts
	release chan struct{}
	fail    func(rs []record.Record) error

	mu      sync.Mutex
	batches []int
	got     []string
	single  int // calls of Append
}

func newBatchGate() *batchGate {
	return &batchGate{entered: make(chan struct{}, 1000), release: make(chan struct{})}
}

func (g *batchGate) Append(ctx context.Context, r record.Record) error {
	g.mu.Lock()
	g.single++
	g.mu.Unlock()
	return g.AppendBatch(ctx, []record.Record{r})
}

func (g *batchGate) AppendBatch(_ context.Context, rs []record.Record) error {
	g.entered <- struct{}{}
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	g.batches = append(g.batches, len(rs))
	for _, r := range rs {
		g.got = append(g.got, r.CallID)
	}
	if g.fail != nil {
		return g.fail(rs)
	}
	return nil
}

// What queues up while a batch sink is busy reaches it in one call, in
// order; a record alone reaches it alone, at once.
func TestAsyncHandsBatchSinkWhatQueued(t *testing.T) {
	g := newBatchGate()
	a := record.NewAsync(g, &record.AsyncOptions{QueueSize: 100, MaxBatch: 8})
	ctx := context.Background()
	require.NoError(t, a.Append(ctx, rec("0", "")))
	<-g.entered // the sink holds record 0 alone
	var want []string
	want = append(want, "0")
	for i := 1; i <= 20; i++ {
		require.NoError(t, a.Append(ctx, rec(fmt.Sprint(i), "")))
		want = append(want, fmt.Sprint(i))
	}
	close(g.release)
	require.NoError(t, a.Close())
	assert.Equal(t, []int{1, 8, 8, 4}, g.batches, "batches of at most MaxBatch, never waiting for more")
	assert.Equal(t, want, g.got)
	assert.Zero(t, g.single, "a batch sink is never called record by record")
	assert.Equal(t, uint64(21), a.Stats().Written)
}

// Flush answers once every record queued before it has reached the sink,
// even when they wait in the middle of a batch.
func TestAsyncBatchFlushWaitsForWhatCameBefore(t *testing.T) {
	g := newBatchGate()
	close(g.release)
	inner := &flushCloser{Sink: g}
	// flushCloser embeds the Sink only; make it a BatchSink again.
	a := record.NewAsync(batchFlushCloser{inner, g}, &record.AsyncOptions{QueueSize: 100, MaxBatch: 64})
	ctx := context.Background()
	for i := range 10 {
		require.NoError(t, a.Append(ctx, rec(fmt.Sprint(i), "")))
	}
	require.NoError(t, a.Flush())
	g.mu.Lock()
	assert.Len(t, g.got, 10, "Flush returned before the records queued ahead of it were written")
	g.mu.Unlock()
	assert.Equal(t, 1, inner.flushed)
	for i := range 5 {
		require.NoError(t, a.Append(ctx, rec(fmt.Sprint(10+i), "")))
	}
	require.NoError(t, a.Close())
	assert.Len(t, g.got, 15)
	assert.Equal(t, 1, inner.closed)
}

type batchFlushCloser struct {
	*flushCloser
	b *batchGate
}

func (s batchFlushCloser) AppendBatch(ctx context.Context, rs []record.Record) error {
	return s.b.AppendBatch(ctx, rs)
}

// A failed batch counts every record in it as failed, once; a panicking
// batch sink is recovered and the worker goes on.
func TestAsyncBatchErrorsCountEveryRecord(t *testing.T) {
	g := newBatchGate()
	boom := errors.New("boom")
	g.fail = func(rs []record.Record) error {
		if rs[0].CallID == "panic" {
			panic("bad sink")
		}
		if rs[0].CallID == "ok" {
			return nil
		}
		return boom
	}
	var errs []error
	a := record.NewAsync(g, &record.AsyncOptions{QueueSize: 100, OnError: func(err error) { errs = append(errs, err) }})
	ctx := context.Background()
	require.NoError(t, a.Append(ctx, rec("first", "")))
	<-g.entered
	for i := range 3 {
		require.NoError(t, a.Append(ctx, rec(fmt.Sprint("bad", i), "")))
	}
	close(g.release)
	require.NoError(t, a.Flush()) // batches: [first], [bad0 bad1 bad2]
	require.NoError(t, a.Append(ctx, rec("panic", "")))
	require.NoError(t, a.Flush())
	require.NoError(t, a.Append(ctx, rec("ok", "")))
	require.NoError(t, a.Close())
	st := a.Stats()
	assert.Equal(t, uint64(5), st.Errors, "first, bad0-2 and panic failed")
	assert.Equal(t, uint64(1), st.Written)
	require.Len(t, errs, 3, "OnError once per failed call")
	var pe *record.PanicError
	require.ErrorAs(t, errs[2], &pe)
	assert.Equal(t, "AppendBatch", pe.Method)
}

// MaxBatch 1 feeds a batch sink record by record through Append.
func TestAsyncMaxBatchOne(t *testing.T) {
	g := newBatchGate()
	close(g.release)
	a := record.NewAsync(g, &record.AsyncOptions{MaxBatch: 1})
	for i := range 3 {
		require.NoError(t, a.Append(context.Background(), rec(fmt.Sprint(i), "")))
	}
	require.NoError(t, a.Close())
	assert.Equal(t, 3, g.single)
}
