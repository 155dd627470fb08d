package record_test

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// withoutKey returns the JSON object b without its member name, in the
// same order otherwise.
func withoutKey(t *testing.T, b []byte, name string) []byte {
	t.Helper()
	order, vals := keys(t, b)
	var kv []string
	for _, k := range order {
		if k != name {
			kv = append(kv, `"`+k+`":`+string(vals[k]))
		}
	}
	return []byte("{" + strings.Join(kv, ",") + "}")
}

// withKey returns b with member name set to the raw value v.
func withKey(t *testing.T, b []byte, name, v string) []byte {
	t.Helper()
	order, vals := keys(t, b)
	var kv []string
	for _, k := range order {
		val := string(vals[k])
		if k == name {
			val = v
		}
		kv = append(kv, `"`+k+`":`+val)
	}
	return []byte("{" + strings.Join(kv, ",") + "}")
}

// An object that is not a record is a bad line, not a record of "(none)"s
// that would skew every figure made from the file.
func TestReaderRefusesObjectsThatAreNotRecords(t *testing.T) {
	good := string(rec("a", "").AppendJSON(nil))
	input := "{}\n" + `{"call_id":"x"}` + "\n" + good + "\n"
	got, err := record.ReadJSONL(strings.NewReader(input))
	assert.Equal(t, []string{"a"}, ids(got))
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "record: line 1: not a record: no call_id, timestamp, speaker, method_name, args, kwargs, outcome_summary, history_record_appended, conversation_history_size, history_access_detected, history_query_patterns, version fields")
	assert.Contains(t, msg, "record: line 2: not a record: no timestamp, speaker,")
	assert.NotErrorIs(t, err, record.ErrNoRecords, "one line was a record")

	r := record.NewReader(strings.NewReader(input))
	for line := 1; line <= 2; line++ {
		_, err := r.Read()
		var le *record.LineError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, line, le.Line)
		var mf *record.MissingFieldsError
		require.ErrorAs(t, err, &mf)
		assert.Contains(t, mf.Fields, "version")
	}
	rr, err := r.Read()
	require.NoError(t, err)
	assert.Equal(t, "a", rr.CallID)
}

// Every field the format lists as required is required of a line, nested
// ones included, whether it is left out or null: the list is the rule.
func TestReaderRequiresEveryRequiredField(t *testing.T) {
	full := everyField()
	full.Cost = &record.Cost{USD: 0.001, Table: "t"}
	line := full.AppendJSON(nil)
	_, vals := keys(t, line)
	_, err := record.DecodeLine(line)
	require.NoError(t, err, "the whole record is one")

	checked := 0
	for _, f := range record.Fields() {
		if f.Required {
			checked++
			for _, bad := range [][]byte{withoutKey(t, line, f.Name), withKey(t, line, f.Name, "null")} {
				_, err := record.DecodeLine(bad)
				var mf *record.MissingFieldsError
				require.ErrorAs(t, err, &mf, "%s", bad)
				assert.Equal(t, []string{f.Name}, mf.Fields)
			}
		}
		for _, sf := range f.Fields {
			if !sf.Required {
				continue
			}
			checked++
			inner := withoutKey(t, vals[f.Name], sf.Name)
			_, err := record.DecodeLine(withKey(t, line, f.Name, string(inner)))
			var mf *record.MissingFieldsError
			require.ErrorAs(t, err, &mf, "%s.%s", f.Name, sf.Name)
			assert.Equal(t, []string{f.Name + "." + sf.Name}, mf.Fields)
		}
	}
	assert.Equal(t, 12+3+3+3+2+2, checked, "the required fields of record.Fields")

	// Optional objects are optional: a record without usage, cost or
	// args_prefix is one.
	_, err = record.DecodeLine(withoutKey(t, withoutKey(t, withoutKey(t, line, "usage"), "cost"), "args_prefix"))
	assert.NoError(t, err)
}

