package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Import takes each record's Args as the elements the reader split them
// into, shared along a conversation (record.Reader.SplitArgs), where
// Write takes them whole: a history file imported reads back as the same
// records written whole do, and as the records the file was written
// from. The file has more records than one import transaction (4,096),
// conversations interleaved, answers kept, a conversation that drops its
// middle, and a lost line, after which the rest of its conversation is
// marked (record.ArgsPrefix) the same both ways.
func TestImportReadsBackAsWritten(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			newURL := func() string {
				if backend == "postgres" {
					return pgtest.Shared(t).NewDatabase(t)
				}
				return "sqlite:" + filepath.Join(t.TempDir(), fmt.Sprint(time.Now().UnixNano(), ".db"))
			}
			testImportReadsBackAsWritten(t, newURL)
		})
	}
}

func testImportReadsBackAsWritten(t *testing.T, newURL func() string) {
	ctx := context.Background()
	var recs []record.Record
	w := storebench.NewWorkloadWith(7, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Second,
		storebench.WorkloadOptions{MinCalls: 2, MaxCalls: 12, LongCalls: 30})
	for range 4500 {
		recs = append(recs, w.Next())
	}
	storebench.Turns(40, func(r record.Record) { // answers kept
		r.TraceID, r.CallID = "answers", "answers-"+r.CallID
		recs = append(recs, r)
	})
	long, _ := storebench.Conversation(nil, storebench.ConversationOptions{Trace: "drops-its-middle", Turns: 12})
	for i, r := range long {
		if i >= 6 { // the conversation forgets turns 2 to 5: a fork of the earlier records' elements
			els := splitElements(r.Args)
			r.Args = []byte("[" + strings.Join(append(els[:1:1], els[10:]...), ",") + "]")
		}
		recs = append(recs, r)
	}
	lost, _ := storebench.Conversation(nil, storebench.ConversationOptions{Trace: "lost-a-line", Turns: 6})
	recs = append(recs, lost...)

	mem := record.NewMemory(8192)
	var file bytes.Buffer
	sink := record.NewJSONLWith(&file, record.JSONLOptions{ArgsPrefix: true})
	for i, r := range recs {
		recs[i] = mem.Add(r) // as the sink has it
		require.NoError(t, sink.Append(ctx, recs[i]))
	}
	require.NoError(t, sink.Close())
	data := file.Bytes()
	require.Contains(t, string(data), `"args_prefix"`)
	lines := strings.SplitAfter(string(data), "\n")
	lostLine := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"call_id":"lost-a-line-00002"`) })
	require.GreaterOrEqual(t, lostLine, 0)
	damaged := []byte(strings.Join(append(lines[:lostLine:lostLine], lines[lostLine+1:]...), ""))

	for _, tc := range []struct {
		name string
		data []byte
	}{{"whole", data}, {"a line lost", damaged}} {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := record.ReadJSONL(bytes.NewReader(tc.data))
			if tc.name == "whole" {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, record.ErrUnresolvedPrefix)
			}
			written, err := store.Open(ctx, newURL())
			require.NoError(t, err)
			defer written.Close()
			res, err := written.Write(ctx, whole)
			require.NoError(t, err)
			require.Equal(t, len(whole), res.Written)

			imported, err := store.Open(ctx, newURL())
			require.NoError(t, err)
			defer imported.Close()
			ires, err := imported.Import(ctx, bytes.NewReader(tc.data), func(line int, err error) { t.Errorf("line %d: %v", line, err) })
			require.NoError(t, err)
			assert.Equal(t, store.ImportResult{Records: len(whole), Written: len(whole)}, ires)

			want := readBack(t, written)
			got := readBack(t, imported)
			require.Len(t, got, len(whole))
			marked := 0
			for id, w := range want {
				assert.Equal(t, w, got[id], id)
				if strings.Contains(w, `"args_prefix"`) {
					marked++
				}
			}
			if tc.name == "whole" {
				// And as the records the file was written from.
				for _, r := range recs {
					r.Normalize()
					j, _ := json.Marshal(r)
					assert.Equal(t, string(j), got[r.CallID], r.CallID)
				}
				assert.Zero(t, marked)
			} else {
				assert.Equal(t, 3, marked, "the lost line's followers, marked")
			}
		})
	}
}

// readBack returns every record of s as JSON, by call ID.
func readBack(t *testing.T, s *store.Store) map[string]string {
	out := map[string]string{}
	for r, err := range s.Records(context.Background(), store.Filter{}, store.ReadOptions{}) {
		require.NoError(t, err)
		j, err := json.Marshal(r)
		require.NoError(t, err)
		out[r.CallID] = string(j)
	}
	return out
}

func splitElements(args []byte) []string {
	var out []string
	record.EachValidElement(args, func(v []byte) bool { out = append(out, string(v)); return true })
	return out
}
