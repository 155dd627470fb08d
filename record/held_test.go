package record_test

import (
	"context"
	"encoding/json"
	"reflect"
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