// The reason given for a bad line is what is wrong with it, said once.
func TestReaderSaysWhyALineIsBad(t *testing.T) {
	good := string(rec("a", "").AppendJSON(nil))
	for _, c := range []struct {
		line, want string
	}{
		{`{"call_id": broken json`, "invalid JSON at offset 12: unexpected character 'b'"},
		{`{"call_id": "x", "speaker": tru}`, `invalid JSON at offset 28: unexpected "tru"`},
		{good + ` {}`, "invalid JSON at offset " + strconv.Itoa(len(good)+1) + ": more after the first JSON value"},
		{`[1,2]`, "not a record: a JSON array, not an object"},
		{`"a string"`, "not a record: a JSON string, not an object"},
		{`42`, "not a record: a JSON number, not an object"},
		{`this is not json`, `invalid JSON at offset 0: unexpected "this"`},
		{`null`, "not a record: null"},
		{strings.Replace(good, `"call_id":"a"`, `"call_id":5`, 1), "field call_id: cannot use a JSON number as a string"},
		{strings.Replace(good, `"version":1`, `"version":0`, 1), "version 0 is not a format version"},
		{strings.Replace(good, `"version":1`, `"version":2`, 1), "format version 2 is newer than this reader's (1)"},
	} {
		input := good + "\n" + good + "\n" + good + "\n" + good + "\n" + c.line + "\n"
		_, err := record.ReadJSONL(strings.NewReader(input))
		require.Error(t, err, c.line)
		assert.Equal(t, "record: line 5: "+c.want, err.Error(), c.line)
		_, err = record.DecodeLine([]byte(c.line))
		assert.EqualError(t, err, c.want)
	}
	_, err := record.DecodeLine([]byte(strings.Replace(good, `"version":1`, `"version":2`, 1)))
	assert.ErrorIs(t, err, record.ErrUnsupportedVersion)
}

// Bytes that are not a history file at all say so.
func TestReadJSONLNoRecords(t *testing.T) {
	noise := bytes.Repeat([]byte("\x8f\x00garbage\xff\n"), 5)
	got, err := record.ReadJSONL(bytes.NewReader(noise))
	assert.Empty(t, got)
	assert.ErrorIs(t, err, record.ErrNoRecords)

	got, err = record.ReadJSONL(strings.NewReader(""))
	assert.Empty(t, got)
	assert.NoError(t, err, "an empty input is an empty history, not a wrong file")

	// A lone torn line is a crash's leftover, not a bad line.
	got, err = record.ReadJSONL(strings.NewReader(`{"call_id":"a","timest`))
	assert.Empty(t, got)
	assert.NoError(t, err)

	// A long last line without a newline that never began as a record is
	// no crash's leftover: it is what random bytes are, not a history.
	got, err = record.ReadJSONL(strings.NewReader(strings.Repeat("a", 1<<20)))
	assert.Empty(t, got)
	assert.ErrorIs(t, err, record.ErrNoRecords)
}

// DecodeLine is what tail and other line-at-a-time readers use: the same
// rule as the Reader, and the same record as a lenient decode when the
// line is one.
func TestDecodeLineMatchesUnmarshal(t *testing.T) {
	line := fullRecord().AppendJSON(nil)
	strict, err := record.DecodeLine(line)
	require.NoError(t, err)
	var lenient record.Record
	require.NoError(t, lenient.UnmarshalJSON(line))
	assert.Equal(t, lenient, strict)

	r := record.NewReader(io.MultiReader(bytes.NewReader(line), strings.NewReader("\n")))
	viaReader, err := r.Read()
	require.NoError(t, err)
	assert.Equal(t, strict, viaReader)

	// UnmarshalJSON stays lenient for encoding/json callers.
	require.NoError(t, lenient.UnmarshalJSON([]byte(`{"call_id":"x"}`)))
	_, err = record.DecodeLine([]byte(`{"call_id":"x"}`))
	assert.Error(t, err)
	assert.False(t, errors.Is(err, record.ErrUnsupportedVersion))
}
