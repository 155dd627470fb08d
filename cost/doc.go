// Package cost prices recorded calls offline, at record time, from a dated
// price table: what each call cost in US dollars, computed from its
// [record.Usage] and model, written to [record.Record.Cost] with the name of
// the table that priced it. It imports only the standard library and
// package record.
//
//	t := cost.Default()  // LiteLLM's prices: built in, or the newer file LLMHISTORY_PRICES names
//	if t.Apply(&rec) {   // rec.Cost = &record.Cost{USD: ..., Table: "litellm-2026-07-24"}
//		...
//	}
//
// The recorder prices every record this way (middleware.WithPrices sets
// the table, WithPrices(nil) turns pricing off), in 0.1 to 2 µs per
// record (a name as the table has it is the fastest; the slowest, a
// Bedrock global profile with a version the table lacks, takes about three
// times a dated snapshot) with no allocation but the record's Cost (go
// test ./cost -run '^$' -bench . -benchmem). A call the table cannot price (an unknown
// model, no usage) has no cost, never a cost of zero, and a report counts
// it as unpriced.
//
// # The table
//
// [Builtin] is generated from LiteLLM's model_prices_and_context_window.json
// (github.com/BerriAI/litellm) and is named after the day the file was
// taken, which is what [Table.Name] returns and every record it prices
// carries: now "litellm-2026-07-24", LiteLLM's main branch as of that day.
// The file was taken through github.com/RoCry/llm-api-price (commit
// 8442b939a6ead479f7995b5d74d8dce488bd0966), a copy that syncs it from
// LiteLLM every hour, because LiteLLM's own repository was too large to
// fetch where the table was regenerated; table_gen.go's header says the
// same. It holds the chat, responses, completion and embedding models of
// the providers llmhistory records: OpenAI, Azure OpenAI, the Gemini API,
// Vertex AI (Gemini and Claude), Anthropic and Amazon Bedrock, about 450
// entries in 60 KB of Go. Each has per-token rates for input, output,
// cache reads, cache writes (Anthropic's five-minute and one-hour writes
// apart), reasoning where priced apart, and, for models that cost more
// above a prompt length, the rates of that long-context tier: Gemini 2.5
// Pro and Claude Sonnet 4 and 4.5 above 200,000 input tokens, GPT-5.4 and
// GPT-5.5 above 272,000. Claude Sonnet 4.6 and Opus 4.6 have no such tier:
// since 2026-03-13 Anthropic bills them at standard rates across the
// whole 1M window.
//
// Two things are not LiteLLM's figures as they are. For Claude, a cache
// rate LiteLLM lacks is derived from Anthropic's multipliers of the input
// rate (a five-minute write 1.25×, a read 0.1×), and the one-hour write is
// always 2× input, as Anthropic prices it: LiteLLM lacks it for many models
// and has it wrong for a few old ones. The generated file marks every such
// entry with a "derived" comment. And a Bedrock model LiteLLM prices at
// zero (a gated preview) is left out, so that its paid calls are unpriced
// rather than free.
//
// What is priced is text tokens at standard rates: the batch, flex and
// priority service tiers, regional and data-residency uplifts on the
// first-party APIs, audio and image tokens priced apart, per-call fees
// (web search) and Gemini's cache storage are not, because a record does
// not carry them. Models released after the table's date are unknown
// until it is regenerated or a newer file is loaded; so are the models
// LiteLLM has dropped since an older table (Claude 3.5 Sonnet, Gemini
// 1.5, o1-mini), which their providers have retired.
//
// # Newer prices at run time
//
// A built-in table ages: new models are unpriced and changed prices are
// wrong until the module is released again. Any program can price with
// LiteLLM's current file instead, taken from
// https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json:
//
//   - in Go, [LoadLiteLLM] reads it into a table, named "litellm-" and the
//     day you give, to pass to middleware.WithPrices or a report;
//   - set LLMHISTORY_PRICES to the file's path ([EnvPrices]), and
//     [Default], which the recorder uses unless told otherwise, prices
//     with it;
//   - llmhistory report and llmhistory demo take -prices FILE.
//
// A file loaded by path ([Table.LoadFile], the variable, the flag) is
// dated by the YYYY-MM-DD in its name if it has one
// ("litellm-2026-11-20.json"), else by its modification time: the day it
// was downloaded. The same three ways take a file of your own prices
// (below), which adds to the table instead of replacing it. The table of
// a LiteLLM file is the file's alone, converted as the built-in one is,
// so that a price LiteLLM changed or dropped is not kept from an older
// table. A file that is not a price file, or whose rates are not prices,
// is an error that says what is wrong; it never panics and never prices
// with a fallback.
//
// The evidence report (package report) warns, in every format, when the
// records it counts are more than 90 days newer than the table that
// priced them: the sign that their models may be unpriced and their
// prices out of date. [DateOf] reads a table's date from its name.
//
// # Name resolution
//
// [Table.Lookup] resolves a model name as a provider returned it to one
// entry, trying from the most exact to the least and stopping at the first
// the table has:
//
//   - The whole name, canonical: trimmed, lower case, and Vertex AI's '@'
//     before a version read as '-' ("claude-opus-4@20250514" is
//     "claude-opus-4-20250514").
//   - The model's own name, out of a resource path ("models/gemini-2.5-flash",
//     "publishers/google/models/gemini-2.5-pro",
//     "projects/p/locations/l/publishers/anthropic/models/claude-opus-4@20250514"),
//     a Bedrock ARN ("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6",
//     "arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-opus-4-7")
//     or a provider prefix as LiteLLM's keys carry them ("azure/", "gemini/",
//     "vertex_ai/", "openai/", "anthropic/", "bedrock/"). A path or prefix
//     says which provider's prices to try first; then the bare name is
//     tried, then the name under each of the table's prefixes (Azure alone
//     says "gpt-35-turbo").
//   - That name with a date or version cut off its end, the longest such
//     prefix first: "gpt-4o-2024-08-06" is its own entry when the table has
//     it and "gpt-4o" otherwise; "claude-sonnet-4-5-20250929",
//     "gemini-2.5-flash-001", "gpt-4-0613"; a Gemini preview's date goes
//     first ("gemini-2.5-flash-preview-09-2025", then
//     "gemini-2.5-flash-preview", then "gemini-2.5-flash"); a Bedrock id
//     loses its version ("anthropic.claude-opus-4-6-v1:0", then
//     "anthropic.claude-opus-4-6-v1", then "anthropic.claude-opus-4-6").
//
// A cut is made only at a '-' followed by a date (2024-08-06, 20250929,
// 0613, and 05-20 or 09-2025 after -preview or -exp), a three-digit
// version (001) or, in a Bedrock id, a version (v1, v2:0): "gpt-4o-mini"
// never becomes "gpt-4o", nor "gemini-2.5-flash-lite" "gemini-2.5-flash".
// Nothing else is guessed: an Azure deployment name that is not a model
// name ("my-prod-gpt4o"), a fine-tuned model without an "ft:" price, a
// Bedrock application inference profile or provisioned model (its ARN
// names no model), a model newer than the table, are unknown, and a call
// to an unknown model is not priced (never priced at zero). OpenAI's
// fine-tuned names ("ft:gpt-4o-mini-2024-07-18:org::id") resolve to their
// own "ft:" prices, never to the base model's.
//
// Azure OpenAI reports the OpenAI model name in its responses, and that is
// the record's model, so Azure calls are priced at OpenAI's rates unless
// the table has an "azure/" entry for a name only Azure uses.
//
// Bedrock's inference profiles are priced as LiteLLM lists them: the
// regional ones ("us.", "eu.", "apac.", "au.", "jp.") at their own rates,
// 10% above the model's for recent Claude models, and the global one
// ("global.") at the model's. A regional profile LiteLLM does not list is
// unknown rather than priced as the model, which would be 10% low. Local
// models (Ollama) are not priced: a table knows no price for them.
//
// # The arithmetic
//
// Every token is priced once, by the one meaning of [record.Usage]:
// InputTokens includes CachedTokens and CacheWriteTokens, and OutputTokens
// includes ReasoningTokens, whatever the provider. So
//
//	cost = (InputTokens − CachedTokens − CacheWriteTokens) × input
//	     + CachedTokens × cache read
//	     + (CacheWriteTokens − CacheWrite1hTokens) × cache write
//	     + CacheWrite1hTokens × 1-hour cache write
//	     + (OutputTokens − ReasoningTokens) × output
//	     + ReasoningTokens × reasoning
//
// with the rates of the long-context tier for the whole request when
// InputTokens exceeds the tier's threshold, as the providers bill it. A rate
// the table lacks is never free (see [Rates]): cached tokens without a
// cache rate are priced as input, which may overstate a bill but never
// hides a cost; reasoning without a rate of its own is priced as output;
// a long-context rate the tier lacks is the base rate. Usage whose parts
// exceed their whole, or that has negative counts, is not priced. Golden
// tests reproduce the double counts other tools have shipped (cached
// tokens priced at the input rate and again at the cache rate, Anthropic's
// cache tokens added twice, reasoning added on top of output) against a
// bill computed by hand for each provider.
//
// Arithmetic is in float64: six products and a sum, a relative error near
// 1e-16, far below a millionth of a cent on any real bill; the tests compare
// with a relative tolerance of 1e-12.
//
// # Priced and unpriced calls
//
// [Table.Apply] sets a record's Cost, or leaves it nil and reports false
// when the call cannot be priced. [Summary] adds records up: spend, priced
// calls, and the unpriced ones by reason (no usage, or a model the table
// does not know) and by model, so that a report can say what its total is
// missing. The evidence report (llmhistory report) shows spend in total,
// by model, by speaker and for the most expensive traces, names the price
// tables its records carry, and with -prices FILE prices every record
// again with one table, whatever cost it carries.
//
// # Your own prices
//
// A negotiated price, a model newer than the table, an Azure deployment
// name: [Table.With] adds or replaces prices from Go, and [Table.LoadJSON]
// from a file of per-million-token rates:
//
//	{"version": 1, "table": "acme-2026-11", "models": {
//	  "my-prod-gpt4o": {"input_per_mtok": 2.5, "output_per_mtok": 10, "cache_read_per_mtok": 1.25,
//	    "long_context": {"above_tokens": 200000, "input_per_mtok": 5}}}}
//
// Both return a new table under a new name, which is what the records it
// prices carry, so that a figure from your prices is never taken for
// LiteLLM's. Tables are never changed once built and are safe for
// concurrent use.
//
// # Regenerating
//
// The table is table_gen.go, written by the generator in internal/gen from
// LiteLLM's file, which is not kept in the repository; the selection and
// the corrections are internal/litellm's, which [LoadLiteLLM] shares. To
// move to newer prices, take a commit of github.com/BerriAI/litellm and
// run, from the module's root (a maintainer, with network access):
//
//	LITELLM_COMMIT=<commit> LITELLM_DATE=<its date, YYYY-MM-DD> \
//	LITELLM_JSON=https://raw.githubusercontent.com/BerriAI/litellm/<commit>/model_prices_and_context_window.json \
//	go generate ./cost
//
// LITELLM_JSON may also be a file path (LiteLLM keeps a copy at
// litellm/model_prices_and_context_window_backup.json); for a file taken
// from a copy of LiteLLM's main branch, run the generator itself with
// -commit main and -via naming the copy. It prints the rates it derived
// and the entries it skipped; review the diff of table_gen.go, update the
// table's name and source above, and rerun the tests: the golden bills pin
// the rates they use and say which changed.
package cost
