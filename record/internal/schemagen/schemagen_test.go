package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/record"
)

// Paths from this package's directory.
var (
	moduleRoot = filepath.Join("..", "..", "..")
	docPath    = filepath.Join(moduleRoot, "docs", "record-format.md")
	schemaPath = filepath.Join(moduleRoot, "docs", "record.schema.json")
)

func readDoc(t *testing.T) []byte {
	t.Helper()
	md, err := os.ReadFile(docPath)
	require.NoError(t, err)
	return md
}

// The committed schema is what the generator writes from record.Fields and
// the page's table: a field added to the record, or a description edited,
// fails here until go generate ./record is run.
func TestCommittedSchemaIsCurrent(t *testing.T) {
	want, err := generate(readDoc(t))
	require.NoError(t, err, "docs/record-format.md and record.Fields disagree")
	got, err := os.ReadFile(schemaPath)
	require.NoError(t, err)
	if !bytes.Equal(want, got) {
		t.Errorf("docs/record.schema.json is stale: run go generate ./record (from the module root) and commit it")
	}
}

// The page documents every field of the format, in order, with its type
// and required mark, and nothing else; each way of getting it wrong is
// named.
func TestFieldTableMatchesTheFormat(t *testing.T) {
	md := readDoc(t)
	rows, err := parseFieldTable(md)
	require.NoError(t, err)
	fields, err := flatten(record.Fields(), recordType, "")
	require.NoError(t, err)
	require.NoError(t, compare(fields, rows), "the field table of docs/record-format.md")
	assert.Len(t, rows, len(fields))

	// The ways a table goes wrong, each on a copy of the real page.
	page := string(md)
	row := func(path string) string {
		for _, line := range strings.Split(page, "\n") {
			if strings.HasPrefix(line, "| `"+path+"` |") {
				return line + "\n"
			}
		}
		t.Fatalf("no row for %s", path)
		return ""
	}
	for _, tc := range []struct {
		name string
		page string
		want string
	}{
		{"a field undocumented", strings.Replace(page, row("usage.reasoning_tokens"), "", 1),
			"field usage.reasoning_tokens (integer) is in record.Fields but not in the field table"},
		{"a field that is not one", strings.Replace(page, row("version"), row("version")+"| `colour` | string | no | Not a field. |\n", 1),
			"documents colour, which is not in record.Fields"},
		{"the wrong type", strings.Replace(page, "| `hops` | integer |", "| `hops` | string |", 1),
			`field hops: the table says "string", the format's type is "integer"`},
		{"the wrong required mark", strings.Replace(page, "| `speaker` | string | yes |", "| `speaker` | string | no |", 1),
			"field speaker: the table says required no, record.Fields says yes"},
		{"out of order", strings.Replace(strings.Replace(page, row("hops"), "", 1), row("attempts"), row("hops")+row("attempts"), 1),
			"the field table has hops where record.Fields has attempts"},
		{"twice", strings.Replace(page, row("model"), row("model")+row("model"), 1),
			"field model is documented twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEqual(t, page, tc.page, "the edit applies")
			_, err := generate([]byte(tc.page))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// compileSchema compiles the committed schema; the compiler checks it
// against the draft 2020-12 meta-schema first.
func compileSchema(t testing.TB, assertFormat bool) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath)
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	if assertFormat {
		c.AssertFormat()
	}
	require.NoError(t, c.AddResource("record.schema.json", doc))
	s, err := c.Compile("record.schema.json")
	require.NoError(t, err, "the schema is not a valid draft 2020-12 schema")
	return s
}

func instance(t testing.TB, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return v
}

// goldenRecords finds the module's golden v1 records: the *.golden.json
// files (one record, indented) and *.golden.jsonl files (one per line)
// under any testdata directory. Fuzz corpora and the separate bench
// module are not records.
func goldenRecords(t *testing.T) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "fuzz", "bench", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Base(filepath.Dir(path)) != "testdata" && !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, path)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(path, ".golden.json"):
			out[rel] = [][]byte{b}
		case strings.HasSuffix(path, ".golden.jsonl"):
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
					out[rel] = append(out[rel], slices.Clone(line))
				}
			}
			if err := sc.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// blankIdentity lists golden files whose records have their call_id and
// timestamp set to "" on purpose (middleware's TestBenchmarkRecords sets
// aside what differs on every run); their timestamps are not checked as
// date-times.
var blankIdentity = map[string]bool{
	"middleware/testdata/bench_json.golden.json":   true,
	"middleware/testdata/bench_stream.golden.json": true,
}

