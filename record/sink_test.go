package record_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

type flushCloser struct {
	record.Sink
	flushed, closed int
}

func (f *flushCloser) Flush() error { f.flushed++; return nil }
func (f *flushCloser) Close() error { f.closed++; return nil }

func TestFanoutIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	a, b := record.NewMemory(10), record.NewMemory(10)
	boom := errors.New("boom")
	fc := &flushCloser{Sink: record.SinkFunc(func(context.Context, record.Record) error { return nil })}
	f := record.NewFanout(
		a,
		record.SinkFunc(func(context.Context, record.Record) error { panic("sink bug") }),
		nil,
		record.SinkFunc(func(context.Context, record.Record) error { return boom }),
		b,
		fc,
	)
	err := f.Append(ctx, rec("x", ""))
	require.Error(t, err)
	assert.ErrorIs(t, err, boom)
	var pe *record.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "sink bug", pe.Value)
	assert.Equal(t, 1, a.Len())
	assert.Equal(t, 1, b.Len(), "sinks after a failing one still get the record")

	require.NoError(t, f.Flush())
	assert.Equal(t, 1, fc.flushed)
	require.NoError(t, f.Close())
	assert.Equal(t, 1, fc.closed)
}

// gate is a sink that blocks until released, to fill an Async queue.
type gate struct {
	release chan struct{}
	mu      sync.Mutex
	got     []string
}

func (g *gate) Append(_ context.Context, r record.Record) error {
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = append(g.got, r.CallID)
	return nil
}

func TestAsyncNeverBlocksAndCountsDrops(t *testing.T) {
	g := &gate{release: make(chan struct{})}
	a := record.NewAsync(g, &record.AsyncOptions{QueueSize: 4})
	ctx := context.Background()
	var accepted, dropped int
	for i := range 20 { // the sink is stuck: these must not block
		switch err := a.Append(ctx, rec(fmt.Sprint(i), "")); {
		case err == nil:
			accepted++
		case errors.Is(err, record.ErrQueueFull):
			dropped++
		default:
			t.Fatal(err)
		}
	}
	assert.Positive(t, dropped)
	assert.Equal(t, uint64(dropped), a.Stats().Dropped)
	close(g.release)
	require.NoError(t, a.Close())
	assert.Len(t, g.got, accepted, "Close drains everything accepted")
	assert.Equal(t, uint64(accepted), a.Stats().Written)
	assert.ErrorIs(t, a.Append(ctx, rec("late", "")), record.ErrClosed)
	assert.ErrorIs(t, a.Flush(), record.ErrClosed)
	assert.NoError(t, a.Close())
}

func TestAsyncFlushAndClosePropagate(t *testing.T) {
	inner := &flushCloser{Sink: record.NewMemory(100)}
	a := record.NewAsync(inner, nil)
	for i := range 10 {
		require.NoError(t, a.Append(context.Background(), rec(fmt.Sprint(i), "")))
	}
	require.NoError(t, a.Flush())
	assert.Equal(t, 10, inner.Sink.(*record.Memory).Len(), "Flush waits for what was queued before it")
	assert.Equal(t, 1, inner.flushed)
	require.NoError(t, a.Close())
	assert.Equal(t, 1, inner.closed)
}

func TestAsyncCountsSinkErrors(t *testing.T) {
	var seen atomic.Int64
	boom := errors.New("boom")
	a := record.NewAsync(record.SinkFunc(func(_ context.Context, r record.Record) error {
		if r.CallID == "panic" {
			panic("bad sink")
		}
		return boom
	}), &record.AsyncOptions{OnError: func(err error) { seen.Add(1); panic("bad callback") }})
	require.NoError(t, a.Append(context.Background(), rec("x", "")))
	require.NoError(t, a.Append(context.Background(), rec("panic", "")))
	require.NoError(t, a.Append(context.Background(), rec("y", "")))
	require.NoError(t, a.Close())
	assert.Equal(t, uint64(3), a.Stats().Errors)
	assert.Equal(t, int64(3), seen.Load(), "the worker survives panics in the sink and in OnError")
}

func TestAsyncConcurrentAppendAndClose(t *testing.T) {
	m := record.NewMemory(100000)
	a := record.NewAsync(m, &record.AsyncOptions{QueueSize: 64})
	var wg sync.WaitGroup
	var ok atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				if a.Append(context.Background(), rec(fmt.Sprintf("%d-%d", w, i), "")) == nil {
					ok.Add(1)
				}
			}
		})
	}
	wg.Go(func() { _ = a.Flush() })
	wg.Wait()
	require.NoError(t, a.Close())
	st := a.Stats()
	assert.Equal(t, uint64(ok.Load()), st.Written)
	assert.Equal(t, int64(m.Len()), ok.Load())
	assert.Equal(t, uint64(8*500), st.Written+st.Dropped, "every record is written or counted as dropped")
}

func TestAsyncContextLosesCancellation(t *testing.T) {
	type key struct{}
	got := make(chan context.Context, 1)
	a := record.NewAsync(record.SinkFunc(func(ctx context.Context, _ record.Record) error { got <- ctx; return nil }), nil)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	require.NoError(t, a.Append(ctx, rec("x", "")))
	cancel()
	require.NoError(t, a.Close())
	c := <-got
	assert.NoError(t, c.Err())
	assert.Equal(t, "v", c.Value(key{}))
}

func TestFlushAndCloseHelpers(t *testing.T) {
	plain := record.NewMemory(1)
	assert.NoError(t, record.Flush(plain))
	assert.NoError(t, record.Close(plain))
	fc := &flushCloser{Sink: plain}
	assert.NoError(t, record.Close(fc))
	assert.Equal(t, 1, fc.closed)
}
