package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// The history keeps a record in a form of its own, its rarely set fields
// apart: every field of Record, set alone, is read back as it was set,
// through Append and Add, so that a field added to Record and not to the
// history's form fails here.
func TestMemoryKeepsEveryField(t *testing.T) {
	typ := reflect.TypeOf(record.Record{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			in := record.Record{CallID: "c1", TraceID: "t1", MethodName: "m", Args: json.RawMessage(`[]`), Kwargs: json.RawMessage(`{}`)}
			v := reflect.ValueOf(&in).Elem().Field(i)
			setNonZero(t, v)
			require.False(t, v.IsZero(), "the field is set")
			want := in.Clone()
			want.Normalize()

			m := record.NewMemory(0)
			require.NoError(t, m.Append(context.Background(), in))
			got := m.Records()
			require.Len(t, got, 1)
			assert.Equal(t, want, got[0], "through Append")
			assert.Equal(t, reflect.ValueOf(want).Field(i).Interface(), reflect.ValueOf(got[0]).Field(i).Interface())

			m = record.NewMemory(0)
			added := m.Add(in.Clone())
			got = m.Records()
			require.Len(t, got, 1)
			added.Normalize()
			added.ArgsPrefix = want.ArgsPrefix
			assert.Equal(t, added, got[0], "through Add")
		})
	}
}

// setNonZero gives v a value other than its zero value.
func setNonZero(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		setNonZero(t, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setNonZero(t, v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`["x"]`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		setNonZero(t, s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		setNonZero(t, k)
		setNonZero(t, e)
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		t.Fatalf("no value for a %s", v.Type())
	}
}

// The same request made by independent calls (a probe, a batch job) is
// held once: the first records of different traces with the same Args
// share them, through Add and AddBorrowed alike, and each reads back whole.
func TestMemorySharesIdenticalFirstRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	args := []byte(`[{"role":"user","content":"` + strings.Repeat("Is the service up? ", 200) + `"}]`)
	for _, borrowed := range []bool{false, true} {
		held := heapHeld(func() any {
			m := record.NewMemory(0)
			buf := make([]byte, len(args))
			for i := range 500 {
				r := call(i, fmt.Sprintf("trace-%d", i), nil)
				if borrowed {
					copy(buf, args)
					r.Args = buf
					m.AddBorrowed(r)
					clear(buf) // the lender's buffer serves another call
				} else {
					r.Args = bytes.Clone(args)
					m.Add(r)
				}
			}
			return m
		})
		t.Logf("borrowed %t: 500 records of %d bytes of args: %d bytes held", borrowed, len(args), held)
		// Each record takes its fields, about 800 bytes; 500 copies of the
		// Args would take five times that.
		assert.Less(t, held, int64(500*len(args)/4), "borrowed %t: held once, not 500 times", borrowed)
	}
	m := record.NewMemory(3)
	for i := range 5 {
		r := call(i, fmt.Sprintf("trace-%d", i), nil)
		r.Args = append([]byte(nil), args...)
		m.AddBorrowed(r)
	}
	for _, r := range m.Records() {
		assert.Equal(t, string(args), string(r.Args))
	}
}
