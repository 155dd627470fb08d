// Package eval judges recorded calls and conversations, and keeps the
// judgements as scores ([store.Score]): deterministic code checks, an LLM
// judging another LLM, online on a sample of live calls or offline over a
// store or a JSONL history. It works on the embedded store with nothing
// else running.
//
// # Evaluators
//
// An [Evaluator] takes a [Subject] (one call's record, or a
// conversation's records) and gives scores; its [Info] says its name, its
// version, its source (code or model) and whether it judges whole
// conversations. [Score] runs one and completes its scores: on the call
// (or the trace), with NAME@VERSION as author. A store keeps one score
// per call, name and author, so an evaluator of one version run twice
// over a call gives one score; a new version (another schema, pattern or
// rubric: the built-in ones derive it from what configures them) scores
// again, beside the old.
//
// The code evaluators, each tested:
//
//   - [JSONValid]: the output is one JSON document.
//   - [JSONSchema]: the output is valid against a JSON Schema (draft
//     2020-12 and earlier, with github.com/santhosh-tekuri/jsonschema/v6;
//     no file or URL is ever loaded).
//   - [ToolArgs]: each tool call names a tool the request offered, with
//     arguments valid against its declaration (OpenAI, Anthropic or
//     Gemini tools, given as the application sends them: a record keeps
//     their names, not their schemas).
//   - [Regex] and [Contains]: the output matches, or holds a text.
//   - [Latency] and [Cost]: the call took at most so long, cost at most
//     so much.
//   - [Answer]: answered, empty, or refusal (a content filter, or an
//     answer that begins as a refusal does).
//   - [Check] makes one of your own from a function.
//
// What an evaluator cannot judge it leaves: a failed call, a call whose
// answer was not kept (middleware.WithoutOutput) gets no score, never a low
// one.
//
// # The judge
//
// A [Judge] asks a [Model] with a rubric and a prompt template, and reads
// its verdict strictly ([ParseVerdict]): one JSON object
// {"score": S, "reason": "..."}, S of its [Scale] (a number in a range,
// a boolean, a category). A reply it cannot read is an error wrapping
// [ErrVerdict], a refusal [ErrRefused], a timeout the context's error:
// never a score of zero. [OpenAIModel] speaks the OpenAI chat completions
// API and its compatible servers over an *http.Client: give it the
// recorder's (Recorder.Client), and the judge's own calls are recorded,
// tagged [Tag] and linked to the call judged, and never judged in their
// turn. A [Budget] bounds what judges spend, in dollars (priced from the
// usage of their replies) and in calls.
//
// # Online
//
// [Online] is a record.Sink: given to the recorder, it judges a sampled
// fraction of calls (picked by call ID, so that every process picks the
// same) on a bounded number of workers, behind a bounded queue that drops
// and counts rather than waits. The recorder feeds each sink from its
// own queue and goroutine, so no evaluation is ever on a call's path.
// Scores go to a [ScoreSink]: a [*store.Store] or a [*store.ScoreJSONL].
//
// # Offline
//
// [Run] judges the records of a store a filter selects, a page at a time,
// asking the store which calls each evaluator's version has scored
// already: a run stopped half way resumes, and a second run writes
// nothing. [RunRecords] does the same over a JSONL history and its scores
// file. [ParseRules] reads evaluators, a filter and a budget from a small
// JSON file; llmhistory eval runs them. docs/evaluation.md in the
// repository has the reference and the figures: at 1,000,000 records, a
// code evaluator scores 8,600 calls a second on SQLite on a loaded
// 2-core machine (reading the records alone: 21,000).
//
// # Feedback
//
// An application records its users' feedback on the call it made: it
// gives the call its ID (middleware.WithCallID with middleware.NewCallID),
// and adds a score on it (this package's feedback example).
package eval
