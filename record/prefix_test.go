package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// message is one chat message of about size bytes.
func message(role string, turn, size int) string {
	text := fmt.Sprintf("%s turn %d: ", role, turn)
	text += strings.Repeat("lorem ipsum ", max(0, size-len(text))/12)
	b, _ := json.Marshal(map[string]string{"role": role, "content": text})
	return string(b)
}

// chat returns the Args of each call of a conversation of n turns, as a
// chat API resends it: the system prompt, then every question and answer
// so far, then the new question.
func chat(n, size int) [][]byte {
	msgs := []string{message("system", 0, size)}
	out := make([][]byte, 0, n)
	for i := range n {
		msgs = append(msgs, message("user", i, size))
		out = append(out, []byte("["+strings.Join(msgs, ",")+"]"))
		msgs = append(msgs, message("assistant", i, size))
	}
	return out
}

// uniqueBytes is what a conversation says once: every message of its last
// call.
func uniqueBytes(args [][]byte) int { return len(args[len(args)-1]) }

func call(i int, trace string, args []byte) record.Record {
	return record.Record{
		CallID:     fmt.Sprintf("%s-%04d", trace, i),
		Timestamp:  record.FormatTime(time.Date(2026, 11, 23, 10, 0, i, 0, time.UTC)),
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		TraceID:    trace,
		Args:       args,
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini"}`),
		Outcome:    record.Success("chat.completion"),
	}
}

func argsOf(rs []record.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Args)
	}
	return out
}

func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// Every way out of the history gives each record its whole Args, however
// little of them it keeps.
func TestMemoryPutsArgsBackTogether(t *testing.T) {
	conv := chat(40, 300)
	m := record.NewMemory(0)
	for i, args := range conv {
		got := m.Add(call(i, "t", args))
		assert.Equal(t, string(args), string(got.Args), "Add returns the whole Args")
	}
	assert.Equal(t, strs(conv), argsOf(m.Records()))
	assert.Equal(t, strs(conv), argsOf(m.Trace("t")))
	for _, n := range []int{1, 2, 5, 40, 100} {
		tail, total := m.TraceTail("t", n)
		assert.Equal(t, 40, total)
		assert.Equal(t, strs(conv[max(0, 40-n):]), argsOf(tail), "TraceTail %d", n)
	}
	sums, _ := m.TraceSummaries("t", 3)
	for _, r := range sums {
		assert.Nil(t, r.Args)
		assert.Nil(t, r.ArgsPrefix)
	}
}

// When the oldest record goes, the next one of its trace is made whole
// first: what is left still reads right, for interleaved traces too.
func TestMemoryEvictionKeepsArgsWhole(t *testing.T) {
	a, b := chat(30, 200), chat(30, 250)
	for _, capacity := range []int{1, 2, 3, 7, 59} {
		m := record.NewMemory(capacity)
		var want []string
		for i := range 30 {
			m.Add(call(i, "a", a[i]))
			m.Add(call(i, "b", b[i]))
			want = append(want, string(a[i]), string(b[i]))
			held := want[max(0, len(want)-capacity):]
			require.Equal(t, held, argsOf(m.Records()), "capacity %d after turn %d", capacity, i)
		}
		tail, total := m.TraceTail("a", 3)
		assert.Equal(t, min(capacity/2, 30), total, "capacity %d", capacity)
		assert.Equal(t, strs(a[30-min(3, total):]), argsOf(tail), "capacity %d", capacity)
	}
}

// What the history holds grows with the conversation, not with its
// square: at most three times what was said.
func TestMemoryGrowsLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	conv := chat(100, 500)
	unique := uniqueBytes(conv)
	held := heapHeld(func() any {
		m := record.NewMemory(0)
		for i, args := range conv {
			// A copy: the conversation itself is not the history's to hold.
			m.Add(call(i, "t", append([]byte(nil), args...)))
		}
		return m
	})
	runtime.KeepAlive(conv)
	t.Logf("100 turns: %d bytes said, %d held (%.1f×)", unique, held, float64(held)/float64(unique))
	assert.Less(t, held, int64(3*unique))
}

