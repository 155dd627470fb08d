package record_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

var update = flag.Bool("update", false, "rewrite the golden records in testdata/records at the top")

// fullRecord sets every field, so the golden file pins the whole format.
func fullRecord() record.Record {
	return record.Record{
		CallID:     "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A",
		Timestamp:  record.FormatTime(time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)),
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       json.RawMessage(`[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Summarize our last three turns."}]}]`),
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini","stream":true,"temperature":0.2}`),
		Outcome: record.Outcome{
			Status: record.StatusOK, OK: true, ValueClass: "chat.completion",
			HTTPStatus: 200, FinishReason: "stop", ResponseID: "chatcmpl-abc123",
		},
		TraceID:            "trace-7",
		TraceInferred:      true,
		ParentCallID:       "01JD2Q8Y00000000000000000P",
		Depth:              record.Int(1),
		UserID:             "user-42",
		Tags:               []string{"checkout", "beta"},
		Metadata:           map[string]string{"tenant": "acme", "experiment": "short-prompts"},
		DurationMS:         812.25,
		TimeToFirstChunkMS: 140.5,
		ErrorType:          "",
		ErrorMessage:       "",
		ProgramSource:      "context[:conversation_history].last(3).map { |r| r[:outcome_summary] }",
		Output: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
			{Type: record.PartReasoning, Content: "The user wants the last three turns: slice, then map."},
			{Type: record.PartText, Content: "Here is the code:\n\n```ruby\ncontext[:conversation_history].last(3).map { |r| r[:outcome_summary] }\n```"},
			{Type: record.PartToolCall, ID: "call_4XzlGBLtUe9dy3GVNV4jhq7h", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			{Type: record.PartToolCall, Name: "now"},
			{Type: record.PartToolResult, ID: "srvtoolu_01", Name: "code_execution", Content: "exit 1", IsError: true},
			{Type: record.PartMedia, MIMEType: "image/png", Size: 48213},
			{Type: record.PartMedia, MIMEType: "application/pdf", URI: "file-9a8b7c", Name: "report.pdf"},
			{Type: record.PartOther, Name: "web_search_tool_result", Data: json.RawMessage(`{"tool_use_id":"srvtoolu_02"}`)},
		}},
		ArtifactHit:       true,
		Attempts:          2,
		Hops:              1,
		ServerAddress:     "api.openai.com",
		ServerPort:        443,
		Model:             "gpt-4o-mini-2024-07-18",
		ServiceTier:       "default",
		SystemFingerprint: "fp_143bb8492c",
		Usage:             &record.Usage{InputTokens: 120, OutputTokens: 48, TotalTokens: 168, CachedTokens: 64, CacheWriteTokens: 32, CacheWrite1hTokens: 8, ReasoningTokens: 16},
		Cost:              &record.Cost{USD: 0.000123, Table: "litellm-2026-11-20"},
		Truncated:         []string{"args"},

		HistoryGuidance:         true,
		HistoryRecordAppended:   true,
		ConversationHistorySize: 3,
		HistoryAccessDetected:   true,
		HistoryQueryPatterns:    []string{"slice", "map"},
		Version:                 record.Version,
	}
}

// goldenRecords is where the golden v1 records are: the repository's
// shared testdata, as otelsink and the schema's tests read them too.
var goldenRecords = filepath.Join("..", "testdata", "records")

// golden compares got with the golden record file name, or writes it
// there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenRecords, name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./record -update to create it")
	assert.Equal(t, string(want), string(got), "golden %s differs (-want +got); run with -update if the change is intended", path)
}

func TestGoldenFullRecord(t *testing.T) {
	line, err := json.Marshal(fullRecord())
	require.NoError(t, err)
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, line, "", "  "))
	pretty.WriteByte('\n')
	golden(t, "record_full.golden.json", pretty.Bytes())

	// The golden file decodes back to the same record.
	want, err := os.ReadFile(filepath.Join(goldenRecords, "record_full.golden.json"))
	require.NoError(t, err)
	var got record.Record
	require.NoError(t, json.Unmarshal(want, &got))
	assert.Equal(t, fullRecord(), got)
}

func TestRequiredFieldsAlwaysPresent(t *testing.T) {
	line, err := json.Marshal(record.Record{})
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(line, &m))
	for _, k := range []string{"call_id", "timestamp", "speaker", "method_name", "args", "kwargs", "outcome_summary",
		"history_record_appended", "conversation_history_size", "history_access_detected", "history_query_patterns", "version"} {
		assert.Contains(t, m, k)
	}
	assert.JSONEq(t, `[]`, string(m["args"]))
	assert.JSONEq(t, `{}`, string(m["kwargs"]))
	assert.JSONEq(t, `[]`, string(m["history_query_patterns"]))
	assert.JSONEq(t, `1`, string(m["version"]))
	for _, k := range []string{"trace_id", "parent_call_id", "depth", "duration_ms", "error_type", "error_message",
		"program_source", "output", "artifact_hit", "attempts", "model", "usage", "truncated", "history_guidance"} {
		assert.NotContains(t, m, k, "optional field %s must be omitted when unset", k)
	}
}

func TestDepthZeroSurvives(t *testing.T) {
	r := record.Record{Depth: record.Int(0)}
	line, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(line), `"depth":0`)
	var back record.Record
	require.NoError(t, json.Unmarshal(line, &back))
	require.NotNil(t, back.Depth)
	assert.Equal(t, 0, *back.Depth)
}

