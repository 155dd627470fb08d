package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var scanSeeds = []string{
	`{"a":[1,2.5e-3,-0,true,false,null,"x\u00e9\ud83d\ude00\n"]}`,
	`[]`, `{}`, ` [ ] `, `"str"`, `0`, `-1.5E+10`, `01`, `1.`, `.5`, `-`, `1e`, `[1,]`, `{"a"}`, `{"a":1,}`,
	`{"a":1 "b":2}`, `tru`, `nul`, "\"\x01\"", "\"a\xffb\"", "[\n1\r\n]", `"\u12g4"`, `"\x"`, `[[[[[]]]]]`,
	`{"call_id":"x","depth":0,"usage":{"input_tokens":1},"history_query_patterns":["a",null]}`,
	`{"call_id":"x","args":{"z":1},"kwargs":5,"outcome_summary":null}`,
	`{"call_id":"x","duration_ms":1e400}`, `{"depth":9223372036854775808}`, `{"depth":-9223372036854775808}`,
	`{"depth":1.0}`, `{"version":2}`, `{"call\u005fid":"esc"}`, `{"usage":null,"depth":null}`,
	`{"truncated":[],"outcome_summary":{"status":"ok","http_status":429,"zz":[1]}}`,
	`{"timestamp":"\ud800\u0041"}`, `{"speaker":"\udc00\ud800"}`,
	// The fields of issue 26: tool calls (merged over a key given twice,
	// as encoding/json merges, null elements and members), reasoning,
	// server, service tier and fingerprint.
	`{"call_id":"x","tool_calls":[{"id":"c1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},{"name":"now"}],"reasoning":"think","server_address":"api.openai.com","server_port":443,"service_tier":"default","system_fingerprint":"fp_1"}`,
	`{"tool_calls":[{"id":"a"},{"id":"b"}],"tool_calls":[{"name":"x"}],"tool_calls":[{"name":"y"},{"arguments":"{}"}]}`,
	`{"tool_calls":[null,{"id":null,"name":"n","zz":[1]}],"tool_calls":[{"id":"a"},null]}`,
	`{"tool_calls":[]}`, `{"tool_calls":null}`, `{"tool_calls":{}}`, `{"tool_calls":[1]}`, `{"tool_calls":[{"id":1}]}`,
	`{"server_port":65536}`, `{"server_port":"443"}`, `{"server_port":4.43e2}`, `{"reasoning":null,"service_tier":7}`,
}

func FuzzScanJSON(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)))
	f.Fuzz(func(t *testing.T, b []byte) {
		valid, badUTF8, newline := scanJSON(b)
		if valid != json.Valid(b) {
			t.Fatalf("scanJSON says valid=%v, encoding/json says %v for %q", valid, !valid, b)
		}
		if !valid {
			return
		}
		if badUTF8 != !utf8.Valid(b) {
			t.Fatalf("badUTF8=%v for %q", badUTF8, b)
		}
		if newline != bytes.ContainsAny(b, "\n\r") {
			t.Fatalf("newline=%v for %q", newline, b)
		}
	})
}

// TestPlainWord holds the scanners' eight-bytes-at-a-time tests to their
// byte-by-byte meaning, for every pair of byte values side by side (a
// subtraction's borrow reaches only the next byte up) at the start, in the
// middle and at the end of a word, and across two words, over a background
// of plain letters; plainRun in each of its loops (32, 8 and 1 bytes at a
// time).
func TestPlainWord(t *testing.T) {
	plainByte := func(c byte, quoteToo bool) bool {
		return c >= 0x20 && c < utf8.RuneSelf && c != '\\' && (!quoteToo || c != '"')
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN" // 40 bytes
	for _, at := range []int{0, 3, 6, 7, 14, 22, 30, 33, 38} {
		for pair := range 1 << 16 {
			b := []byte(letters)
			b[at], b[at+1] = byte(pair), byte(pair>>8)
			wantRun := plainByte(b[at], false) && plainByte(b[at+1], false)
			wantWord := plainByte(b[at], true) && plainByte(b[at+1], true)
			if got := plainRun(b); got != wantRun {
				t.Fatalf("plainRun(%q) = %v, want %v", b, got, wantRun)
			}
			if got := plainRun(b[at : at+2]); got != wantRun {
				t.Fatalf("plainRun(%q) = %v, want %v", b[at:at+2], got, wantRun)
			}
			if at < 7 {
				if got := plainWord(binary.LittleEndian.Uint64(b)); got != wantWord {
					t.Fatalf("plainWord(%q) = %v, want %v", b[:8], got, wantWord)
				}
				if got := plainRun(b[:8]); got != wantRun {
					t.Fatalf("plainRun(%q) = %v, want %v", b[:8], got, wantRun)
				}
			}
		}
	}
}

func TestScanJSONSeeds(t *testing.T) {
	for _, s := range scanSeeds {
		valid, _, _ := scanJSON([]byte(s))
		if valid != json.Valid([]byte(s)) {
			t.Errorf("%q: scanJSON valid=%v", s, valid)
		}
	}
	deep := strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)
	if valid, _, _ := scanJSON([]byte(deep)); valid {
		t.Error("nesting past the limit must be refused, as encoding/json does")
	}
}