// heapHeld returns how much more of the heap is in use while what build
// returns is alive.
func heapHeld(build func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// writeCompact adds each record to a history, as a recorder does, and
// writes what comes out to a JSONL sink writing args_prefix.
func writeCompact(t testing.TB, rs []record.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	m := record.NewMemory(0)
	j := record.NewJSONLWith(&buf, record.JSONLOptions{ArgsPrefix: true})
	for _, r := range rs {
		require.NoError(t, j.Append(context.Background(), m.Add(r)))
	}
	require.NoError(t, j.Close())
	return buf.Bytes()
}

func lines(b []byte) []string { return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") }

// A file written with ArgsPrefix holds each message about once, and reads
// back whole.
func TestJSONLArgsPrefixRoundTrip(t *testing.T) {
	conv := chat(100, 500)
	var rs []record.Record
	for i, args := range conv {
		rs = append(rs, call(i, "t", args))
	}
	compact := writeCompact(t, rs)
	var whole bytes.Buffer
	j := record.NewJSONL(&whole)
	m := record.NewMemory(0)
	for _, r := range rs {
		require.NoError(t, j.Append(context.Background(), m.Add(r)))
	}
	require.NoError(t, j.Close())

	unique := uniqueBytes(conv)
	t.Logf("100 turns, %d bytes said: %d bytes written whole (%.0f×), %d with args_prefix (%.2f×)",
		unique, whole.Len(), float64(whole.Len())/float64(unique), len(compact), float64(len(compact))/float64(unique))
	assert.Less(t, len(compact), 2*unique)
	assert.NotContains(t, whole.String(), "args_prefix", "not the default")

	ls := lines(compact)
	assert.NotContains(t, ls[0], "args_prefix", "the first call names nothing")
	for _, l := range ls[1:] {
		assert.Contains(t, l, `"args_prefix":{"call_id":`)
	}

	got, err := record.ReadJSONL(bytes.NewReader(compact))
	require.NoError(t, err)
	assert.Equal(t, strs(conv), argsOf(got))
	want, err := record.ReadJSONL(&whole)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the same records as the file written whole")
}

// The history compares messages, not positions in time: a conversation
// edited, restarted, or with a system prompt that changes every call,
// shares what is really shared and nothing else.
func TestArgsPrefixOnlyWhatIsShared(t *testing.T) {
	sys := message("system", 0, 200)
	u := func(i int) string { return message("user", i, 200) }
	a := func(i int) string { return message("assistant", i, 200) }
	arr := func(ms ...string) []byte { return []byte("[" + strings.Join(ms, ",") + "]") }
	cases := []struct {
		name  string
		args  [][]byte
		count []int // args_prefix count of each line; 0: none
	}{
		{"growing", [][]byte{arr(sys, u(0)), arr(sys, u(0), a(0), u(1)), arr(sys, u(0), a(0), u(1), a(1), u(2))}, []int{0, 2, 4}},
		{"an answer edited", [][]byte{arr(sys, u(0), a(0), u(1)), arr(sys, u(0), a(9), u(1), a(1), u(2))}, []int{0, 2}},
		{"restarted", [][]byte{arr(sys, u(0), a(0), u(1)), arr(sys, u(5))}, []int{0, 1}},
		{"same call again", [][]byte{arr(sys, u(0)), arr(sys, u(0))}, []int{0, 2}},
		{"shorter, then longer", [][]byte{arr(sys, u(0), a(0), u(1)), arr(sys, u(0)), arr(sys, u(0), a(0), u(1))}, []int{0, 2, 2}},
		{"a new system prompt every call", [][]byte{arr(message("system", 1, 200), u(0)), arr(message("system", 2, 200), u(0), a(0), u(1))}, []int{0, 0}},
		{"too little shared", [][]byte{arr(`{"role":"user","content":"hi"}`), arr(`{"role":"user","content":"hi"}`, `{"role":"assistant","content":"hello"}`)}, []int{0, 0}},
		{"empty args", [][]byte{arr(), arr(sys), arr(sys, u(0))}, []int{0, 0, 1}},
		{"spaces between messages", [][]byte{[]byte("[" + sys + ", " + u(0) + "]"), []byte("[" + sys + ", " + u(0) + ", " + a(0) + "]")}, []int{0, 0}},
		{"pretty-printed", [][]byte{[]byte("[\n " + sys + ",\n " + u(0) + "\n]"), arr(sys, u(0), a(0))}, []int{0, 2}},
		{"not JSON", [][]byte{[]byte(`[{"role":"user"`), []byte(`[{"role":"user"`)}, []int{0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rs []record.Record
			for i, args := range c.args {
				rs = append(rs, call(i, "t", args))
			}
			out := writeCompact(t, rs)
			for i, l := range lines(out) {
				var line struct {
					ArgsPrefix *record.ArgsPrefix `json:"args_prefix"`
				}
				require.NoError(t, json.Unmarshal([]byte(l), &line))
				if c.count[i] == 0 {
					assert.Nil(t, line.ArgsPrefix, "line %d", i+1)
					continue
				}
				if assert.NotNil(t, line.ArgsPrefix, "line %d", i+1) {
					assert.Equal(t, c.count[i], line.ArgsPrefix.Count, "line %d", i+1)
					assert.Equal(t, rs[i-1].CallID, line.ArgsPrefix.CallID, "line %d", i+1)
				}
			}
			got, err := record.ReadJSONL(bytes.NewReader(out))
			require.NoError(t, err)
			for i, r := range got {
				want := rs[i]
				want.Normalize()
				assert.JSONEq(t, string(want.Args), string(r.Args), "record %d", i+1)
			}
		})
	}
}

// Different traces never share, and a record whose previous line in this
// file is not the record the history compared it with is written whole.
func TestJSONLArgsPrefixNamesOnlyItsOwnLines(t *testing.T) {
	conv := chat(6, 300)
	m := record.NewMemory(0)
	var buf bytes.Buffer
	j := record.NewJSONLWith(&buf, record.JSONLOptions{ArgsPrefix: true})
	ctx := context.Background()
	for i, args := range conv {
		r := m.Add(call(i, "t", args))
		if i == 2 {
			continue // this file never got call 2: call 3 must not name it
		}
		require.NoError(t, j.Append(ctx, r))
	}
	// Another trace with the very same messages shares nothing with t.
	require.NoError(t, j.Append(ctx, m.Add(call(9, "u", conv[5]))))
	require.NoError(t, j.Close())
	ls := lines(buf.Bytes())
	require.Len(t, ls, 6)
	assert.Contains(t, ls[1], `"args_prefix"`)
	assert.NotContains(t, ls[2], `"args_prefix"`, "call 3: call 2 is not in this file")
	assert.Contains(t, ls[3], `"args_prefix":{"call_id":"t-0003"`)
	assert.NotContains(t, ls[5], `"args_prefix"`, "another trace")
	got, err := record.ReadJSONL(&buf)
	require.NoError(t, err)
	assert.Equal(t, []string{string(conv[0]), string(conv[1]), string(conv[3]), string(conv[4]), string(conv[5]), string(conv[5])}, argsOf(got))
}

// A file that lost a line, or whose earlier line was changed, still reads:
// the records that needed it come out marked, with only the messages they
// add, and never with wrong Args; other traces are untouched.
func TestReadArgsPrefixDamaged(t *testing.T) {
	a, b := chat(5, 300), chat(5, 300)
	var rs []record.Record
	for i := range 5 {
		rs = append(rs, call(i, "a", a[i]), call(i, "b", b[i]))
	}
	file := lines(writeCompact(t, rs))
	join := func(ls []string) string { return strings.Join(ls, "\n") + "\n" }

	// edited is a record whose line was changed: it reads as changed.
	check := func(t *testing.T, input string, edited string, firstBad int) {
		sameWithoutArgs(t, []byte(input))
		got, err := record.ReadJSONL(strings.NewReader(input))
		require.ErrorIs(t, err, record.ErrUnresolvedPrefix)
		assert.Contains(t, err.Error(), fmt.Sprintf("the first on line %d", firstBad))
		for _, r := range got {
			var want []byte
			for _, w := range rs {
				if w.CallID == r.CallID {
					want = w.Args
				}
			}
			if r.ArgsPrefix == nil {
				if r.CallID != edited {
					assert.Equal(t, string(want), string(r.Args), "%s whole", r.CallID)
				}
				assert.NotContains(t, r.Truncated, "args", r.CallID)
				continue
			}
			assert.Equal(t, "a", r.TraceID, "only the damaged trace: %s", r.CallID)
			assert.Contains(t, r.Truncated, "args", r.CallID)
			assert.NotEqual(t, string(want), string(r.Args), r.CallID)
			assert.True(t, bytes.HasSuffix(want, r.Args[1:]), "%s holds what it adds, and only that", r.CallID)
		}
	}
	t.Run("a line lost", func(t *testing.T) {
		// Line 5 is a-0002; a-0003 and a-0004 name it and each other.
		damaged := append(append([]string(nil), file[:4]...), file[5:]...)
		check(t, join(damaged), "", 6)
	})
	t.Run("an earlier line changed", func(t *testing.T) {
		damaged := append([]string(nil), file...)
		damaged[2] = strings.Replace(damaged[2], "lorem", "LOREM", 1) // a-0001, still JSON
		check(t, join(damaged), "a-0001", 5)
	})
	t.Run("the first line cut", func(t *testing.T) {
		check(t, join(file[1:]), "", 2)
	})
	t.Run("lines out of order", func(t *testing.T) {
		damaged := append([]string(nil), file...)
		damaged[4], damaged[6] = damaged[6], damaged[4] // a-0002 after a-0003
		check(t, join(damaged), "", 5)
	})
}

// A line read alone keeps what it says: DecodeLine does not look for
// earlier lines.
func TestDecodeLineKeepsArgsPrefix(t *testing.T) {
	conv := chat(2, 300)
	file := lines(writeCompact(t, []record.Record{call(0, "t", conv[0]), call(1, "t", conv[1])}))
	r, err := record.DecodeLine([]byte(file[1]))
	require.NoError(t, err)
	require.NotNil(t, r.ArgsPrefix)
	assert.Equal(t, "t-0000", r.ArgsPrefix.CallID)
	assert.Equal(t, 2, r.ArgsPrefix.Count)
	assert.Equal(t, "["+message("assistant", 0, 300)+","+message("user", 1, 300)+"]", string(r.Args))
	require.NoError(t, r.Validate())

	for _, c := range []struct{ from, to, want string }{
		{`"count":2`, `"count":-1`, "field args_prefix.count: -1 is negative"},
		{`"crc32c":`, `"crc32c":-`, "field args_prefix.crc32c: -"},
		{`"args_prefix":{`, `"args_prefix":[`, "invalid JSON"},
	} {
		_, err := record.DecodeLine([]byte(strings.Replace(file[1], c.from, c.to, 1)))
		assert.ErrorContains(t, err, c.want, c.to)
	}
	missing := strings.Replace(file[1], `"count":2,`, ``, 1)
	_, err = record.DecodeLine([]byte(missing))
	var mf *record.MissingFieldsError
	require.ErrorAs(t, err, &mf)
	assert.Equal(t, []string{"args_prefix.count"}, mf.Fields)
}

// Writers racing on one trace never name a line that is not the latest of
// the trace: whatever the order, the file reads back whole.
func TestJSONLArgsPrefixConcurrent(t *testing.T) {
	conv := chat(50, 200)
	m := record.NewMemory(0)
	var rs []record.Record
	for i, args := range conv {
		rs = append(rs, m.Add(call(i, "t", args)))
	}
	var buf bytes.Buffer
	j := record.NewJSONLWith(&buf, record.JSONLOptions{ArgsPrefix: true})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(rs); i += 4 {
				assert.NoError(t, j.Append(context.Background(), rs[i]))
			}
		})
	}
	wg.Wait()
	require.NoError(t, j.Close())
	got, err := record.ReadJSONL(&buf)
	require.NoError(t, err)
	require.Len(t, got, 50)
	byID := map[string]string{}
	for _, r := range got {
		byID[r.CallID] = string(r.Args)
	}
	for i, args := range conv {
		assert.Equal(t, string(args), byID[fmt.Sprintf("t-%04d", i)])
	}
}

