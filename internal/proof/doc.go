// Package proof holds no code, only tests: they prove the recorder whole,
// under load and under faults, through the clients people use.
//
// # What is proved
//
//   - Soak with faults (soak_test.go): a fault server on loopback answers
//     each HTTP attempt, at random but reproducibly per call, with success,
//     429 with Retry-After, 500, 503, a connection reset, a stall past the
//     client's deadline, a stream cut half way, a garbage body or a gzip
//     body. go-openai (plain and streaming), genai, the official openai-go
//     SDK and plain net/http drive it at 64-way concurrency, with retries
//     inside the recorder (middleware.Retry) and outside it (genai's and
//     openai-go's own, an application loop around go-openai), into sinks
//     that fail 10% of the time, are slow, or sit behind a tiny queue.
//     The same script runs once without the recorder: every call must end
//     the same way (status, error class, body) and make the same attempts.
//     With the recorder there is exactly one record per logical call, its
//     attempts are the attempts the server saw and its outcome is the last
//     one's; sinks miss only the records a bounded queue counted as dropped;
//     goroutines and heap come back to where they were.
//   - Memory (memory_test.go): a 100 MiB request body and a 100 MiB
//     streamed response pass through with heap growth within the capture
//     caps plus a small constant; 100,000 calls held in a recorder cost no
//     more memory than its history capacity.
//   - Stream latency (latency_test.go): BenchmarkStreamEventLatency measures
//     what the recorder adds to the arrival of each event of a server-sent
//     stream, p50 and p99, beside a bare transport in the same run.
//   - Privacy (privacy_test.go): personal data planted in prompts, answers
//     (streamed a few characters per event), a tool call's arguments, an
//     error message, metadata and tags, sent through go-openai, openai-go,
//     genai and the Anthropic SDK, is in no sink with redact.PII on: the
//     JSONL file, a SQLite store's file and -wal, the spill file of a
//     store whose database is locked, a PostgreSQL store's rows and every
//     file of its server's data directory, the OTLP export's spans
//     (content captured) and a cassette (replay.WithRedactor). The same
//     run without it finds every value in every sink.
//
// Crash safety of the JSONL sink is proved in package record
// (record/crash_test.go), which must stay standard-library only.
//
// # Running
//
// The CI variants are short and run with everything else:
//
//	go test -race -count=1 ./internal/proof
//
// The long variants are behind environment variables:
//
//	LLMHISTORY_SOAK=1 go test -count=1 -run TestSoak -v -timeout 30m ./internal/proof      # 100,000 calls a run
//	LLMHISTORY_LONG=1 go test -race -count=1 -run TestMemory -v ./internal/proof           # 100 MiB and 100,000 calls under -race too
//	LLMHISTORY_LONG=1 go test -count=1 -run TestJSONLSurvivesSIGKILL -v ./record           # 40 kills instead of 6
//	go test -run '^$' -bench StreamEventLatency -count 6 ./internal/proof | tee new.txt     # then: benchstat new.txt
//
// LLMHISTORY_SOAK_CALLS sets the number of logical calls of the soak
// (default 1,000 per run, 100,000 with LLMHISTORY_SOAK=1), and
// LLMHISTORY_SOAK_SEED its fault script (printed by every run, so a failure
// can be replayed).
package proof
