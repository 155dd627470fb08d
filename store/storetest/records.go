// Package storetest is the conformance suite every backend of package
// store passes ([Run]).
package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// FullRecord returns a record with every field of record.Fields() set to
// a value of its own, found by reflection, so that a field added to the
// record later is set too, and must round-trip through a store without a
// change to its schema. unset names the fields it could not set (a kind
// it does not know): a test fails on them.
func FullRecord(callID string) (r record.Record, unset []string) {
	r = record.Record{
		CallID:     callID,
		Timestamp:  record.FormatTime(time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)),
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       json.RawMessage(`[{"role":"system","content":"Be brief."},{"role":"user","content":"Summarize our last three turns."}]`),
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini","stream":true,"temperature":0.2}`),
		Version:    record.Version,
	}
	v := reflect.ValueOf(&r).Elem()
	for _, f := range record.Fields() {
		fv := v.FieldByName(f.GoName)
		if !fv.IsValid() {
			unset = append(unset, f.Name+" (no Go field "+f.GoName+")")
			continue
		}
		if !fv.IsZero() {
			continue
		}
		if !fill(fv, f.Name) {
			unset = append(unset, f.Name)
		}
	}
	return r, unset
}

// fill sets v to a non-zero value derived from name; false when it
// cannot.
func fill(v reflect.Value, name string) bool {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte(`{"filled":"` + name + `"}`))
		return true
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(7 + len(name)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(11 + len(name)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.25 + float64(len(name)))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if !fill(p.Elem(), name) {
			return false
		}
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			if !fill(s.Index(i), fmt.Sprint(name, i)) {
				return false
			}
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		if !fill(k, name+"-key") || !fill(e, name+"-value") {
			return false
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if !fill(v.Field(i), name+"."+v.Type().Field(i).Name) {
					return false
				}
			}
		}
	default:
		return false
	}
	return true
}