// The format, pinned: a three-turn conversation written with args_prefix,
// and the same written whole; both read back as the same records.
func TestArgsPrefixGolden(t *testing.T) {
	msgs := []string{
		`{"role":"system","content":"You are a careful assistant. Answer in one paragraph, cite the records you used, and say when the history does not hold what was asked."}`,
		`{"role":"user","content":"What did we decide about the retry policy?"}`,
		`{"role":"assistant","content":"Retries of one logical call collapse into one record, with attempts counting them."}`,
		`{"role":"user","content":"And for streams cut in the middle?"}`,
		`{"role":"assistant","content":"A cut stream is recorded as incomplete, with what arrived."}`,
		`{"role":"user","content":"Thanks."}`,
	}
	var rs []record.Record
	for i, n := range []int{2, 4, 6} {
		r := call(i, "trace-7", []byte("["+strings.Join(msgs[:n], ",")+"]"))
		r.DurationMS = 812.25
		rs = append(rs, r)
	}
	compact := writeCompact(t, rs)
	golden(t, "args_prefix.golden.jsonl", compact)
	var whole bytes.Buffer
	m := record.NewMemory(0)
	for _, r := range rs {
		whole.Write(m.Add(r).AppendJSON(nil))
		whole.WriteByte('\n')
	}
	golden(t, "args_whole.golden.jsonl", whole.Bytes())

	want, err := os.ReadFile(filepath.Join(goldenRecords, "args_whole.golden.jsonl"))
	require.NoError(t, err)
	fromWhole, err := record.ReadJSONL(bytes.NewReader(want))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(goldenRecords, "args_prefix.golden.jsonl"))
	require.NoError(t, err)
	fromCompact, err := record.ReadJSONL(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, fromWhole, fromCompact)
}

