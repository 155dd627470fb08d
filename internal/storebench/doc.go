// Package storebench holds what the store's and the viewer's tests and
// benchmarks are made of: generated histories (a conversation, a team's
// traffic, a 1,000-turn conversation, real calls through a chat server),
// the datasets the query and page benchmarks run on, kept in the
// temporary directory across runs, and the benchmarks themselves, which
// each backend's and the viewer's test files run.
//
// LLMHISTORY_BENCH_RECORDS sets the size of the datasets (default
// 100,000); docs/performance.md and docs/store.md give the commands and
// the figures at 1,000,000 and 10,000,000 records.
package storebench
