package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/lmittmann/tint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

const canary = "CANARY-transcript-text"

func loggedRecord() record.Record {
	r := fullRecord()
	r.Args = json.RawMessage(`["` + canary + `"]`)
	r.Kwargs = json.RawMessage(`{"prompt":"` + canary + `"}`)
	r.ProgramSource = canary
	r.Output = &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: canary}}}
	return r
}

func TestSlogSinkJSON(t *testing.T) {
	var buf bytes.Buffer
	s := record.NewSlog(slog.New(slog.NewJSONHandler(&buf, nil)))
	require.NoError(t, s.Append(context.Background(), loggedRecord()))

	failed := rec("f", "t")
	failed.Outcome = record.Failure(record.ErrorRateLimit)
	failed.ErrorType = record.ErrorRateLimit
	failed.ErrorMessage = "slow down"
	require.NoError(t, s.Append(context.Background(), failed))

	canceled := rec("c", "t")
	canceled.Outcome = record.Failure(record.ErrorCanceled)
	require.NoError(t, s.Append(context.Background(), canceled))

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3, "one log record per history record")
	assert.NotContains(t, buf.String(), canary, "transcripts never reach logs")

	var ok map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ok))
	assert.Equal(t, "INFO", ok["level"])
	assert.Equal(t, record.LogMessage, ok["msg"])
	assert.Equal(t, "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A", ok["call_id"])
	assert.Equal(t, "trace-7", ok["trace_id"])
	assert.Equal(t, 1.0, ok["depth"])
	assert.Equal(t, "openai.chat.completions.create", ok["method_name"])
	assert.Equal(t, map[string]any{"status": "ok", "ok": true, "retriable": false, "value_class": "chat.completion",
		"http_status": 200.0, "finish_reason": "stop", "response_id": "chatcmpl-abc123"}, ok["outcome_summary"])
	assert.Equal(t, 812.25, ok["duration_ms"])
	assert.Equal(t, map[string]any{"input_tokens": 120.0, "output_tokens": 48.0, "total_tokens": 168.0,
		"cached_tokens": 64.0, "cache_write_tokens": 32.0, "cache_write_1h_tokens": 8.0, "reasoning_tokens": 16.0}, ok["usage"])
	assert.Equal(t, true, ok["history_record_appended"])
	assert.Equal(t, 3.0, ok["conversation_history_size"])
	assert.Equal(t, true, ok["history_access_detected"])
	assert.Equal(t, []any{"slice", "map"}, ok["history_query_patterns"])
	for _, k := range []string{"args", "kwargs", "program_source", "output"} {
		assert.NotContains(t, ok, k)
	}

	var warn map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &warn))
	assert.Equal(t, "WARN", warn["level"], "errors at Warn")
	assert.Equal(t, "rate_limit", warn["error_type"])
	assert.Equal(t, "slow down", warn["error_message"])
	assert.Equal(t, []any{}, warn["history_query_patterns"], "telemetry on every line")
	assert.Equal(t, false, warn["history_access_detected"])

	var cancel map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &cancel))
	assert.Equal(t, "INFO", cancel["level"], "a cancel is the caller's choice, not a failure")
}

func TestSlogSinkTint(t *testing.T) {
	var buf bytes.Buffer
	s := record.NewSlog(slog.New(tint.NewTextHandler(&buf, &tint.Options{NoColor: true})))
	failed := loggedRecord()
	failed.Outcome = record.Failure(record.ErrorServer)
	require.NoError(t, s.Append(context.Background(), failed))
	out := buf.String()
	assert.Contains(t, out, "WRN llm call")
	assert.Contains(t, out, "call_id=01JD2Q8Z3XKQ4M9R7T5V6W8Y0A")
	assert.Contains(t, out, "outcome_summary.error_type=server")
	assert.Contains(t, out, "history_query_patterns=\"[slice map]\"")
	assert.NotContains(t, out, canary)
}

func TestSlogSinkDoesNothingWhenDisabled(t *testing.T) {
	var buf bytes.Buffer
	s := record.NewSlog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError})))
	require.NoError(t, s.Append(context.Background(), loggedRecord()))
	assert.Zero(t, buf.Len())
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	r := loggedRecord()
	allocs := testing.AllocsPerRun(100, func() { _ = s.Append(context.Background(), r) })
	assert.Zero(t, allocs, "no attributes are built for a disabled level")
}

func TestRecordLogValuer(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	l.Info("done", "call", loggedRecord())
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	require.IsType(t, map[string]any{}, m["call"])
	assert.Equal(t, "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A", m["call"].(map[string]any)["call_id"])
	assert.NotContains(t, buf.String(), canary)
}