// FuzzArgsPrefix runs conversations made from the input (messages added,
// edited, dropped) through a history and a JSONL sink writing args_prefix:
// the history and the file read back every record's Args as they were.
func FuzzArgsPrefix(f *testing.F) {
	f.Add([]byte("aaaa bbbb cccc dddd"), uint64(0x0123456789abcdef))
	f.Add([]byte(`{"x":1} [2] "s" null`), uint64(7))
	f.Add([]byte("\xff\xfe \n \"quote\\\" \u2028"), uint64(42))
	f.Fuzz(func(t *testing.T, words []byte, ops uint64) {
		parts := bytes.Fields(words)
		if len(parts) == 0 {
			return
		}
		var msgs []string
		var rs []record.Record
		for i := range 24 {
			p := parts[i%len(parts)]
			var m string
			if json.Valid(p) {
				m = string(p)
			} else {
				b, _ := json.Marshal(strings.Repeat(string(p), 40))
				m = string(b)
			}
			switch op := ops >> (2 * (i % 32)) & 3; {
			case op == 0 || len(msgs) == 0:
				msgs = append(msgs, m)
			case op == 1:
				msgs[int(ops>>8)%len(msgs)] = m
			case op == 2:
				msgs = msgs[:len(msgs)/2]
			default:
				msgs = append(msgs, m, m)
			}
			r := call(i, []string{"a", "b"}[ops>>(i%64)&1], []byte("["+strings.Join(msgs, ",")+"]"))
			rs = append(rs, r)
		}
		m := record.NewMemory(int(ops%7) + 1)
		var buf bytes.Buffer
		j := record.NewJSONLWith(&buf, record.JSONLOptions{ArgsPrefix: true})
		want := make([]string, len(rs))
		for i, r := range rs {
			n := r.Clone()
			n.Normalize()
			want[i] = string(n.Args)
			require.NoError(t, j.Append(context.Background(), m.Add(r)))
		}
		require.NoError(t, j.Close())
		held := argsOf(m.Records())
		assert.Equal(t, want[len(want)-len(held):], held)
		sameWithoutArgs(t, buf.Bytes())
		got, err := record.ReadJSONL(&buf)
		require.NoError(t, err)
		assert.Equal(t, want, argsOf(got))
	})
}

