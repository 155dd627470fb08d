package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// llmhistory report shows the time to first chunk of streamed calls in
// the latency table, and only when there are some.
func TestReportFirstChunk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	sink := record.NewJSONL(f)
	for i := range 4 {
		r := record.Record{
			CallID:                fmt.Sprintf("s-%d", i),
			Timestamp:             fmt.Sprintf("2026-03-01T10:00:%02dZ", i),
			Speaker:               record.SpeakerAgent,
			MethodName:            "anthropic.messages.create",
			Outcome:               record.Success("message"),
			DurationMS:            4000,
			TimeToFirstChunkMS:    350,
			HistoryRecordAppended: true,
			HistoryGuidance:       true,
		}
		require.NoError(t, sink.Append(context.Background(), r))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, f.Close())

	code, stdout, stderr := runCmd(t, "", "report", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "| Method | Records | p50 | p90 | p99 | max | Streamed | First chunk p50 | First chunk p95 | First chunk max |")
	assert.Contains(t, stdout, "| anthropic.messages.create | 4 | 4 s | 4 s | 4 s | 4 s | 4 | 350 ms | 350 ms | 350 ms |")

	code, stdout, stderr = runCmd(t, "", "report", "-format", "json", path)
	require.Equal(t, exitOK, code, stderr)
	var got struct {
		Latency []struct {
			FirstChunkCount int64   `json:"first_chunk_count"`
			FirstChunkP95MS float64 `json:"first_chunk_p95_ms"`
		} `json:"latency"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got.Latency, 1)
	assert.Equal(t, int64(4), got.Latency[0].FirstChunkCount)
	assert.Equal(t, 350.0, got.Latency[0].FirstChunkP95MS)

	plain := writeHistory(t, dir, "p.jsonl", 3, "")
	code, stdout, stderr = runCmd(t, "", "report", plain)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "| Method | Records | p50 | p90 | p99 | max |\n")
	assert.NotContains(t, stdout, "First chunk")
}
