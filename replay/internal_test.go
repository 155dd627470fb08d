package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSSESplitterIgnoresReadBoundaries(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{"LF", "data: a\n\ndata: b\n\n", []string{"data: a\n\n", "data: b\n\n"}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"data: a\r\n\r\n", "data: b\r\n\r\n"}},
		{"CR", "data: a\r\rdata: b\r\r", []string{"data: a\r\r", "data: b\r\r"}},
		{"named events and comments", "event: x\ndata: 1\n\n: ping\n\ndata: 2\ndata: 3\n\n", []string{"event: x\ndata: 1\n\n", ": ping\n\n", "data: 2\ndata: 3\n\n"}},
		{"unfinished last event", "data: a\n\ndata: [DONE]", []string{"data: a\n\n", "data: [DONE]"}},
		{"unfinished CR at the end", "data: a\r", []string{"data: a\r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every way of cutting the stream into two reads, and one byte
			// per read, gives the same events.
			cuts := [][]string{{tt.stream}}
			for i := 1; i < len(tt.stream); i++ {
				cuts = append(cuts, []string{tt.stream[:i], tt.stream[i:]})
			}
			var bytewise []string
			for i := range len(tt.stream) {
				bytewise = append(bytewise, tt.stream[i:i+1])
			}
			cuts = append(cuts, bytewise)
			for _, reads := range cuts {
				var s sseSplitter
				var got []string
				for _, r := range reads {
					for _, f := range s.feed([]byte(r)) {
						got = append(got, string(f))
					}
				}
				if rest := s.rest(); len(rest) > 0 {
					got = append(got, string(rest))
				}
				require.Equal(t, tt.want, got, "reads %q", reads)
			}
		})
	}
}

func TestBodyKeepsItsBytesAndIsReadable(t *testing.T) {
	// replay's own payloads and every JSON capture of the shared corpus
	own, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	captured, err := filepath.Glob(filepath.Join("..", "testdata", "providers", "*", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, own)
	require.NotEmpty(t, captured)
	files := append(own, captured...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		bj := encodeBody(b)
		assert.NotEmpty(t, bj.Body, "%s: a real provider's JSON is stored as JSON", f)
		got, err := bj.decode()
		require.NoError(t, err)
		assert.Equal(t, string(b), string(got), f)
	}
	tests := []struct {
		name string
		body string
		form string // json, text or base64
	}{
		{"compact", `{"a":[1,2,{"b":"<&>"}],"c":{}}`, "json"},
		{"indented two spaces with a newline", "{\n  \"a\": [\n    1\n  ],\n  \"b\": []\n}\n", "json"},
		{"indented with tabs", "{\n\t\"a\": 1\n}", "json"},
		{"python spacing", `{"a": [1, 2], "b": {"c": "x, y: z"}}`, "json"},
		{"escapes kept", `{"s":"\u00e9\n\"q\"","t":"é"}`, "json"},
		{"an array", `[{"a":1}]`, "json"},
		{"odd spacing", `{ "a" :1}`, "text"},
		{"a scalar", `"just a string"`, "text"},
		{"not JSON", "data: x\n\n", "text"},
		{"leading space", ` {"a":1}`, "text"},
		{"invalid UTF-8", "\xff\xfe{}", "base64"},
		{"binary", "\x00\x01\x02", "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bj := encodeBody([]byte(tt.body))
			form := map[bool]string{len(bj.Body) > 0: "json", bj.BodyText != "": "text", bj.BodyBase64 != "": "base64"}[true]
			assert.Equal(t, tt.form, form)
			got, err := bj.decode()
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(got))
		})
	}
}

func TestSpaced(t *testing.T) {
	assert.Equal(t, `{"a": "b,c:d\"", "e": [1, 2]}`, string(spaced([]byte(`{"a":"b,c:d\"","e":[1,2]}`))))
}

