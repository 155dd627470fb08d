package record_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

func rec(id, trace string) record.Record {
	return record.Record{CallID: id, TraceID: trace, MethodName: "m", Speaker: record.SpeakerUser,
		Args: []byte(`["` + id + `"]`), Kwargs: []byte(`{}`), Outcome: record.Success("x")}
}

func ids(rs []record.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.CallID)
	}
	return out
}

func TestMemoryRingDropsOldest(t *testing.T) {
	ctx := context.Background()
	m := record.NewMemory(3)
	for i := range 5 {
		require.NoError(t, m.Append(ctx, rec(fmt.Sprint(i), "t")))
	}
	assert.Equal(t, []string{"2", "3", "4"}, ids(m.Records()))
	assert.Equal(t, uint64(2), m.Dropped())
	assert.Equal(t, 3, m.Len())
	assert.Equal(t, 3, m.Cap())
	m.Reset()
	assert.Empty(t, m.Records())
	assert.Zero(t, m.Dropped())
	assert.Equal(t, record.DefaultMemoryCapacity, record.NewMemory(0).Cap())
}

func TestMemoryTraceViews(t *testing.T) {
	ctx := context.Background()
	m := record.NewMemory(10)
	for i, trace := range []string{"a", "b", "a", "a", "b", "a"} {
		require.NoError(t, m.Append(ctx, rec(fmt.Sprint(i), trace)))
	}
	assert.Equal(t, []string{"0", "2", "3", "5"}, ids(m.Trace("a")))
	assert.Equal(t, []string{"1", "4"}, ids(m.Trace("b")))
	assert.Empty(t, m.Trace("none"))
	tail, total := m.TraceTail("a", 2)
	assert.Equal(t, []string{"3", "5"}, ids(tail))
	assert.Equal(t, 4, total)
	tail, total = m.TraceTail("b", 5)
	assert.Equal(t, []string{"1", "4"}, ids(tail))
	assert.Equal(t, 2, total)
	tail, total = m.TraceTail("none", 3)
	assert.Empty(t, tail)
	assert.Zero(t, total)
}

func TestMemoryTraceSummaries(t *testing.T) {
	ctx := context.Background()
	m := record.NewMemory(3) // the oldest of five is let go
	for i := range 5 {
		r := fullRecord()
		r.CallID, r.TraceID = fmt.Sprint(i), "t"
		r.Output = &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: "the answer"}}}
		require.NoError(t, m.Append(ctx, r))
	}
	sums, total := m.TraceSummaries("t", 2)
	full, _ := m.TraceTail("t", 2)
	assert.Equal(t, 3, total, "what is held, not what was ever added")
	require.Len(t, sums, 2)
	assert.Equal(t, []string{"3", "4"}, ids(sums))
	for i, s := range sums {
		assert.Nil(t, s.Args)
		assert.Nil(t, s.Kwargs)
		assert.Empty(t, s.ProgramSource)
		assert.Nil(t, s.Output)
		// Everything else is as in the full copy.
		f := full[i]
		f.Args, f.Kwargs, f.ProgramSource, f.Output = nil, nil, "", nil
		assert.Equal(t, f, s)
	}
	sums[0].Usage.TotalTokens = -1 // a copy, not the held record
	again, _ := m.TraceSummaries("t", 2)
	assert.NotEqual(t, -1, again[0].Usage.TotalTokens)
}

func TestMemoryCopiesInAndOut(t *testing.T) {
	ctx := context.Background()
	m := record.NewMemory(2)
	r := rec("x", "t")
	require.NoError(t, m.Append(ctx, r))
	r.Args[2] = 'Z' // the caller changes its record after appending
	got := m.Records()
	assert.Equal(t, `["x"]`, string(got[0].Args))
	got[0].Args[2] = 'Q' // a reader changes what it got
	got[0].CallID = "changed"
	assert.Equal(t, `["x"]`, string(m.Records()[0].Args))
	assert.Equal(t, "x", m.Trace("t")[0].CallID)
}

func TestMemoryNormalizes(t *testing.T) {
	m := record.NewMemory(1)
	require.NoError(t, m.Append(context.Background(), record.Record{CallID: "a"}))
	r := m.Records()[0]
	assert.Equal(t, "[]", string(r.Args))
	assert.Equal(t, "{}", string(r.Kwargs))
}

func TestMemoryConcurrent(t *testing.T) {
	ctx := context.Background()
	const writers, each, capacity = 16, 200, 1000
	m := record.NewMemory(capacity)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_ = m.Append(ctx, rec(fmt.Sprintf("%d-%d", w, i), fmt.Sprint(w)))
				if i%50 == 0 {
					_ = m.Records()
					_, _ = m.TraceTail(fmt.Sprint(w), 3)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, capacity, m.Len())
	assert.Equal(t, uint64(writers*each-capacity), m.Dropped())
	seen := map[string]bool{}
	for _, r := range m.Records() {
		assert.False(t, seen[r.CallID], "duplicate %s", r.CallID)
		seen[r.CallID] = true
	}
}