// Every golden record of the module validates against the schema, and
// names no field the schema does not know: the schema allows unknown
// fields for readers' sake, so a misspelt field in a golden file would
// otherwise pass.
func TestGoldenRecordsMatchTheSchema(t *testing.T) {
	strict := compileSchema(t, true)
	lenient := compileSchema(t, false)
	properties := schemaProperties(t)
	goldens := goldenRecords(t)
	for _, must := range []string{
		"testdata/records/record_full.golden.json",
		"testdata/records/args_prefix.golden.jsonl",
		"testdata/records/args_whole.golden.jsonl",
		"middleware/testdata/bench_json.golden.json",
	} {
		require.Contains(t, goldens, must, "a golden record file the test must find")
	}
	for file, recs := range goldens {
		require.NotEmpty(t, recs, file)
		s := strict
		if blankIdentity[file] {
			s = lenient
		}
		for i, b := range recs {
			if err := s.Validate(instance(t, b)); err != nil {
				t.Errorf("%s, record %d: %v", file, i+1, err)
			}
			unknownFields(t, file, b, properties)
			// The record package reads it as a record too.
			_, err := record.DecodeLine(compact(t, b))
			assert.NoError(t, err, "%s, record %d", file, i+1)
		}
	}
	t.Logf("%d golden files checked", len(goldens))
}

// The full golden record holds every field of the schema, nested ones
// included, so the test above exercises every property's type; but for
// args_prefix (a full record is written whole: args_prefix.golden.jsonl
// has it) and the error fields (it is a success: the fuzz target's seeds,
// which go test runs, are failures).
func TestFullGoldenRecordHasEveryField(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "testdata", "records", "record_full.golden.json"))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	fields, err := flatten(record.Fields(), recordType, "")
	require.NoError(t, err)
	for _, f := range fields {
		switch {
		case f.Path == "args_prefix", strings.HasPrefix(f.Path, "args_prefix."),
			f.Path == "error_type", f.Path == "error_message", f.Path == "outcome_summary.error_type":
			continue
		}
		assert.True(t, has(got, f.Path), "record_full.golden.json lacks %s", f.Path)
	}
}

// has reports whether the path is in v, in an object or in any object of
// an array along the way.
func has(v any, path string) bool {
	head, rest, nested := strings.Cut(path, ".")
	switch v := v.(type) {
	case map[string]any:
		next, ok := v[head]
		if !ok {
			return false
		}
		return !nested || has(next, rest)
	case []any:
		for _, e := range v {
			if has(e, path) {
				return true
			}
		}
	}
	return false
}

// schemaProperties returns the dotted paths the schema names.
func schemaProperties(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	out := map[string]bool{}
	var walk func(s map[string]any, prefix string)
	walk = func(s map[string]any, prefix string) {
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, prefix)
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			out[prefix+name] = true
			walk(p.(map[string]any), prefix+name+".")
		}
	}
	walk(s, "")
	return out
}

// unknownFields fails for a member of a record, or of its nested objects
// (not args, kwargs and metadata, whose members are the caller's), that
// the schema does not name.
func unknownFields(t *testing.T, file string, b []byte, known map[string]bool) {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	var walk func(v any, prefix string)
	walk = func(v any, prefix string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				path := prefix + k
				if !known[path] {
					t.Errorf("%s: field %s is not in the schema", file, path)
					continue
				}
				switch path {
				case "args", "kwargs", "metadata", "output_message.parts.arguments", "output_message.parts.data":
					continue
				}
				walk(child, path+".")
			}
		case []any:
			for _, e := range v {
				walk(e, prefix)
			}
		}
	}
	walk(v, "")
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, b))
	return buf.Bytes()
}

// The schema refuses what breaks the format: each edit of the full golden
// record makes it invalid, and says where.
func TestSchemaRefusesBrokenRecords(t *testing.T) {
	s := compileSchema(t, true)
	full, err := os.ReadFile(filepath.Join(moduleRoot, "testdata", "records", "record_full.golden.json"))
	require.NoError(t, err)
	require.NoError(t, s.Validate(instance(t, full)))
	for _, tc := range []struct {
		name string
		edit func([]byte) ([]byte, error)
		want string // the place the validator names
	}{
		{"no call_id", del("call_id"), "call_id"},
		{"no outcome_summary.status", del("outcome_summary.status"), "status"},
		{"no usage.total_tokens", del("usage.total_tokens"), "total_tokens"},
		{"a speaker outside the vocabulary", set("speaker", "assistant"), "/speaker"},
		{"an error type outside the taxonomy", set("error_type", "oops"), "/error_type"},
		{"a status outside the vocabulary", set("outcome_summary.status", "fine"), "/outcome_summary/status"},
		{"a newer version", set("version", 2), "/version"},
		{"args that are not an array", set("args", map[string]any{"role": "user"}), "/args"},
		{"kwargs that are not an object", set("kwargs", []any{}), "/kwargs"},
		{"a timestamp that is not one", set("timestamp", "yesterday"), "/timestamp"},
		{"a negative depth", set("depth", -1), "/depth"},
		{"a fractional token count", set("usage.input_tokens", 1.5), "/usage/input_tokens"},
		{"a tag that is not a string", set("tags.0", 7), "/tags/0"},
		{"a metadata value that is not a string", set("metadata.tenant", true), "/metadata/tenant"},
		{"too many tags", set("tags", make([]string, record.MaxTags+1)), "/tags"},
		{"a null optional field", set("model", nil), "/model"},
		{"an args_prefix with a count of 0", set("args_prefix", map[string]any{"call_id": "x", "count": 0, "crc32c": 1}), "/args_prefix/count"},
		{"a crc32c beyond 32 bits", set("args_prefix", map[string]any{"call_id": "x", "count": 1, "crc32c": 1 << 32}), "/args_prefix/crc32c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.edit(full)
			require.NoError(t, err)
			err = s.Validate(instance(t, b))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func del(path string) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) { return sjson.DeleteBytes(b, path) }
}

func set(path string, v any) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) { return sjson.SetBytes(b, path, v) }
}