func TestSplitPathUnescapes(t *testing.T) {
	assert.Equal(t, []string{"metadata", "a.b", "#"}, splitPath(`metadata.a\.b.#`))
	assert.Equal(t, `a\.b`, escapeKey("a.b"))
	assert.Equal(t, []string{"a.b"}, splitPath(escapeKey("a.b")))
}

func TestDigestCoversFrameBoundaries(t *testing.T) {
	a := &Response{Stream: true, Frames: []Frame{{Data: []byte("ab")}, {Data: []byte("c")}}}
	b := &Response{Stream: true, Frames: []Frame{{Data: []byte("a")}, {Data: []byte("bc")}}}
	assert.NotEqual(t, a.digest(), b.digest())
	assert.True(t, bytes.Equal(a.body(), b.body()))
}

func TestFrameForms(t *testing.T) {
	tests := []struct {
		frame string
		form  string
	}{
		{"data: {\"a\":1}\n\n", "data"},
		{"event: delta\ndata: [1,2]\n\n", "data"},
		{"data: {\"a\": 1}\n\n", "text"},
		{"data: {\"a\":1}\r\n\r\n", "text"},
		{"data: [DONE]\n\n", "text"},
		{"event: x\r\ndata: {}\n\n", "text"},
		{"data: {\"a\":1}\ndata: {\"b\":2}\n\n", "text"},
		{"id: 1\ndata: {}\n\n", "text"},
		{"data: {}\n\n", "data"},
		{"data: {\"a\":1}\n", "text"},
		{": comment\n\n", "text"},
		{"\xff\x00", "base64"},
	}
	for _, tt := range tests {
		fj := encodeFrame(Frame{Data: []byte(tt.frame)})
		form := map[bool]string{len(fj.Data) > 0: "data", fj.Text != "": "text", fj.Base64 != "": "base64"}[true]
		assert.Equal(t, tt.form, form, "%q", tt.frame)
		got, err := fj.decode()
		require.NoError(t, err)
		assert.Equal(t, tt.frame, string(got))
	}
}

func TestExcerptShowsWhereValuesDiffer(t *testing.T) {
	long := strings.Repeat("Answer briefly. ", 10) // 160 bytes
	key := "sk-" + "proj-" + strings.Repeat("abcdefghij", 4)
	tests := []struct {
		name, s, other string
		want           string // the whole excerpt, when given
		contains       string
	}{
		{name: "short values are shown whole", s: `What's the weather in Paris?`, other: `What's the weather in Rome?`, want: `"What's the weather in Paris?"`},
		{name: "a difference near the head keeps the head", s: "Be brief. " + long, other: "Be kind. " + long, want: `"Be brief. Answer briefly. Answer briefly. Answer briefly. Answer briefly. Answe…`},
		{name: "a difference in the middle", s: long + "Refunds take 14 days." + long, other: long + "Refunds take 30 days." + long, contains: "Refunds take 14 days.", want: `…"iefly. Refunds take 14 days.Answer briefly. Answer briefly. Answer briefly. Ans…`},
		{name: "a value that ends where the other goes on", s: long + "The end.", other: long + "The end. And more.", want: `…"er briefly. The end."`},
		{name: "escapes count in the lead", s: strings.Repeat("\n", 60) + "A tail", other: strings.Repeat("\n", 60) + "B tail", want: `…"\n\n\n\n\n\n\n\n\n\nA tail"`},
		{name: "runes are never split", s: strings.Repeat("é", 60) + "A" + strings.Repeat("ü", 60), other: strings.Repeat("é", 60) + "B", contains: "éA"},
		{name: "a secret cut by the excerpt is still redacted", s: long + key + " then A", other: long + key + " then B", contains: "[REDACTED] then A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := excerpt(tt.s, tt.other, quoteJSON)
			t.Log(got)
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
			}
			assert.Contains(t, got, tt.contains)
			assert.True(t, utf8.ValidString(got))
			assert.LessOrEqual(t, len(got), maxValue+2*len("…"))
			assert.NotContains(t, got, "abcdefghijabcdefghij", "no part of a key")
		})
	}
}
