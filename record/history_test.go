package record_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

func debugLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestNormalizeHistory(t *testing.T) {
	valid := `{"call_id":"c1","timestamp":"2026-11-21T10:00:00.000000Z","speaker":"user","method_name":"m","args":[1],"kwargs":{"k":"v"},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"extra":"ignored"}`
	minimal := `{"call_id":"c2","method_name":"m"}`

	tests := []struct {
		name        string
		in          any
		wantIDs     []string
		wantDropped int
		wantLog     string
	}{
		{"absent", nil, []string{}, 0, ""},
		{"empty list", []any{}, []string{}, 0, ""},
		{"map is not a list", map[string]any{"call_id": "c1"}, []string{}, 0, "not a list"},
		{"string is not a list", "oops", []string{}, 0, "not a list"},
		{"number is not a list", 42.0, []string{}, 0, "not a list"},
		{"decoded JSON", decodeJSON(t, `[`+valid+`,`+minimal+`]`), []string{"c1", "c2"}, 0, ""},
		{"invalid elements dropped and counted, valid kept in order",
			decodeJSON(t, `[1,`+valid+`,"x",null,{"call_id":""},{"method_name":"m"},{"call_id":"c3","method_name":"m","args":"notarray"},[],`+minimal+`]`),
			[]string{"c1", "c2"}, 7, "dropping history elements"},
		{"wrong types", decodeJSON(t, `[{"call_id":"a","method_name":"m","speaker":5},{"call_id":"b","method_name":"m","kwargs":[]},{"call_id":"c","method_name":"m","outcome_summary":"ok"}]`),
			[]string{}, 3, "dropping"},
		{"user's maps", []map[string]any{{"call_id": "u1", "method_name": "tool.run", "args": []any{"x"}}}, []string{"u1"}, 0, ""},
		{"records", []record.Record{{CallID: "r1", MethodName: "m"}, {CallID: ""}}, []string{"r1"}, 1, "dropping"},
		{"record pointers", []*record.Record{nil, {CallID: "p1", MethodName: "m"}}, []string{"p1"}, 1, "dropping"},
		{"raw JSON", json.RawMessage(`[` + minimal + `]`), []string{"c2"}, 0, ""},
		{"bad raw JSON", json.RawMessage(`[{`), []string{}, 0, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			got, dropped := record.NormalizeHistory(tt.in, debugLogger(&logs))
			require.NotNil(t, got, "always a slice")
			ids := []string{}
			for _, r := range got {
				ids = append(ids, r.CallID)
				assert.True(t, json.Valid(r.Args) && r.Args[0] == '[', "args normalized: %s", r.Args)
				assert.True(t, json.Valid(r.Kwargs) && r.Kwargs[0] == '{', "kwargs normalized: %s", r.Kwargs)
			}
			assert.Equal(t, tt.wantIDs, ids)
			assert.Equal(t, tt.wantDropped, dropped)
			if tt.wantLog == "" {
				assert.Empty(t, logs.String())
			} else {
				assert.Contains(t, logs.String(), tt.wantLog)
				assert.Contains(t, logs.String(), `"level":"DEBUG"`)
				assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("\n")), "one log line, however many were dropped")
			}
		})
	}
}

func TestNormalizeHistoryKeepsFields(t *testing.T) {
	in := decodeJSON(t, `[{"call_id":"c1","timestamp":"2026-11-21T10:00:00.000000Z","speaker":"tool","method_name":"m","args":[1,"two"],"kwargs":{"k":"v"},"outcome_summary":{"status":"error","ok":false,"error_type":"rate_limit","retriable":true},"depth":0,"trace_id":"t"}]`)
	got, dropped := record.NormalizeHistory(in, nil)
	require.Len(t, got, 1)
	assert.Zero(t, dropped)
	r := got[0]
	assert.Equal(t, "tool", r.Speaker)
	assert.JSONEq(t, `[1,"two"]`, string(r.Args))
	assert.JSONEq(t, `{"k":"v"}`, string(r.Kwargs))
	assert.Equal(t, record.Failure(record.ErrorRateLimit), r.Outcome)
	require.NotNil(t, r.Depth)
	assert.Equal(t, 0, *r.Depth)
	assert.Equal(t, "t", r.TraceID)
}

func TestHistoryFrom(t *testing.T) {
	got, _ := record.HistoryFrom(nil, nil)
	assert.Equal(t, []record.Record{}, got)
	ctx := map[string]any{record.HistoryKey: []any{map[string]any{"call_id": "a", "method_name": "m"}}}
	got, _ = record.HistoryFrom(ctx, nil)
	require.Len(t, got, 1)
	assert.Equal(t, "a", got[0].CallID)
}
