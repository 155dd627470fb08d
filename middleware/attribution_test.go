package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

func TestAttributionContext(t *testing.T) {
	ctx := middleware.WithTags(context.Background(), "checkout", "beta")
	ctx = middleware.WithTags(ctx, "beta", "eu") // accumulate, duplicates dropped, order kept
	ctx = middleware.WithTags(ctx)               // adds nothing
	ctx = middleware.WithMetadata(ctx, "tenant", "acme")
	ctx = middleware.WithMetadata(ctx, "experiment", "a")
	inner := middleware.WithMetadata(ctx, "experiment", "b") // a later value wins
	inner = middleware.WithUser(inner, "user-42")

	assert.Equal(t, []string{"checkout", "beta", "eu"}, middleware.TagsFrom(inner))
	assert.Equal(t, map[string]string{"tenant": "acme", "experiment": "b"}, middleware.MetadataFrom(inner))
	assert.Equal(t, "user-42", middleware.UserFrom(inner))
	// The outer context is unchanged by what the inner one added.
	assert.Equal(t, map[string]string{"tenant": "acme", "experiment": "a"}, middleware.MetadataFrom(ctx))
	assert.Empty(t, middleware.UserFrom(ctx))
	// Siblings do not see each other's tags (the slice is never shared).
	a := middleware.WithTags(ctx, "a")
	b := middleware.WithTags(ctx, "b")
	assert.Equal(t, []string{"checkout", "beta", "eu", "a"}, middleware.TagsFrom(a))
	assert.Equal(t, []string{"checkout", "beta", "eu", "b"}, middleware.TagsFrom(b))
}

// Attribution goes from the context into the record, and from there
// through every sink: JSONL, slog, Memory, and the report read from the
// file. Secrets are redacted; bounds are kept and named in truncated.
func TestAttributionRoundTrip(t *testing.T) {
	var file, logs bytes.Buffer
	mem := record.NewMemory(10)
	rec := middleware.NewRecorder(middleware.WithSyncSinks(),
		middleware.WithSink(record.NewJSONL(&file)),
		middleware.WithSink(record.NewSlog(slog.New(slog.NewJSONHandler(&logs, nil)))),
		middleware.WithSink(mem))
	srv := serve(t, 200, "application/json", chatResponse)

	ctx := middleware.WithUser(context.Background(), "user-42")
	ctx = middleware.WithTags(ctx, "checkout")
	ctx = middleware.WithMetadata(ctx, "tenant", "acme")
	ctx = middleware.WithMetadata(ctx, "leaked", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")
	resp, err := post(t, rec.Client(nil), ctx, srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	// Over every bound.
	over := context.Background()
	for i := range record.MaxTags + 5 {
		over = middleware.WithTags(over, fmt.Sprintf("tag-%d", i))
	}
	for i := range record.MaxMetadata + 5 {
		over = middleware.WithMetadata(over, fmt.Sprintf("k%d", i), "v")
	}
	over = middleware.WithUser(over, strings.Repeat("é", 200)) // 400 bytes
	resp, err = post(t, rec.Client(nil), over, srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, rec.Close())

	data := bytes.Clone(file.Bytes())
	recs, err := record.ReadJSONL(bytes.NewReader(data))
	require.NoError(t, err)
	require.Len(t, recs, 2)
	r := recs[0]
	assert.Equal(t, "user-42", r.UserID)
	assert.Equal(t, []string{"checkout"}, r.Tags)
	assert.Equal(t, "acme", r.Metadata["tenant"])
	assert.Equal(t, "[REDACTED]", r.Metadata["leaked"], "a key-shaped value never reaches a record")
	assert.NotContains(t, string(data), "sk-proj-abcdef")
	assert.NotContains(t, logs.String(), "sk-proj-abcdef")
	assert.Equal(t, r.UserID, mem.Records()[0].UserID)
	assert.Equal(t, r.Metadata, mem.Records()[0].Metadata)

	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(logs.String(), "\n", 2)[0]), &line))
	assert.Equal(t, "user-42", line["user_id"])
	assert.Equal(t, []any{"checkout"}, line["tags"])
	assert.Equal(t, map[string]any{"tenant": "acme", "leaked": "[REDACTED]"}, line["metadata"], "metadata logs as a group")

	b := recs[1]
	assert.Len(t, b.Tags, record.MaxTags)
	assert.Equal(t, "tag-0", b.Tags[0], "the first given are kept")
	assert.Len(t, b.Metadata, record.MaxMetadata)
	assert.LessOrEqual(t, len(b.UserID), record.MaxAttributionBytes)
	assert.True(t, strings.HasPrefix(strings.Repeat("é", 200), b.UserID), "cut at a rune boundary")
	assert.Subset(t, b.Truncated, []string{"user_id", "tags", "metadata"})

	rep, err := report.Build(context.Background(), report.Options{}, report.Source{Name: "history.jsonl", R: bytes.NewReader(data)})
	require.NoError(t, err)
	assert.Equal(t, "user-42", rep.Users[0].Name)
}