// A program reading lines itself gets the same records as a Reader.
func TestArgsJoiner(t *testing.T) {
	conv := chat(5, 300)
	var rs []record.Record
	for i, args := range conv {
		rs = append(rs, call(i, "t", args))
	}
	file := lines(writeCompact(t, rs))
	j := record.NewArgsJoiner()
	for i, l := range file {
		r, err := record.DecodeLine([]byte(l))
		require.NoError(t, err)
		require.True(t, j.Join(&r), "line %d", i+1)
		assert.Equal(t, string(conv[i]), string(r.Args))
	}
	// Starting in the middle, as a follower that skipped what was there.
	j = record.NewArgsJoiner()
	r, err := record.DecodeLine([]byte(file[3]))
	require.NoError(t, err)
	assert.False(t, j.Join(&r))
	assert.Contains(t, r.Truncated, "args")
	assert.NotNil(t, r.ArgsPrefix)
}

// How a Reader may be told to give Args.
type argsMode int

const (
	argsWhole argsMode = iota
	argsSkipped
	argsSplit
)

// readAll reads every record and line error of data with a Reader, and
// with SplitArgs each record's elements.
func readAll(data []byte, mode argsMode) (rs []record.Record, elems [][][]byte, errs []string, unresolved, firstBad int) {
	rd := record.NewReader(bytes.NewReader(data))
	rd.SkipArgs = mode == argsSkipped
	rd.SplitArgs = mode == argsSplit
	for {
		r, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		rs = append(rs, r)
		elems = append(elems, rd.Elements())
	}
	unresolved, firstBad = rd.Unresolved()
	return rs, elems, errs, unresolved, firstBad
}

