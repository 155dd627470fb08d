package report_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// FuzzBuild feeds arbitrary bytes to Build as JSONL: it must never panic,
// and every format must write whatever it read.
func FuzzBuild(f *testing.F) {
	var seed bytes.Buffer
	if err := writeRecords(&seed, 5); err != nil {
		f.Fatal(err)
	}
	f.Add(seed.Bytes())
	f.Add([]byte("not json\n{}\n[]\nnull\n{\"call_id\":7}\n"))
	f.Add([]byte(`{"call_id":"c","timestamp":"x","speaker":"<b>","method_name":"|` + "\x00" + `","args":[],"kwargs":{},"outcome_summary":{"status":"error","ok":false},"depth":-3,"duration_ms":1e308,"attempts":-2,"history_query_patterns":["filter","filter",""],"program_source":"conversation_history.each {","usage":{"input_tokens":-1}}`))
	f.Add([]byte(`{"call_id":"c","timest`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := report.Build(context.Background(), report.Options{TraceCapacity: 2, MaxKeys: 2, MaxCallIDs: 2, MaxLatencyMethods: 1},
			report.Source{Name: "fuzz", R: bytes.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		for _, write := range []func(io.Writer) error{r.WriteMarkdown, r.WriteJSON, r.WriteHTML} {
			if err := write(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
		// Whatever was read, the records and the bad lines account for it.
		recs, _ := record.ReadJSONL(bytes.NewReader(data))
		if int64(len(recs)) != r.Summary.Records {
			t.Fatalf("report counted %d records, ReadJSONL read %d", r.Summary.Records, len(recs))
		}
	})
}
