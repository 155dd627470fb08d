package record_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// panickySink is a sink whose Flush or Close panics, as a buggy user sink may.
type panickySink struct {
	*record.Memory
	flushPanics, closePanics bool
}

func (p *panickySink) Flush() error {
	if p.flushPanics {
		panic("flush bug")
	}
	return nil
}

func (p *panickySink) Close() error {
	if p.closePanics {
		panic("close bug")
	}
	return nil
}

func TestFanoutFlushAndCloseSurvivePanics(t *testing.T) {
	after := &flushCloser{Sink: record.NewMemory(1)}
	f := record.NewFanout(&panickySink{Memory: record.NewMemory(1), flushPanics: true, closePanics: true}, after)

	err := f.Flush()
	var pe *record.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Flush", pe.Method)
	assert.Equal(t, "flush bug", pe.Value)
	assert.Equal(t, 1, after.flushed, "the sink after the panicking one is still flushed")

	err = f.Close()
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Close", pe.Method)
	assert.Equal(t, 1, after.closed, "the sink after the panicking one is still closed")
}

func TestAsyncFlushPanicIsAnError(t *testing.T) {
	inner := &panickySink{Memory: record.NewMemory(10), flushPanics: true}
	a := record.NewAsync(inner, nil)
	require.NoError(t, a.Append(context.Background(), rec("a", "")))
	var pe *record.PanicError
	require.ErrorAs(t, a.Flush(), &pe, "the panic comes back as an error, not a crash of the queue's goroutine")
	require.NoError(t, a.Append(context.Background(), rec("b", "")))
	require.ErrorAs(t, a.Flush(), &pe)
	assert.Equal(t, 2, inner.Len(), "the queue still works after the panic")
	assert.NoError(t, a.Close(), "the sink closes itself (its Close does not panic)")
}

// stuck is a sink whose Append never returns until released.
type stuck struct{ release chan struct{} }

func (s stuck) Append(context.Context, record.Record) error {
	<-s.release
	return nil
}

func TestAsyncShutdownGivesUpOnAStuckSink(t *testing.T) {
	s := stuck{release: make(chan struct{})}
	defer close(s.release)
	a := record.NewAsync(s, &record.AsyncOptions{QueueSize: 8})
	for i := range 5 {
		require.NoError(t, a.Append(context.Background(), rec(string(rune('a'+i)), "")))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := a.Shutdown(ctx)
	var ue *record.UndeliveredError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 5, ue.Records, "one being appended, four queued")
	assert.Equal(t, "record_test.stuck", ue.Sink)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "5 records did not reach it")
	assert.ErrorIs(t, a.Append(context.Background(), rec("late", "")), record.ErrClosed, "closed, even though it gave up")
}

func TestAsyncShutdownReturnsWhatCloseReturns(t *testing.T) {
	boom := errors.New("boom")
	a := record.NewAsync(&closeErr{Memory: record.NewMemory(1), err: boom}, nil)
	require.NoError(t, a.Append(context.Background(), rec("a", "")))
	assert.ErrorIs(t, a.Shutdown(context.Background()), boom)
	assert.ErrorIs(t, a.Shutdown(context.Background()), boom, "a second call says the same")
}

type closeErr struct {
	*record.Memory
	err error
}

func (c *closeErr) Close() error { return c.err }
