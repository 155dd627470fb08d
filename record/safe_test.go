package record_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

func nanValue() float64 { return math.NaN() }
func infValue() float64 { return math.Inf(1) }

type node struct {
	Name string
	Next *node
}

type tagged struct {
	Visible  string `json:"visible"`
	Skipped  string `json:"-"`
	Empty    string `json:"empty,omitempty"`
	Zero     int    `json:"zero,omitzero"`
	Renamed  int    `json:"n"`
	internal string
	Embedded
}

type Embedded struct {
	Inner   string
	Visible string `json:"visible"` // shadowed by the outer field of the same JSON name
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("boom in MarshalJSON") }

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("cannot marshal") }

type badJSON struct{}

func (badJSON) MarshalJSON() ([]byte, error) { return []byte(`{not json`), nil }

type panicErr struct{}

func (panicErr) Error() string { panic(panicErr{}) } // panics with a value whose Error panics again

type textKey struct{ a, b int }

func (k textKey) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("%d-%d", k.a, k.b)), nil }

func TestSafeNastyValues(t *testing.T) {
	cyc := &node{Name: "a"}
	cyc.Next = &node{Name: "b", Next: cyc}
	cycMap := map[string]any{"k": 1}
	cycMap["self"] = cycMap
	cycSlice := []any{1, nil}
	cycSlice[1] = cycSlice
	shared := &node{Name: "shared"}
	var nilErr error
	var nilPtr *node
	when := time.Date(2026, 11, 21, 10, 0, 0, 5, time.FixedZone("X", 3600))

	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"nil error", nilErr, nil},
		{"nil pointer", nilPtr, nil},
		{"string", "héllo", "héllo"},
		{"invalid utf8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"int kinds", []any{int8(-1), uint16(2), uintptr(3), int64(math.MinInt64), uint64(math.MaxUint64)},
			[]any{int64(-1), uint64(2), uint64(3), int64(math.MinInt64), uint64(math.MaxUint64)}},
		{"NaN and infinities", []any{math.NaN(), math.Inf(1), math.Inf(-1), float32(math.Inf(-1)), 1.5},
			[]any{"NaN", "Infinity", "-Infinity", "-Infinity", 1.5}},
		{"complex", 1 + 2i, "(1+2i)"},
		{"bytes", []byte("hi\x00"), "aGkA"},
		{"time", when, "2026-11-21T09:00:00.000000005Z"},
		{"duration", 1500 * time.Millisecond, "1.5s"},
		{"error", errors.New("it broke"), "it broke"},
		{"wrapped error", fmt.Errorf("outer: %w", net.ErrClosed), "outer: use of closed network connection"},
		{"func", func(int) error { return nil }, "<func(int) error>"},
		{"chan", make(chan int), "<chan int>"},
		{"int keys", map[int]string{2: "b", 1: "a"}, map[string]any{"1": "a", "2": "b"}},
		{"float and bool keys", map[any]int{1.5: 1, true: 2}, map[string]any{"1.5": int64(1), "true": int64(2)}},
		{"colliding keys", map[any]int{1: 1, "1": 2}, map[string]any{"1": int64(1), "1 (2)": int64(2)}},
		{"text marshaler keys", map[textKey]int{{1, 2}: 3}, map[string]any{"1-2": int64(3)}},
		{"pointer keys", map[*int]int{nil: 1}, map[string]any{"<nil>": int64(1)}},
		{"struct tags", tagged{Visible: "v", Skipped: "s", Renamed: 7, internal: "i", Embedded: Embedded{Inner: "in", Visible: "shadowed"}},
			map[string]any{"visible": "v", "n": int64(7), "Inner": "in"}},
		{"cycle through pointers", cyc, map[string]any{"Name": "a", "Next": map[string]any{"Name": "b", "Next": "<cycle: *record_test.node>"}}},
		{"cycle in map", cycMap, map[string]any{"k": int64(1), "self": "<cycle: map[string]interface {}>"}},
		{"cycle in slice", cycSlice, []any{int64(1), "<cycle: []interface {}>"}},
		{"shared is not a cycle", []*node{shared, shared}, []any{map[string]any{"Name": "shared", "Next": nil}, map[string]any{"Name": "shared", "Next": nil}}},
		{"marshaler", big.NewInt(12345), json.Number("12345")},
		{"raw message", json.RawMessage(`{"a":[1,"x"]}`), map[string]any{"a": []any{json.Number("1"), "x"}}},
		{"json number", json.Number("1e3"), json.Number("1e3")},
		{"bad json number", json.Number("12abc"), "12abc"},
		{"panicking marshaler", panicky{}, "<MarshalJSON of record_test.panicky failed: boom in MarshalJSON>"},
		{"failing marshaler", failing{}, "<MarshalJSON of record_test.failing failed: cannot marshal>"},
		{"invalid marshaler output", badJSON{}, "<record_test.badJSON: invalid JSON from MarshalJSON>"},
		{"error that panics", panicErr{}, "<Error of record_test.panicErr failed: panic>"},
		{"fallback at field level only", map[string]any{"ok": 1, "bad": panicky{}, "fn": func() {}},
			map[string]any{"ok": int64(1), "bad": "<MarshalJSON of record_test.panicky failed: boom in MarshalJSON>", "fn": "<func()>"}},
		{"array", [2]bool{true, false}, []any{true, false}},
		{"interface slice", []error{errors.New("e1"), nil}, []any{"e1", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := record.Safe(tt.in)
			assert.Equal(t, tt.want, got)
			assertEncodable(t, got)
		})
	}
}

