package wire_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/tidwall/gjson"
)

func Example() {
	body := []byte(`{"model":"gpt-4o-mini","usage":{"total_tokens":12}}`)
	root := wire.Parse(body)
	model := wire.Str(root.Get("model")) // a copy: safe after body is reused
	body[2] = 'X'
	fmt.Println(model, root.Get("usage.total_tokens").Int())
	// Output: gpt-4o-mini 12
}

// FuzzEachMember: EachMember walks a valid object as gjson's ForEach does,
// each value of the same type, raw bytes and string (a key's invalid UTF-8
// is U+FFFD, as encoding/json reads it, where gjson keeps the bytes).
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{"role":"user","content":"plain text, long enough to be read eight bytes at a time"}`,
		`{"a":"esc\"aped\n","b":1.5,"c":[1,{"d":"x"}],"e":{"f":null},"g":true,"h":""}`, `{"k\u00e9y":"\ud83d\ude00 bad \u12"}`, `{}`, `{"x":"a\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v := wire.Parse(b)
		if !json.Valid(b) || !v.IsObject() {
			return
		}
		type member struct {
			key, raw, str string
			typ           gjson.Type
		}
		var want, got []member
		v.ForEach(func(k, v gjson.Result) bool {
			want = append(want, member{string([]rune(k.String())), v.Raw, v.String(), v.Type})
			return true
		})
		wire.EachMember(v, func(k string, v gjson.Result) bool {
			got = append(got, member{k, v.Raw, v.String(), v.Type})
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\nEachMember %+v\nForEach    %+v", b, got, want)
		}
	})
}