func TestRawFieldsRepairedAtFieldLevel(t *testing.T) {
	tests := []struct {
		name             string
		args, kwargs     string
		wantArgs, wantKw string
	}{
		{"nil", "", "", `[]`, `{}`},
		{"null", "null", "null", `[]`, `{}`},
		{"pretty printed", "[\n  1,\n  2\n]", "{\n \"a\": 1\n}", `[1,2]`, `{"a":1}`},
		{"scalar wrapped", `"hello"`, `42`, `["hello"]`, `{"value":42}`},
		{"wrong container", `{"a":1}`, `[1]`, `[{"a":1}]`, `{"value":[1]}`},
		{"invalid json", `[1,`, `{"a":`, `["<invalid JSON: [1,>"]`, `{"inspect":"<invalid JSON: {\"a\":>"}`},
		{"invalid utf8", "[\"a\xffb\"]", "{\"k\":\"\xfe\"}", "[\"a\uFFFDb\"]", "{\"k\":\"\uFFFD\"}"},
		{"number precision kept", "[\"\xff\",12345678901234567890]", `{}`, "[\"\uFFFD\",12345678901234567890]", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := record.Record{CallID: "c1", Args: json.RawMessage(tt.args), Kwargs: json.RawMessage(tt.kwargs)}
			line := r.AppendJSON(nil)
			require.True(t, json.Valid(line), "line %s", line)
			assert.NotContains(t, string(line), "\n")
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(line, &m))
			assert.Equal(t, tt.wantArgs, string(m["args"]))
			assert.Equal(t, tt.wantKw, string(m["kwargs"]))
			assert.Equal(t, `"c1"`, string(m["call_id"]), "the rest of the record survives")
		})
	}
}

func TestStringsEscapedOntoOneLine(t *testing.T) {
	r := record.Record{
		CallID:       "a\"b\\c",
		ErrorMessage: "line1\nline2\r\t\x00\x1f \u2028\u2029 bad:\xff <html>&",
	}
	line := r.AppendJSON(nil)
	require.True(t, json.Valid(line))
	assert.NotContains(t, string(line), "\n")
	assert.Contains(t, string(line), `\u2028\u2029`)
	var back record.Record
	require.NoError(t, json.Unmarshal(line, &back))
	assert.Equal(t, "a\"b\\c", back.CallID)
	assert.Equal(t, "line1\nline2\r\t\x00\x1f \u2028\u2029 bad:\uFFFD <html>&", back.ErrorMessage)
}

func TestEncodingMatchesEncodingJSON(t *testing.T) {
	// Our hand-written encoder and encoding/json (through the struct tags)
	// must agree on what a record means.
	r := fullRecord()
	type plain record.Record // drops MarshalJSON: encoding/json uses the tags
	want, err := json.Marshal(plain(r))
	require.NoError(t, err)
	got, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

func TestNonFiniteDurationOmitted(t *testing.T) {
	for _, d := range []float64{nanValue(), infValue()} {
		line := record.Record{DurationMS: d}.AppendJSON(nil)
		require.True(t, json.Valid(line), "%s", line)
		assert.NotContains(t, string(line), "duration_ms")
	}
}

func TestDecodeIgnoresUnknownFieldsAndChecksVersion(t *testing.T) {
	var r record.Record
	err := json.Unmarshal([]byte(`{"call_id":"x","future_field":{"a":[1,2]},"method_name":"m","args":null}`), &r)
	require.NoError(t, err)
	assert.Equal(t, "x", r.CallID)
	assert.Equal(t, record.Version, r.Version, "missing version reads as 1")
	assert.Equal(t, "[]", string(r.Args))
	assert.Equal(t, "{}", string(r.Kwargs))

	err = json.Unmarshal([]byte(`{"call_id":"x","version":2}`), &r)
	assert.ErrorIs(t, err, record.ErrUnsupportedVersion)
}

func TestValidate(t *testing.T) {
	r := fullRecord()
	assert.NoError(t, r.Validate())
	bad := record.Record{Timestamp: "yesterday", Speaker: "robot"}
	err := bad.Validate()
	require.Error(t, err)
	for _, want := range []string{"call_id", "method_name", "status", "timestamp", "speaker"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestCloneSharesNothing(t *testing.T) {
	r := fullRecord()
	c := r.Clone()
	c.Args[1] = 'X'
	c.Kwargs[1] = 'X'
	*c.Depth = 9
	c.Usage.InputTokens = 9
	c.Truncated[0] = "X"
	c.HistoryQueryPatterns[0] = "X"
	assert.Equal(t, fullRecord(), r)
}

func TestFormatTimeSortsAsText(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	prev := ""
	for _, d := range []time.Duration{0, time.Microsecond, 10 * time.Microsecond, time.Millisecond, time.Second} {
		s := record.FormatTime(base.Add(d))
		assert.True(t, strings.HasSuffix(s, "Z"), s)
		assert.Greater(t, s, prev)
		prev = s
		back, err := record.ParseTime(s)
		require.NoError(t, err)
		assert.True(t, back.Equal(base.Add(d)))
	}
}

func TestOutcomeConstructors(t *testing.T) {
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "response"}, record.Success("response"))
	assert.Equal(t, record.Outcome{Status: "error", ErrorType: "rate_limit", Retriable: true}, record.Failure(record.ErrorRateLimit))
	assert.Equal(t, record.Outcome{Status: "error", ErrorType: "quota"}, record.Failure(record.ErrorQuota))
	assert.Equal(t, record.Outcome{Status: "canceled", ErrorType: "canceled"}, record.Failure(record.ErrorCanceled))
}

func TestUnsupportedVersionIsAnError(t *testing.T) {
	_, err := record.ReadJSONL(strings.NewReader(`{"call_id":"a","method_name":"m","version":7}` + "\n"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, record.ErrUnsupportedVersion))
	var le *record.LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 1, le.Line)
}
