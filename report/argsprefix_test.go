package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// A file written with args_prefix reports as the same file written whole;
// one with a line lost still reports every record it holds, and says in
// its inputs and notes which records could not be put back together.
func TestArgsPrefixFile(t *testing.T) {
	var msgs []string
	var recs []record.Record
	for i := range 6 {
		m, _ := json.Marshal(map[string]string{"role": "user", "content": fmt.Sprintf("turn %d: %s", i, strings.Repeat("lorem ipsum ", 20))})
		msgs = append(msgs, string(m))
		r := call(fmt.Sprintf("c%d", i), i)
		r.Args = json.RawMessage("[" + strings.Join(msgs, ",") + "]")
		recs = append(recs, r)
	}
	var whole, compact bytes.Buffer
	history := record.NewMemory(0)
	wholeSink := record.NewJSONL(&whole)
	compactSink := record.NewJSONLWith(&compact, record.JSONLOptions{ArgsPrefix: true})
	for _, r := range recs {
		added := history.Add(r)
		require.NoError(t, wholeSink.Append(context.Background(), added))
		require.NoError(t, compactSink.Append(context.Background(), added))
	}
	require.NoError(t, wholeSink.Close())
	require.NoError(t, compactSink.Close())
	require.Equal(t, 5, strings.Count(compact.String(), `"args_prefix"`), "the file is compact")

	strip := func(r *report.Report) string {
		r.Provenance = report.Provenance{}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return string(b)
	}
	wantRep := build(t, report.Options{}, whole.Bytes())
	gotRep := build(t, report.Options{}, compact.Bytes())
	assert.Zero(t, gotRep.Provenance.Inputs[0].UnresolvedArgs)
	assert.Equal(t, strip(wantRep), strip(gotRep))

	lines := strings.SplitAfter(compact.String(), "\n")
	damaged := strings.Join(append(lines[:2:2], lines[3:]...), "") // c2 lost
	rep := build(t, report.Options{}, []byte(damaged))
	assert.Equal(t, int64(5), rep.Provenance.Inputs[0].Records, "every record left is counted")
	in := rep.Provenance.Inputs[0]
	assert.Equal(t, int64(3), in.UnresolvedArgs, "c3 named c2, c4 and c5 each the one before")
	assert.Equal(t, int64(3), in.FirstUnresolvedLine)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "h.jsonl: 3 records (the first on line 3) begin their args with an earlier record that is missing or damaged")
}

// A long conversation written with args_prefix is reported in memory that
// grows with the file: the report checks each args_prefix but does not
// put the Args back together, which would take the square of the
// conversation (84 MiB for this 600 KiB file). Bytes allocated, not time.
func TestArgsPrefixLongConversation(t *testing.T) {
	var msgs []string
	var compact bytes.Buffer
	history := record.NewMemory(0)
	sink := record.NewJSONLWith(&compact, record.JSONLOptions{ArgsPrefix: true})
	for i := range 400 {
		m, _ := json.Marshal(map[string]string{"role": "user", "content": fmt.Sprintf("turn %d: %s", i, strings.Repeat("lorem ipsum ", 40))})
		msgs = append(msgs, string(m))
		r := call(fmt.Sprintf("c%03d", i), i)
		r.Args = json.RawMessage("[" + strings.Join(msgs, ",") + "]")
		require.NoError(t, sink.Append(context.Background(), history.Add(r)))
	}
	require.NoError(t, sink.Close())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep := build(t, report.Options{}, compact.Bytes())
	runtime.ReadMemStats(&after)
	in := rep.Provenance.Inputs[0]
	assert.Equal(t, int64(400), in.Records)
	assert.Zero(t, in.UnresolvedArgs, "every args_prefix checked and matched")
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes allocated to report a %d-byte file", allocated, compact.Len())
	assert.Less(t, allocated, uint64(32*compact.Len()))
}
