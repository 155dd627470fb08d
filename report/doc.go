// Package report builds an evidence report from history records, for an
// architecture review of how an application uses its LLM history: how
// often generated code reads the conversation history and with which
// query patterns, whether every call was appended and carried the history
// guidance, error, retry, latency (with the time to first chunk of
// streamed calls), token and spend figures per method,
// model and provider, and the evidence-review checklist with a verdict per
// item.
//
// # Building
//
// A [Builder] takes records one at a time ([Builder.Add]) and keeps only
// counters, so a report over millions of records costs the same memory as
// one over thousands; [Build] feeds it JSON Lines through a
// [record.Reader], counting garbled lines and torn last lines on the way.
// [Builder.Report] returns a [Report], which writes itself as Markdown
// (for people, the default), JSON (for programs) or a self-contained HTML
// page with SVG charts.
//
// Reading is strict ([record.Reader]): a line without the required fields
// of a record, or without its version, is a bad line, counted and named
// with its source and line number like any other, never a record of
// "(none)"s that would skew the rates.
//
// Every report begins with its provenance: when it was made, by which
// version of this module and of Go, and from which inputs, with the lines
// read, the records and the bad lines of each. Durations are shown in the
// unit a person reads (200 µs, 40.9 ms, 5.6 s); the JSON keeps
// milliseconds. When some record was streamed, the latency table of the
// Markdown and HTML gains the time to first chunk of each method's
// streamed calls (how many, p50, p95, max); without one, it has no such
// column.
//
// # Bounds and estimates
//
// Memory is bounded by [Options], never by the input:
//
//   - Speakers, methods, models, error types and pattern tags: the first
//     MaxKeys (1,000) distinct names each; the rest are counted under
//     "(other)" and a note says so. Names longer than 256 bytes are cut.
//   - Latency: one log-bucketed histogram per method (the first
//     MaxLatencyMethods, 100; the rest share "(other)"), in the manner of
//     DDSketch: buckets grow by a factor γ = 1.01/0.99, so every quantile
//     reported is within 1% (relative) of the true nearest-rank quantile,
//     for durations from 1 µs to 10⁹ ms (a longer one, which no call
//     takes, is counted as 10⁹ ms), in about 4 KiB per method. A method
//     with streamed calls has a second one, as large, for the time to
//     first chunk (time_to_first_chunk_ms), under the same cap.
//   - Largest traces: Space-Saving over TraceCapacity (10,000) counters.
//     While there are no more distinct traces than that, counts are exact;
//     past it each count is an upper bound, too high by at most its
//     max_overcount, itself at most (records with a trace)/TraceCapacity;
//     every trace with more records than that bound is among those tracked.
//   - Most expensive traces: the same, weighted by each record's cost, over
//     another TraceCapacity counters: exact while no more traces with a
//     cost than that, otherwise each trace's spend is an upper bound, too
//     high by at most its max_overcount_usd, itself at most (the spend of
//     the records with a trace)/TraceCapacity.
//   - Spend over time: at most 512 buckets, whose width is taken from a
//     ladder (1 ms, 2 ms, 10 ms, … 1 min, 2 min, 10 min, … 1 h, … 1 day, …)
//     in which each width divides the next, so that buckets merge exactly
//     as the span grows, whatever the order of the records. The report
//     shows them merged to the narrowest width with at most 60 buckets.
//   - Spend by model and speaker, unpriced models, price tables: the first
//     MaxKeys names each, the rest under "(other)".
//   - Duplicate call ids: an exact set of 64-bit hashes of the first
//     MaxCallIDs (1,048,576) distinct ids, about 40 MiB when full. A false
//     duplicate needs a hash collision: about one chance in 3·10⁷ at a
//     million ids. Later records are counted as unchecked, and the verdict
//     says "not checked".
//   - Pattern examples: one per tag, from the first record carrying the
//     tag whose program_source the detector finds it in (at most three
//     scans per tag).
//   - Garbled lines and torn sources: all counted, the first MaxBadLines
//     (10) kept.
//
// # Spend
//
// What the records cost, from the cost each carries ([record.Cost], set
// by the recorder at record time from its price table) or, with
// [Options.Prices], from that one table for every record. A record
// without a cost is unpriced, never a cost of zero: it adds to no sum and
// is counted by reason, usage with a model the table does not know or no
// usage at all ([cost.Summary] does the counting). The provenance names
// the price tables. The spend of the records that ended in error, and of
// those whose call took more than one attempt, are given with their
// share; a record is priced on its last attempt's usage, so what an
// earlier attempt cost, if anything, is in no record. The share of input
// served from the prompt cache is cached_tokens over input_tokens (which
// includes them), summed over the records with usage. A cost that is
// negative or above $1,000,000 for one call is not a price: the record is
// counted as unpriced and as an invalid cost. Dollars are written for
// people as $12.34 from a dollar up and to three significant digits below
// ($0.0123), and in the JSON as numbers rounded to 12 significant digits.
//
// Prices age: a table knows only the models released before its date, at
// the prices of that day. When a table priced a record more than
// [StalePriceDays] (90) days newer than itself, the report warns, in every
// format (the Spend section, the notes, and spend.stale_prices in the
// JSON), and says how to price the records again with LiteLLM's current
// file (-prices FILE, or LLMHISTORY_PRICES where the records are made; see
// package cost). A table's date is the one its name carries
// ([cost.DateOf]: "litellm-2026-07-24"); a table named without one
// ("acme-2026-11") is not judged.
//
// # Checklist
//
// The evidence-review checklist: what a recorded history must show before
// its figures can be trusted, each item with its figure and a verdict
// ("met", "not met", "no data", "not checked"):
//
//   - append_success: every record has history_record_appended;
//   - guidance_presence: every record has history_guidance;
//   - access_detected: every record whose program_source contains
//     "conversation_history" has history_access_detected (a mention in a
//     comment or a string counts as a reference too, so a miss here is a
//     record to look at, not necessarily a detector bug);
//   - no_duplicates: no call_id appears on two records;
//   - retries_collapsed: records with attempts > 1 exist and no call_id is
//     duplicated, so retries were folded into their call's record;
//   - evidence_stream: at least MinEvidence (100) records carry
//     program_source.
//
// # JSON
//
// [Report.WriteJSON] writes one object, indented by two spaces. Keys are
// stable: they may be added to, never renamed or removed. Lists are never
// null.
//
//	version                      1
//	provenance                   generated_at (RFC 3339 UTC), tool (module and Go
//	                             versions), inputs[] (name, lines, records,
//	                             bad_lines, torn, unresolved_args: records whose
//	                             args_prefix named a missing or damaged record,
//	                             first_unresolved_line), lines, bad_lines,
//	                             price_tables[] (name, count: records priced by it),
//	                             repriced_with ("" unless Options.Prices), prices_from
//	summary                      records, calls (sum of attempts, 0 counting as 1),
//	                             ok_records, error_records (not ok, canceled included),
//	                             canceled_records, first_timestamp, last_timestamp
//	                             (RFC 3339 UTC, "" without records), span_seconds
//	history                      appended, append_rate, guidance, guidance_rate,
//	                             access, access_rate (over records);
//	                             with_program_source, access_with_program_source,
//	                             access_rate_program_source (over with_program_source);
//	                             references_history, references_without_access;
//	                             max_conversation_history_size,
//	                             mean_conversation_history_size
//	patterns[]                   tag, records, example (one line, at most 80
//	                             characters, "" when none), example_call_id;
//	                             known tags in detect's stable order, others after
//	speakers[], methods[],       name, count; largest first; "(none)" for records
//	models[]                     without one, "(other)" last for names past the cap
//	providers[]                  name (method_name before its first dot: openai,
//	                             gemini, anthropic, http), records, calls (attempts),
//	                             errors (not ok, canceled included), input_tokens,
//	                             output_tokens, total_tokens; most records first
//	errors[]                     type, count, retriable (how many of count)
//	retries                      histogram[] (name "1".."4", "5+"; count),
//	                             retried_records, extra_attempts
//	latency[]                    method, records, p50_ms, p90_ms, p99_ms, max_ms,
//	                             mean_ms (records with a duration_ms only);
//	                             first_chunk_count, first_chunk_p50_ms,
//	                             first_chunk_p95_ms, first_chunk_max_ms (the
//	                             streamed records: those with a
//	                             time_to_first_chunk_ms; all 0 without any).
//	                             A method is listed when a record of it has
//	                             either
//	tokens[]                     model, records (with usage), input_tokens,
//	                             output_tokens, total_tokens, cached_tokens,
//	                             cache_write_tokens, cached_share
//	spend                        usd, priced_records, unpriced_records (usage, no
//	                             cost), no_usage_records, unpriced_models[] (name,
//	                             count; the 10 most often), invalid_costs;
//	                             models[], speakers[] (name, records (priced),
//	                             usd, share); failed, retried (records,
//	                             priced_records, usd, share); traces
//	                             (priced_records, usd, share, tracked, exact,
//	                             max_overcount_usd, top[] (trace_id, usd, share,
//	                             max_overcount_usd)); cache (input_tokens,
//	                             cached_tokens, cache_write_tokens, cached_share);
//	                             over_time (bucket_seconds, buckets[] (start,
//	                             records, usd)); stale_prices[] (table,
//	                             table_date, newest_record, days_newer: the
//	                             tables more than 90 days older than a record
//	                             they priced, stalest first). Dollars in USD,
//	                             shares of usd
//	depth[]                      name "0".."9", "10+", "unknown"; count
//	traces                       with_trace, without_trace, tracked, exact,
//	                             max_overcount, top[] (trace_id, records,
//	                             max_overcount)
//	duplicates                   checked_ids, duplicates, unchecked, missing_id, cap
//	bad_input                    garbled_lines, first_garbled[] (source, line,
//	                             message), torn_tails, torn_sources[]
//	checklist[]                  id, item, figure, verdict
//	notes[]                      where a list was cut or a figure is an estimate
//
// Rates are fractions in [0, 1], 0 when their denominator is 0: read the
// count beside them.
//
// # HTML
//
// [Report.WriteHTML] writes one page with no script and no external
// resource: inline CSS, and inline SVG charts with ids chart-latency
// (p50, p90, p99 bars per method on a logarithmic scale with a labelled
// decade grid, so a p50 stays visible beside a p99 a hundred times longer,
// and each bar labelled with its quantile and value), chart-patterns,
// chart-errors and chart-spend (a column per time bucket with a cost, on a
// dollar scale with a labelled grid, and the times of bucket starts
// below, as many as fit apart). Timestamps never break across lines. Record
// contents are untrusted: html/template escapes all of them, and the
// page's Content-Security-Policy allows no script at all.
//
// # Speed
//
// On a 2-core machine, BenchmarkBuild (100,000 realistic records, 85 MiB
// of JSONL, read and added) runs at about 150,000 to 220,000 records a
// second; the Builder alone adds about a million records a second, so
// reading and decoding the JSONL (BenchmarkRead) is most of the cost.
// A million records are reported with about 40 MiB held at the end, most
// of it the call-id set of the duplicate check.
package report