// ambiguousKeys reports whether v holds a key that encoding/json would
// match case-insensitively to a field while our decoder would not.
func ambiguousKeys(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			for _, known := range knownKeys {
				if k != known && strings.EqualFold(k, known) {
					return true
				}
			}
			if ambiguousKeys(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if ambiguousKeys(e) {
				return true
			}
		}
	}
	return false
}

var knownKeys = func() (keys []string) {
	for _, t := range []reflect.Type{reflect.TypeFor[Record](), reflect.TypeFor[Outcome](), reflect.TypeFor[Usage](),
		reflect.TypeFor[ArgsPrefix](), reflect.TypeFor[Cost]()} {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			keys = append(keys, name, t.Field(i).Name)
		}
	}
	return keys
}()

// FuzzDecodeRecord checks the hand-written decoder against encoding/json.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if string(bytes.TrimSpace(b)) == "null" {
			return // a no-op for both, by convention
		}
		var got Record
		gotErr := got.UnmarshalJSON(b)

		type plain Record
		var p plain
		wantErr := json.Unmarshal(b, &p)
		if wantErr == nil && p.Version > Version {
			wantErr = ErrUnsupportedVersion
		}
		// Numbers as text: a key's value may be out of float64's range
		// (1e700), which must not hide the key from the check.
		var generic any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(&generic) == nil && (ambiguousKeys(generic) || legacyKeys(generic)) {
			return
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("decoder error %v, encoding/json error %v, for %q", gotErr, wantErr, b)
		}
		if gotErr != nil {
			return
		}
		want := Record(p)
		want.Normalize()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoders disagree for %q:\n got %#v\nwant %#v", b, got, want)
		}
	})
}

// legacyKeys reports whether v is an object with the fields that held
// the answer before the message model (output, tool_calls, reasoning),
// which the decoder reads into Output and encoding/json ignores; they
// are tested apart (TestLegacyOutput).
func legacyKeys(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k := range m {
		for _, old := range []string{"output", "tool_calls", "reasoning"} {
			if strings.EqualFold(k, old) {
				return true
			}
		}
	}
	return false
}

// A record written before the message model kept its answer in three
// fields: it reads as one message, reasoning, text and tool calls in
// that order; an output_message, when there is one, wins.
func TestLegacyOutput(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"output":"Hi"}`, `{"role":"assistant","parts":[{"type":"text","content":"Hi"}]}`},
		{`{"tool_calls":[{"id":"c1","name":"get_weather","arguments":"{\"city\": \"Paris\"}"},{"name":"now"}],"reasoning":"think","output":"ok"}`,
			`{"role":"assistant","parts":[{"type":"reasoning","content":"think"},{"type":"text","content":"ok"},{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris"}},{"type":"tool_call","name":"now"}]}`},
		{`{"tool_calls":[{"id":"a"},{"id":"b"}],"tool_calls":[{"name":"x"}]}`,
			`{"role":"assistant","parts":[{"type":"tool_call","id":"a","name":"x"}]}`}, // as encoding/json merges
		{`{"tool_calls":[{"arguments":"{\"cut"}]}`, `{"role":"assistant","parts":[{"type":"tool_call","arguments":"{\"cut"}]}`},
		{`{"output":"old","output_message":{"role":"assistant","parts":[{"type":"text","content":"new"}]}}`,
			`{"role":"assistant","parts":[{"type":"text","content":"new"}]}`},
		{`{"output":""}`, ``},
	} {
		var r Record
		require.NoError(t, r.UnmarshalJSON([]byte(tt.in)), tt.in)
		if tt.want == "" {
			assert.Nil(t, r.Output, tt.in)
			continue
		}
		require.NotNil(t, r.Output, tt.in)
		assert.Equal(t, tt.want, string(r.Output.AppendJSON(nil)), tt.in)
	}
	for _, in := range []string{`{"tool_calls":{}}`, `{"tool_calls":[1]}`, `{"output":1}`, `{"reasoning":[]}`} {
		var r Record
		assert.Error(t, r.UnmarshalJSON([]byte(in)), in)
	}
}

// FuzzEncodeString: appendString writes a JSON string that encoding/json
// reads as the string encoding/json itself writes for s (invalid UTF-8 as
// U+FFFD), on one line: no control character, no U+2028 or U+2029.
func FuzzEncodeString(f *testing.F) {
	for _, s := range []string{"plain", "The quick brown fox jumps over the lazy dog. The quick", "a\nb\té\"\\ \x01\x1f end of a long-enough line", "bad \xff\xfe utf8", "sep \u2028 \u2029", "12345678\"12345678\\1234567\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendString(nil, s)
		var got, want string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q: %s is not a JSON string: %v", s, enc, err)
		}
		std, _ := json.Marshal(s)
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q: written %s, read %q, want %q", s, enc, got, want)
		}
		for _, c := range enc {
			if c < 0x20 {
				t.Fatalf("%q: %s holds control character %#x", s, enc, c)
			}
		}
		if bytes.Contains(enc, []byte("\u2028")) || bytes.Contains(enc, []byte("\u2029")) {
			t.Fatalf("%q: %s holds a line separator", s, enc)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)[:4000]
	var buf []byte
	b.SetBytes(int64(len(prose)))
	for b.Loop() {
		buf = appendString(buf[:0], prose)
	}
}
