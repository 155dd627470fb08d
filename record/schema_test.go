package record_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// everyField is fullRecord with the fields a success leaves empty set too:
// every field of the format has a value.
func everyField() record.Record {
	r := fullRecord()
	r.ErrorType, r.ErrorMessage = record.ErrorRateLimit, "slow down"
	r.Outcome.ErrorType = record.ErrorRateLimit
	r.ArgsPrefix = &record.ArgsPrefix{CallID: "01JD2Q8Z3XKQ4M9R7T5V6W8Y09", Count: 2, CRC32C: 3735928559}
	return r
}

// keys returns the keys of the JSON object b, in order, and the raw value
// of each.
func keys(t *testing.T, b []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	tok, err := d.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var names []string
	vals := map[string]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, d.Decode(&v))
		names = append(names, tok.(string))
		vals[tok.(string)] = v
	}
	return names, vals
}

func names(fs []record.Field, keep func(record.Field) bool) []string {
	var out []string
	for _, f := range fs {
		if keep(f) {
			out = append(out, f.Name)
		}
	}
	return out
}

func all(record.Field) bool        { return true }
func required(f record.Field) bool { return f.Required }
func logged(f record.Field) bool   { return f.Logged }
func sub(fs []record.Field, name string) []record.Field {
	for _, f := range fs {
		if f.Name == name {
			return f.Fields
		}
	}
	return nil
}

// The struct tags say what the list says: every field of the Go struct is
// listed, under its JSON name, omitted when empty unless required.
func TestSchemaStructTags(t *testing.T) {
	var check func(typ reflect.Type, fs []record.Field)
	check = func(typ reflect.Type, fs []record.Field) {
		byGo := map[string]record.Field{}
		for _, f := range fs {
			byGo[f.GoName] = f
		}
		exported := 0
		for i := range typ.NumField() {
			if typ.Field(i).IsExported() {
				exported++
			}
		}
		require.Equal(t, exported, len(fs), "%s: struct fields and listed fields", typ)
		for i := range typ.NumField() {
			sf := typ.Field(i)
			if !sf.IsExported() {
				continue
			}
			f, ok := byGo[sf.Name]
			require.True(t, ok, "%s.%s is not in record.Fields", typ, sf.Name)
			name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			assert.Equal(t, f.Name, name, "%s.%s", typ, sf.Name)
			assert.Equal(t, !f.Required, strings.Contains(opts, "omitempty"), "%s.%s: omitempty when not required", typ, sf.Name)
			if f.Fields != nil {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
					ft = ft.Elem() // an optional object, or each object of an array
				}
				check(ft, f.Fields)
			}
		}
	}
	check(reflect.TypeOf(record.Record{}), record.Fields())
}

// The hand-written encoder writes every listed field, in the listed order,
// and the required ones even when empty.
func TestSchemaEncoder(t *testing.T) {
	r := everyField()
	got, vals := keys(t, r.AppendJSON(nil))
	assert.Equal(t, names(record.Fields(), all), got)
	for _, group := range []string{"args_prefix", "outcome_summary", "usage", "cost"} {
		got, _ := keys(t, vals[group])
		assert.Equal(t, names(sub(record.Fields(), group), all), got, group)
	}
	msg := sub(record.Fields(), "output_message")
	got, _ = keys(t, vals["output_message"])
	assert.Equal(t, names(msg, all), got, "output_message")
	every := record.Message{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartOther, ID: "i", Name: "n", Content: "c",
		Arguments: json.RawMessage(`{"a":1}`), MIMEType: "m", URI: "u", Size: 1, IsError: true, Data: json.RawMessage(`[]`)}}}
	var parts []json.RawMessage
	require.NoError(t, json.Unmarshal(every.AppendJSON(nil), &struct{ Parts *[]json.RawMessage }{&parts}))
	got, _ = keys(t, parts[0])
	assert.Equal(t, names(sub(msg, "parts"), all), got, "parts")
	none := record.Message{Parts: []record.Part{{}}}
	got, vals = keys(t, none.AppendJSON(nil))
	assert.Equal(t, names(msg, required), got)
	require.NoError(t, json.Unmarshal(vals["parts"], &parts))
	got, _ = keys(t, parts[0])
	assert.Equal(t, names(sub(msg, "parts"), required), got, "parts")

	var empty record.Record
	got, vals = keys(t, empty.AppendJSON(nil))
	assert.Equal(t, names(record.Fields(), required), got)
	got, _ = keys(t, vals["outcome_summary"])
	assert.Equal(t, names(sub(record.Fields(), "outcome_summary"), required), got)
}

// The hand-written decoder reads every listed field: each optional one
// alone, beside the required ones, comes back.
func TestSchemaDecoder(t *testing.T) {
	full := everyField()
	_, vals := keys(t, full.AppendJSON(nil))
	fv := reflect.ValueOf(full)
	var base []string
	for _, name := range names(record.Fields(), required) {
		base = append(base, `"`+name+`":`+string(vals[name]))
	}
	for _, f := range record.Fields() {
		kv := base
		if !f.Required {
			kv = append(kv[:len(kv):len(kv)], `"`+f.Name+`":`+string(vals[f.Name]))
		}
		line := "{" + strings.Join(kv, ",") + "}"
		got, err := record.DecodeLine([]byte(line))
		require.NoError(t, err, line)
		want := fv.FieldByName(f.GoName).Interface()
		have := reflect.ValueOf(got).FieldByName(f.GoName).Interface()
		if f.Name == "args" || f.Name == "kwargs" {
			assert.JSONEq(t, string(want.(json.RawMessage)), string(have.(json.RawMessage)), f.Name)
			continue
		}
		assert.Equal(t, want, have, "the decoder reads %s", f.Name)
	}
}

// The slog attributes are the logged fields, under the same keys, and
// transcripts are not among them.
func TestSchemaSlog(t *testing.T) {
	r := everyField()
	attrs := r.LogValue().Group()
	var got []string
	groups := map[string][]slog.Attr{}
	for _, a := range attrs {
		got = append(got, a.Key)
		if a.Value.Kind() == slog.KindGroup {
			groups[a.Key] = a.Value.Group()
		}
	}
	assert.ElementsMatch(t, names(record.Fields(), logged), got)
	for _, group := range []string{"outcome_summary", "usage", "cost"} {
		var keys []string
		for _, a := range groups[group] {
			keys = append(keys, a.Key)
		}
		assert.ElementsMatch(t, names(sub(record.Fields(), group), logged), keys, group)
	}
	for _, transcript := range []string{"args", "kwargs", "program_source", "output_message"} {
		assert.NotContains(t, got, transcript)
	}
}

func TestFieldsIsACopy(t *testing.T) {
	fs := record.Fields()
	fs[0].Name = "changed"
	sub(fs, "usage")[0].Name = "changed"
	assert.Equal(t, "call_id", record.Fields()[0].Name)
	assert.Equal(t, "input_tokens", sub(record.Fields(), "usage")[0].Name)
}