// Whatever a record holds, as long as its values are within the format's
// vocabularies and bounds, the encoder writes JSON the schema accepts: a
// broken args or kwargs is repaired into an array and an object, any text
// into valid strings.
func FuzzEncodedRecordsMatchTheSchema(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"hi"}]`), []byte(`{"model":"gpt-4o-mini"}`), "trace-7", uint8(0), uint16(3), 812.25)
	f.Add([]byte(`{"not":"an array"}`), []byte(`["not an object"]`), "caf\xe9", uint8(5), uint16(0), 0.0)
	f.Add([]byte("[1,2"), []byte("{\n  \"pretty\": true\n}"), "", uint8(200), uint16(65535), 1e300)
	s := compileSchema(f, true)
	f.Fuzz(func(t *testing.T, args, kwargs []byte, text string, pick uint8, n uint16, ms float64) {
		speakers := []string{record.SpeakerUser, record.SpeakerAgent, record.SpeakerTool}
		types := record.ErrorTypes()
		short, _ := record.ClipAttribution(text) // as the recorder keeps a user, a tag, a metadata key
		r := record.Record{
			CallID:       text,
			Timestamp:    record.FormatTime(time.Unix(int64(n)*1e5, int64(pick)*1e6)),
			Speaker:      speakers[int(pick)%len(speakers)],
			MethodName:   text,
			Args:         args,
			Kwargs:       kwargs,
			Outcome:      record.Failure(types[int(pick)%len(types)]),
			TraceID:      text,
			ParentCallID: text,
			Depth:        record.Int(int(n)),
			UserID:       short,
			Tags:         []string{short},
			Metadata:     map[string]string{short: short},
			DurationMS:   ms,
			ErrorType:    types[int(pick)%len(types)],
			ErrorMessage: text,
			Output: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
				{Type: []string{record.PartText, record.PartToolCall, record.PartMedia, record.PartOther}[int(pick)%4], ID: text, Name: text, Content: text, Arguments: record.ArgumentsJSON(text), MIMEType: text, URI: text, Size: int(n), IsError: true, Data: record.ArgumentsJSON(text)},
				{Type: record.PartReasoning}}},
			ServerAddress:        text,
			ServerPort:           int(n),
			ServiceTier:          text,
			SystemFingerprint:    text,
			ProgramSource:        text,
			Attempts:             int(n),
			Model:                text,
			Usage:                &record.Usage{InputTokens: int(n), OutputTokens: int(pick), TotalTokens: int(n) + int(pick)},
			Cost:                 &record.Cost{USD: ms, Table: text},
			Truncated:            []string{text},
			HistoryQueryPatterns: []string{text},
		}
		if pick%2 == 0 {
			r.Outcome = record.Success(text)
			r.ErrorType = ""
			r.ArgsPrefix = &record.ArgsPrefix{CallID: text, Count: int(n) + 1, CRC32C: uint32(n) * 65537}
		}
		line := r.AppendJSON(nil)
		if err := s.Validate(instance(t, line)); err != nil {
			t.Fatalf("%v\nrecord: %.2000s", err, line)
		}
	})
}

// The table reader never panics, and what it returns is whole: every row
// has a field, a type and a meaning, and a yes or no, whatever the page.
func FuzzParseFieldTable(f *testing.F) {
	md, err := os.ReadFile(docPath)
	require.NoError(f, err)
	f.Add(string(md))
	f.Add("| field | type | required | meaning |\n|---|---|---|---|\n| `a` | string | yes | A \\| B [link](x.md) |\n")
	f.Add("| field | type | required | meaning |\n| `a` | string | yes | no rule |\n")
	f.Add("| Field | Type | Required | Meaning |\n|:--|--:|---|---|\n| `a` | string | maybe | x |\n|\n")
	f.Add("|\\|")
	f.Fuzz(func(t *testing.T, page string) {
		rows, err := parseFieldTable([]byte(page))
		if err != nil {
			return
		}
		require.NotEmpty(t, rows)
		for _, r := range rows {
			assert.NotEmpty(t, r.Path)
			assert.NotEmpty(t, r.Meaning)
			assert.Positive(t, r.Line)
			_ = plainText(r.Meaning)
		}
	})
}

// Links keep their text in a description; the rest of the Markdown stays.
func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"see [Providers](providers.md).":           "see Providers.",
		"`a` \\| `b`":                              "`a` | `b`",
		"[not a link] and [x](y) and [z](":         "[not a link] and x and [z](",
		"nested [[a](b)](c)":                       "nested [a](c)",
		"a [link](x) then [another](#anchor-here)": "a link then another",
	} {
		assert.Equal(t, want, plainText(in), in)
	}
}
