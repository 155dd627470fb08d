package record_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/record"
)

func TestEachMember(t *testing.T) {
	var keys, vals []string
	ok := record.EachMember([]byte(` {"a":1, "b" : [1,{"x":"}"}] ,"c\u0064":"é\n","e":{}} `), func(k, v []byte) bool {
		keys, vals = append(keys, string(k)), append(vals, string(v))
		return true
	})
	assert.True(t, ok)
	assert.Equal(t, []string{"a", "b", "cd", "e"}, keys, "an escaped key is decoded")
	assert.Equal(t, []string{"1", `[1,{"x":"}"}]`, `"é\n"`, "{}"}, vals)

	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":tru}`, `{"a":"\x01"}`, `{a:1}`} {
		assert.False(t, record.EachMember([]byte(bad), func(k, v []byte) bool { return true }), "%q", bad)
	}
	assert.True(t, record.EachMember([]byte(`{}`), func(k, v []byte) bool { t.Fatal("no member"); return true }))
	n := 0
	assert.False(t, record.EachMember([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false }), "stopped")
	assert.Equal(t, 1, n)
}

func TestEachElement(t *testing.T) {
	var got []string
	assert.True(t, record.EachElement([]byte(`[1, "two" ,{"3":[]},null]`), func(v []byte) bool { got = append(got, string(v)); return true }))
	assert.Equal(t, []string{"1", `"two"`, `{"3":[]}`, "null"}, got)
	for _, bad := range []string{`{}`, `[`, `[1,]`, `[1 2]`, `[1]]`} {
		assert.False(t, record.EachElement([]byte(bad), func([]byte) bool { return true }), "%q", bad)
	}
}

func TestAppendString(t *testing.T) {
	for _, raw := range []string{`"plain"`, `"esc\"aped\\ \u00e9 \ud83d\ude00"`, "\"bad \xff utf8\"", `"lone \ud800"`, `""`} {
		var want string
		assert.NoError(t, json.Unmarshal([]byte(raw), &want), raw)
		got, ok := record.AppendString([]byte("pre:"), []byte(raw))
		assert.True(t, ok, raw)
		assert.Equal(t, "pre:"+want, string(got), raw)
		s, ok := record.String([]byte(raw))
		assert.True(t, ok)
		assert.Equal(t, want, s)
	}
	for _, bad := range []string{`1`, `"open`, `"a" `, `"\x"`} {
		_, ok := record.AppendString(nil, []byte(bad))
		assert.False(t, ok, bad)
	}
}

// FuzzEachMember: the walk agrees with encoding/json on whether a body is
// one valid object, and on its members, in order.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{}`, ` {"a":[1,{"b":null}],"c":"\u00e9"} `, `{"a":1,}`, `[1]`, `{"a":"\xff"}`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var keys []string
		var vals [][]byte
		ok := record.EachMember(b, func(k, v []byte) bool {
			keys, vals = append(keys, string(k)), append(vals, bytes.Clone(v))
			return true
		})
		trimmed := bytes.TrimSpace(b)
		valid := json.Valid(b) && len(trimmed) > 0 && trimmed[0] == '{'
		if ok != valid {
			t.Fatalf("EachMember %v, encoding/json valid object %v: %q", ok, valid, b)
		}
		if !ok {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.Token() // {
		for i := 0; d.More(); i++ {
			tok, _ := d.Token()
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			if i >= len(keys) || tok.(string) != keys[i] || !bytes.Equal(raw, vals[i]) {
				t.Fatalf("member %d: %q %q, encoding/json %q %q", i, keys, vals, tok, raw)
			}
		}
	})
}

// FuzzEachValid: on valid JSON, the walks that do not check agree with the
// ones that do; on anything else they do not panic.
func FuzzEachValid(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x\"y\\","c":[1,{"d":null}],"e\u0066":true}`, `[1,"two",{"3":[]}, -4.5e1 ,false]`, `{"a":"\\\\"}`, `{`, `[1,`, `"x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		type kv struct{ k, v string }
		var want, got []kv
		okM := record.EachMember(b, func(k, v []byte) bool { want = append(want, kv{string(k), string(v)}); return true })
		record.EachValidMember(b, func(k, v []byte) bool { got = append(got, kv{string(k), string(v)}); return true })
		if okM && !equalKV(want, got) {
			t.Fatalf("members of %q: checked %q, unchecked %q", b, want, got)
		}
		var wantE, gotE []string
		okE := record.EachElement(b, func(v []byte) bool { wantE = append(wantE, string(v)); return true })
		record.EachValidElement(b, func(v []byte) bool { gotE = append(gotE, string(v)); return true })
		if okE && !slices.Equal(wantE, gotE) {
			t.Fatalf("elements of %q: checked %q, unchecked %q", b, wantE, gotE)
		}
	})
}

func equalKV[T comparable](a, b []T) bool { return slices.Equal(a, b) }

func TestAppendValidString(t *testing.T) {
	for _, raw := range []string{`"plain"`, `"esc\"aped\\ \u00e9"`, `""`} {
		var want string
		assert.NoError(t, json.Unmarshal([]byte(raw), &want))
		assert.Equal(t, "pre:"+want, string(record.AppendValidString([]byte("pre:"), []byte(raw))), raw)
	}
	assert.Equal(t, "pre:", string(record.AppendValidString([]byte("pre:"), []byte(`12`))), "not a string")
}

// FuzzAppendString: AppendString and String decode a JSON string as
// encoding/json does (escapes, surrogates, invalid UTF-8), and accept
// exactly the valid ones.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\u00e9\ud83d\ude00\"\\\/"`, `"lone \ud800 x"`, "\"bad \xff\xfe utf8 \\n\"", `"cut \`, `"\u12"`, `12`, `"x" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := record.AppendString([]byte("pre:"), b)
		str, okS := record.String(b)
		var want string
		valid := len(b) >= 2 && b[0] == '"' && json.Unmarshal(b, &want) == nil && bytes.Equal(bytes.TrimSpace(b), b)
		if ok != valid || okS != valid {
			t.Fatalf("%q: AppendString %v, String %v, encoding/json %v", b, ok, okS, valid)
		}
		if !valid {
			return
		}
		if string(got) != "pre:"+want || str != want {
			t.Fatalf("%q: AppendString %q, String %q, encoding/json %q", b, got, str, want)
		}
	})
}
