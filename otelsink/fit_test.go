package otelsink

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// fitMessagesSlow and cutPartsSlow are fitMessages and cutParts as they
// were first written: the meaning the faster ones keep.
func fitMessagesSlow(msgs []chatMessage, max int) (string, bool) {
	b, _ := json.Marshal(msgs)
	if len(b) <= max {
		return string(b), false
	}
	for len(msgs) > 1 {
		msgs = msgs[1:]
		if b, _ = json.Marshal(msgs); len(b) <= max {
			return string(b), true
		}
	}
	cutPartsSlow(msgs[0].Parts, len(b)-max)
	if b, _ = json.Marshal(msgs); len(b) <= max {
		return string(b), true
	}
	return "", true
}

func cutPartsSlow(parts []part, excess int) {
	for excess > 0 {
		longest, n := -1, 0
		for i, p := range parts {
			if s, ok := p["content"].(string); ok && len(s) > n && !strings.HasSuffix(s, cutMark) {
				longest, n = i, len(s)
			}
		}
		if longest < 0 {
			return
		}
		keep := n - excess - excess/8 - len(cutMark)
		if keep < 0 {
			keep = 0
		}
		s := cutText(parts[longest]["content"].(string), keep+len(cutMark))
		parts[longest]["content"] = s
		excess -= n - len(s)
	}
}

// checkFit holds fitMessages and fitParts to the slow versions on the
// messages of args (read afresh for each: cutting changes the parts).
func checkFit(t *testing.T, args []byte, max int) {
	t.Helper()
	_, msgs := messages(args)
	_, slow := messages(args)
	if len(msgs) > 0 {
		v, c := fitMessages(msgs, max)
		want, wantCut := fitMessagesSlow(slow, max)
		require.Equal(t, want, v, "input messages, max %d", max)
		require.Equal(t, wantCut, c, "input messages cut, max %d", max)
	}
	for _, m := range msgs {
		fast := clonedParts(m.Parts)
		old := clonedParts(m.Parts)
		for _, excess := range []int{1, max / 3, max} {
			cutParts(fast, excess)
			cutPartsSlow(old, excess)
			require.Equal(t, old, fast, "parts cut by %d", excess)
		}
	}
}

func clonedParts(ps []part) []part {
	out := make([]part, len(ps))
	for i, p := range ps {
		out[i] = make(part, len(p))
		for k, v := range p {
			out[i][k] = v
		}
	}
	return out
}

// The fitting of content to its bound is the same as it was: the same
// messages left out, the same texts cut by the same bytes.
func TestFitMatchesItsFirstVersion(t *testing.T) {
	long := strings.Repeat("é", 300)
	var turns []string
	for i := range 40 {
		turns = append(turns, fmt.Sprintf(`{"role":"user","content":"turn %d %s"}`, i, strings.Repeat("x", i*7)))
	}
	parts := `{"role":"user","content":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"aaaa"},{"type":"text","text":"`+long+`"},{"type":"text","text":"bb"},`, 5), ",") + `]}`
	for _, args := range []string{
		`[` + strings.Join(turns, ",") + `]`,
		`[` + parts + `]`,
		`[` + strings.Join(turns[:5], ",") + `,` + parts + `]`,
		`["hi",[1],null,{"role":"model","parts":[{"text":"x"},{"functionCall":{"name":"f","args":{}}}]}]`,
		`[{"role":"user","content":"<&>\u2028"},{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}"}]`,
	} {
		for _, max := range []int{0, 1, 10, 64, 100, 200, 500, 1000, 5000, 1 << 20} {
			checkFit(t, []byte(args), max)
		}
	}
}

func FuzzFitMatchesItsFirstVersion(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":"there"}]`), 20)
	f.Add([]byte(`[{"role":"user","content":[{"type":"text","text":"aaaa"},{"type":"text","text":"bbbbbbbb"},{"type":"text","text":"cc"}]}]`), 30)
	f.Add([]byte(`[{"role":"user","content":"é<>"},"s",[1],null]`), 7)
	f.Fuzz(func(t *testing.T, args []byte, max int) {
		if max < 0 || max > 1<<16 || len(args) > 1<<16 {
			return
		}
		checkFit(t, args, max)
	})
}

// A long conversation is fitted with memory in proportion to it. Leaving
// out one message at a time and encoding the rest again allocated the
// square of its length: 640 MB, and 6.6 s, for 256 KiB of short
// messages. Bytes, not time: the count does not drift with the machine.
func TestFitLongConversationLinearMemory(t *testing.T) {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; b.Len() < 256<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"hello world %d"}`, i)
	}
	b.WriteByte(']')
	r := record.Record{Args: json.RawMessage(b.String())}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a := attrMap(contentAttributes(&r, "chat", DefaultMaxContentBytes, nil))
	runtime.ReadMemStats(&after)
	msgs := a["gen_ai.input.messages"].(string)
	assert.LessOrEqual(t, len(msgs), DefaultMaxContentBytes)
	assert.Greater(t, len(msgs), DefaultMaxContentBytes*9/10, "the latest messages fill the bound")
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(64*b.Len()), "%d bytes allocated for %d bytes of args", allocated, b.Len())
}

// BenchmarkContentBounded fits content larger than its bound: a long
// conversation of short messages, and one message of many text parts.
func BenchmarkContentBounded(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10} {
		var conv, many strings.Builder
		conv.WriteByte('[')
		for i := 0; conv.Len() < size; i++ {
			if i > 0 {
				conv.WriteByte(',')
			}
			fmt.Fprintf(&conv, `{"role":"user","content":"hello world %d"}`, i)
		}
		conv.WriteByte(']')
		many.WriteString(`[{"role":"user","content":[`)
		for i := 0; many.Len() < size; i++ {
			if i > 0 {
				many.WriteByte(',')
			}
			fmt.Fprintf(&many, `{"type":"text","text":"part %d of many"}`, i)
		}
		many.WriteString(`]}]`)
		for _, c := range []struct{ name, args string }{{"messages", conv.String()}, {"parts", many.String()}} {
			b.Run(fmt.Sprintf("shape=%s/size=%dKiB", c.name, size>>10), func(b *testing.B) {
				r := record.Record{Args: json.RawMessage(c.args)}
				b.SetBytes(int64(len(c.args)))
				for b.Loop() {
					contentAttributes(&r, "chat", DefaultMaxContentBytes, nil)
				}
			})
		}
	}
}
