package wire

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ev struct{ Name, Data, Raw string }

func scan(body string) []ev {
	var out []ev
	ScanSSE([]byte(body), func(e Event) bool {
		out = append(out, ev{e.Name, string(e.Data), string(e.Raw)})
		return true
	})
	return out
}

func TestScanSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"lf", "data: a\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"cr", "data: a\r\rdata: b\r\r", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"no space after colon", "data:a\n\n", []ev{{"", "a", ""}}},
		{"comments skipped", ": OPENROUTER PROCESSING\n\ndata: x\n\n", []ev{{"", "x", ""}}},
		{"event names", "event: response.created\ndata: {}\n\n", []ev{{"response.created", "{}", ""}}},
		{"multi-line data", "data: a\ndata: b\ndata: c\n\n", []ev{{"", "a\nb\nc", ""}}},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: x\n\n", []ev{{"", "x", ""}}},
		{"cut last frame still delivered", "data: a\n\ndata: {\"par", []ev{{"", "a", ""}, {"", "{\"par", ""}}},
		{"bare json", "{\n  \"error\": {\"code\": 499}\n}\n\n", []ev{{"", "", "{\n  \"error\": {\"code\": 499}\n}"}}},
		{"empty data line", "data:\n\n", []ev{{"", "", ""}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scan(tt.in)
			if tt.name == "empty data line" {
				assert.Empty(t, got, "an event with nothing in it is not delivered")
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestScanSSEStops(t *testing.T) {
	n := 0
	ScanSSE([]byte("data: 1\n\ndata: 2\n\ndata: 3\n\n"), func(Event) bool { n++; return n < 2 })
	assert.Equal(t, 2, n)
}

func TestScanSSERealStreams(t *testing.T) {
	b := payload(t, "gemini/gemini_stream_error_midstream.sse")
	got := scan(string(b))
	require.Len(t, got, 3)
	assert.Contains(t, got[0].Data, `"First "`)
	assert.Contains(t, got[2].Raw, `"status": "CANCELLED"`, "the bare error object comes through as Raw")

	b = payload(t, "gemini/gemini_stream.sse")
	for _, e := range scan(string(b)) {
		assert.True(t, strings.HasPrefix(e.Data, "{"), "CRLF frames split cleanly: %q", e.Data)
	}

	b = payload(t, "openai/openai_chat_stream.sse")
	got = scan(string(b))
	assert.Equal(t, "[DONE]", got[len(got)-1].Data)
}

func FuzzScanSSE(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\n\r\n: c\nevent: e\ndata: b\ndata: c", "{\n\"error\":1\n}\n\n", "\r\r\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := scan(string(b))
		total := 0
		for _, e := range got {
			total += len(e.Data) + len(e.Raw)
		}
		if total > 2*len(b) {
			t.Fatalf("%d bytes of events from %d bytes", total, len(b))
		}
		// The three line endings SSE allows mean the same.
		if want := scan(string(newlinesOnly(b))); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, but with newlines only %q", b, got, want)
		}
	})
}

// newlinesOnly is b with each line ending ("\r\n", "\r" or "\n") written
// as "\n".
func newlinesOnly(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\r' {
			out = append(out, b[i])
			continue
		}
		if i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		out = append(out, '\n')
	}
	return out
}

// BenchmarkScanSSE is ScanSSE over a stream of small events at two sizes
// and with each line ending: the time per byte must not grow with the
// size. (Lines that end in '\r' alone once cost the square of the body: a
// '\n' was looked for again from each line.)
func BenchmarkScanSSE(b *testing.B) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		for _, size := range []int{64 << 10, 512 << 10} {
			frame := "data: {\"delta\":\"Hel\"}" + eol + eol
			body := []byte(strings.Repeat(frame, size/len(frame)))
			b.Run(fmt.Sprintf("eol=%q/size=%dKiB", eol, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					ScanSSE(body, func(Event) bool { return true })
				}
			})
		}
	}
}

// Events come out one by one, whatever the line endings.
func ExampleScanSSE() {
	body := ": keep-alive\r\n\r\ndata: {\"delta\":\"Hel\"}\r\n\r\ndata: {\"delta\":\"lo\"}\r\n\r\ndata: [DONE]\r\n\r\n"
	ScanSSE([]byte(body), func(e Event) bool {
		fmt.Println(string(e.Data))
		return true
	})
	// Output:
	// {"delta":"Hel"}
	// {"delta":"lo"}
	// [DONE]
}