func TestMemoryAddFillsTelemetry(t *testing.T) {
	m := record.NewMemory(3)
	got := m.Add(rec("1", "a"))
	assert.True(t, got.HistoryRecordAppended)
	assert.Equal(t, 1, got.ConversationHistorySize)
	m.Add(rec("2", "b"))
	got = m.Add(rec("3", "a"))
	assert.Equal(t, 2, got.ConversationHistorySize)
	assert.Equal(t, 2, m.TraceLen("a"))
	// Full: record 1 (trace a) makes room for record 4 (trace a).
	got = m.Add(rec("4", "a"))
	assert.Equal(t, 2, got.ConversationHistorySize)
	assert.Equal(t, 2, m.TraceLen("a"))
	assert.Equal(t, 1, m.TraceLen("b"))
	stored := m.Records()
	got.Normalize()
	assert.Equal(t, got, stored[len(stored)-1], "what Add returns is what is stored")
	m.Add(rec("5", "c")) // evicts b
	assert.Equal(t, 0, m.TraceLen("b"))
	_, total := m.TraceTail("a", 0)
	assert.Equal(t, m.TraceLen("a"), total)
}

// AddBorrowed keeps copies of what it holds of Args, which the caller
// reuses: a record that starts its trace whole, one that extends the
// previous record of its trace what it adds, a record that is neither
// (partial Args) whole. One buffer serves every record here, overwritten
// after each Add.
func TestMemoryAddBorrowedCopiesArgs(t *testing.T) {
	m := record.NewMemory(10)
	buf := make([]byte, 0, 256)
	add := func(id, trace, args string, prefix *record.ArgsPrefix) {
		r := rec(id, trace)
		buf = append(buf[:0], args...)
		r.Args, r.ArgsPrefix = buf, prefix
		m.AddBorrowed(r)
		for i := range buf {
			buf[i] = 'x' // the caller reuses its buffer
		}
	}
	add("1", "a", `[{"role":"user","content":"hi"}]`, nil)
	add("2", "a", `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`, nil)
	add("3", "b", `["another"]`, nil)
	add("4", "c", `["partial"]`, &record.ArgsPrefix{CallID: "0", Count: 1})
	want := map[string]string{
		"1": `[{"role":"user","content":"hi"}]`,
		"2": `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`,
		"3": `["another"]`,
		"4": `["partial"]`,
	}
	for _, r := range m.Records() {
		assert.Equal(t, want[r.CallID], string(r.Args), "record %s", r.CallID)
	}
}

// Large records that share nothing are bounded by bytes as well as by
// count: the oldest go first, and the newest is always kept.
func TestMemoryMaxBytes(t *testing.T) {
	m := record.NewMemoryWith(record.MemoryOptions{Capacity: 100, MaxBytes: 10 << 10})
	big := func(id string, n int) record.Record {
		r := rec(id, id)
		r.Args = []byte(`["` + strings.Repeat("x", n) + `"]`)
		return r
	}
	for i := range 10 {
		m.Add(big(fmt.Sprint(i), 3<<10))
		assert.LessOrEqual(t, m.Bytes(), int64(10<<10))
	}
	assert.Equal(t, []string{"7", "8", "9"}, ids(m.Records()))
	assert.Equal(t, uint64(7), m.Dropped())

	m.Add(big("huge", 50<<10))
	assert.Equal(t, []string{"huge"}, ids(m.Records()), "alone, however big")
	m.Add(big("small", 10))
	assert.Equal(t, []string{"small"}, ids(m.Records()))

	// A conversation counts what each record adds, so it fits where its
	// records whole would not.
	conv := chat(30, 300)
	c := record.NewMemoryWith(record.MemoryOptions{MaxBytes: 40 << 10})
	for i, args := range conv {
		c.Add(call(i, "t", args))
	}
	assert.Equal(t, 30, c.Len(), "%d bytes held", c.Bytes())
	assert.Equal(t, strs(conv), argsOf(c.Records()))
}

// The ring grows by doubling: filling it allocates in proportion to its
// size, not to its square.
func TestMemoryGrowsByDoubling(t *testing.T) {
	m := record.NewMemory(20000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 10000 {
		m.Add(rec(fmt.Sprint(i), "t"))
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("10,000 records: %d bytes allocated", allocated)
	assert.Less(t, allocated, uint64(64<<20))
}