// sameWithoutArgs holds a Reader with SkipArgs, and one with SplitArgs,
// to one without: the same records, line errors and unresolved records,
// Args left out; and with SplitArgs, the elements of each record's Args
// as the whole Args hold them.
func sameWithoutArgs(t *testing.T, data []byte) {
	t.Helper()
	whole, _, errs, n, first := readAll(data, argsWhole)
	var want [][]string
	for _, r := range whole {
		var es [][]byte
		record.EachValidElement(r.Args, func(v []byte) bool { es = append(es, v); return true })
		want = append(want, strs(es))
	}
	for _, mode := range []argsMode{argsSkipped, argsSplit} {
		got, elems, gotErrs, gotN, gotFirst := readAll(data, mode)
		require.Equal(t, errs, gotErrs)
		require.Equal(t, [2]int{n, first}, [2]int{gotN, gotFirst}, "records unresolved, and the first one's line")
		require.Len(t, got, len(whole))
		for i := range whole {
			assert.Nil(t, got[i].Args, got[i].CallID)
			w := whole[i]
			w.Args = nil
			assert.Equal(t, w, got[i])
			if mode == argsSplit {
				assert.Equal(t, want[i], strs(elems[i]), "elements of %s", w.CallID)
			} else {
				assert.Empty(t, elems[i])
			}
		}
	}
}

// SkipArgs and SplitArgs check a file's args_prefix chains as reading them whole does,
// for a conversation going on, one that drops its middle, two traces
// interleaved, and every damage TestReadArgsPrefixDamaged makes.
func TestReaderSkipArgs(t *testing.T) {
	conv := chat(30, 200)
	var rs []record.Record
	for i, args := range conv {
		rs = append(rs, call(i, "long", args))
		if i%3 == 0 {
			// Another trace whose conversation drops its middle messages.
			msgs := strings.Split(strings.Trim(string(args), "[]"), "},{")
			short := msgs[:1]
			if len(msgs) > 4 {
				short = append(short, msgs[len(msgs)-3:]...)
			}
			rs = append(rs, call(i, "short", []byte("["+strings.Join(short, "},{")+"]")))
		}
	}
	rs = append(rs, call(99, "long", []byte("[]")))
	file := writeCompact(t, rs)
	require.Contains(t, string(file), `"args_prefix"`)
	sameWithoutArgs(t, file)
}

// A long conversation's file is read with SkipArgs or SplitArgs in memory
// that grows with the file, where putting every record's Args back
// together takes the square of the conversation (the report reads with
// SkipArgs, the store's import with SplitArgs). Bytes
// allocated, not time: the count does not drift with the machine.
func TestReaderSkipArgsLinear(t *testing.T) {
	var rs []record.Record
	for i, args := range chat(400, 500) {
		rs = append(rs, call(i, "t", args))
	}
	file := writeCompact(t, rs)
	for _, mode := range []argsMode{argsSkipped, argsSplit, argsWhole} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, _, errs, n, _ := readAll(file, mode)
		runtime.ReadMemStats(&after)
		require.Len(t, got, 400)
		require.Empty(t, errs)
		require.Zero(t, n)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("Args %s: %d MiB allocated for a %d KiB file", [...]string{"whole", "skipped", "split"}[mode], allocated>>20, len(file)>>10)
		if mode != argsWhole {
			assert.Less(t, allocated, uint64(16*len(file)))
		}
		// Whole Args cost the square of the conversation (84 MiB here): the
		// log shows the contrast, but a reader that made them cheaper
		// would be no fault, so it is not asserted.
	}
}