// assertEncodable checks that encoding/json accepts the safe value and that
// SafeJSON produces the same JSON.
func assertEncodable(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.True(t, json.Valid(b))
	require.True(t, utf8.Valid(b))
}

func TestSafeJSONAgreesWithEncodingJSON(t *testing.T) {
	in := map[string]any{"z": []any{1, "two", 3.5, nil, true}, "a": map[int]float64{1: math.Inf(1)}, "html": "<&>"}
	want, err := json.Marshal(record.Safe(in))
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(record.SafeJSON(in)))
	assert.Equal(t, `{"a":{"1":"Infinity"},"html":"<&>","z":[1,"two",3.5,null,true]}`, string(record.SafeJSON(in)),
		"keys sorted, no HTML escaping")
}

func TestSafeLimits(t *testing.T) {
	o := record.SafeOptions{MaxDepth: 3, MaxString: 10, MaxItems: 3, MaxNodes: 50}

	t.Run("huge string cut at a rune boundary", func(t *testing.T) {
		got, cut := o.Convert(strings.Repeat("é", 20)) // 40 bytes
		assert.True(t, cut)
		assert.Equal(t, "ééééé…[truncated 30 bytes]", got)
	})
	t.Run("long list", func(t *testing.T) {
		got, cut := o.Convert([]int{1, 2, 3, 4, 5})
		assert.True(t, cut)
		assert.Equal(t, []any{int64(1), int64(2), int64(3), "…[2 more items]"}, got)
	})
	t.Run("big map", func(t *testing.T) {
		got, cut := o.Convert(map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
		assert.True(t, cut)
		assert.Equal(t, map[string]any{"a": int64(1), "b": int64(2), "c": int64(3), "…": "[2 more keys]"}, got)
	})
	t.Run("deep nesting", func(t *testing.T) {
		var v any = "bottom"
		for range 10 {
			v = []any{v}
		}
		got, cut := o.Convert(v)
		assert.True(t, cut)
		assert.Equal(t, []any{[]any{[]any{"<max depth: []interface {}>"}}}, got)
	})
	t.Run("within limits is not cut", func(t *testing.T) {
		_, cut := o.Convert(map[string]any{"a": []any{"short"}})
		assert.False(t, cut)
	})
	t.Run("shared structure cannot explode", func(t *testing.T) {
		// 2^40 paths through 40 shared levels: the node budget stops it.
		var v any = "leaf"
		for range 40 {
			v = []any{v, v}
		}
		got, cut := record.SafeOptions{MaxDepth: 64, MaxNodes: 1000}.Convert(v)
		assert.True(t, cut)
		assert.Contains(t, string(record.SafeOptions{}.JSON(got)), "too many values")
	})
	t.Run("bytes are capped after encoding", func(t *testing.T) {
		got, cut := o.Convert(make([]byte, 100))
		assert.True(t, cut)
		assert.True(t, strings.HasPrefix(got.(string), "AAAAAAAA"))
		assert.Contains(t, got, "[truncated 94 bytes]")
	})
}

func TestArgsAndKwargsJSON(t *testing.T) {
	assert.Equal(t, `[]`, string(record.ArgsJSON()))
	assert.Equal(t, `{}`, string(record.KwargsJSON(nil)))
	assert.Equal(t, `["q",1,"NaN"]`, string(record.ArgsJSON("q", 1, math.NaN())))
	assert.Equal(t, `{"model":"m","n":2}`, string(record.KwargsJSON(map[string]any{"n": 2, "model": "m"})))
}

func TestInspect(t *testing.T) {
	assert.Equal(t, "<nil>", record.Inspect(nil))
	assert.Equal(t, "<func()>", record.Inspect(func() {}))
	assert.Equal(t, "<chan<- string>", record.Inspect(make(chan<- string)))
}

// FuzzSafe builds values of many shapes from fuzz bytes, including floats
// from raw bits and strings of arbitrary bytes, and checks Convert never
// panics and always yields something encoding/json accepts.
func FuzzSafe(f *testing.F) {
	f.Add([]byte("hello"), uint64(0x7ff8000000000001), uint8(3))
	f.Add([]byte("\xff\xfe"), math.Float64bits(math.Inf(-1)), uint8(40))
	f.Add([]byte(`{"a":[1,2,{"b":null}]}`), uint64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, bits uint64, depth uint8) {
		s := string(data)
		var v any = map[any]any{
			s:          math.Float64frombits(bits),
			bits:       []byte(s),
			"raw":      json.RawMessage(data),
			"number":   json.Number(s),
			"f32":      math.Float32frombits(uint32(bits)),
			float64(1): []any{s, nil, errors.New(s), time.Unix(int64(bits), 0)},
		}
		for range int(depth % 40) {
			v = map[string]any{s: v, "list": []any{v}}
		}
		opts := record.SafeOptions{MaxNodes: 2000}
		if len(data) > 0 {
			opts.MaxString = int(data[0])
			opts.MaxItems = int(depth % 5)
		}
		got, _ := opts.Convert(v)
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("safe value does not encode: %v", err)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		ours := opts.JSON(v)
		if !json.Valid(ours) || !utf8.Valid(ours) {
			t.Fatalf("SafeJSON gave invalid JSON: %q", ours)
		}
		var x1, x2 any
		_ = json.Unmarshal(b, &x1)
		_ = json.Unmarshal(ours, &x2)
		if fmt.Sprint(x1) != fmt.Sprint(x2) {
			t.Fatalf("SafeJSON and encoding/json disagree:\n%s\n%s", b, ours)
		}
	})
}
