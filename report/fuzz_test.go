package report_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/llmhistory/llmhistory/cost"
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
	f.Add([]byte(`{"call_id":"c","timestamp":"0001-01-01T00:00:00Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true},"model":"gpt-4o","usage":{"input_tokens":5,"output_tokens":1},"cost":{"usd":1e308,"table":""},"trace_id":"t","history_query_patterns":[]}` + "\n" +
		`{"call_id":"d","timestamp":"9999-12-31T23:59:59Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true},"usage":{"input_tokens":5,"cached_tokens":9},"cost":{"usd":-1,"table":"x"},"history_query_patterns":[]}` + "\n"))
	// Stale prices: dated table names, far from their records either way.
	f.Add([]byte(`{"call_id":"e","timestamp":"9999-12-31T23:59:59Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true},"model":"gpt-4o","usage":{"input_tokens":5},"cost":{"usd":1,"table":"<i>litellm-0001-01-01"},"history_query_patterns":[]}` + "\n" +
		`{"call_id":"f","timestamp":"0001-01-01T00:00:00Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true},"model":"gpt-4o","usage":{"input_tokens":5},"cost":{"usd":1,"table":"litellm-9999-12-31"},"history_query_patterns":[]}` + "\n"))
	// Streamed calls: a time to first chunk without a duration, huge,
	// negative, and past the cap on methods with latency of their own.
	streamed := []record.Record{call("s1", 0), call("s2", 1), call("s3", 2), call("s4", 3)}
	streamed[0].DurationMS, streamed[0].TimeToFirstChunkMS = 0, 12.5
	streamed[1].MethodName, streamed[1].TimeToFirstChunkMS = "anthropic.messages.create", 1e308
	streamed[2].MethodName, streamed[2].TimeToFirstChunkMS = "anthropic.messages.create", -3
	streamed[3].MethodName, streamed[3].TimeToFirstChunkMS = "gemini.models.streamGenerateContent", 0.0004
	f.Add(encode(f, streamed...))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := report.Options{TraceCapacity: 2, MaxKeys: 2, MaxCallIDs: 2, MaxLatencyMethods: 1}
		if len(data)%2 == 1 {
			opts.Prices = cost.Default() // every record priced again, half the time
		}
		r, err := report.Build(context.Background(), opts, report.Source{Name: "fuzz", R: bytes.NewReader(data)})
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
