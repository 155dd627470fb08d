// Package cost prices recorded calls offline, at record time, from a dated
// price table: what each call cost in US dollars, computed from its
// [record.Usage] and model, written to [record.Record.Cost] with the name of
// the table that priced it. It imports only the standard library and
// package record.
//
//	t := cost.Default()           // LiteLLM's prices, generated into the package
//	if t.Apply(&rec) {            // rec.Cost = &record.Cost{USD: ..., Table: "litellm-2026-03-03"}
//		...
//	}
//
// # The table
//
// [Default] is generated from LiteLLM's model_prices_and_context_window.json
// (github.com/BerriAI/litellm) at one commit, and is named after that
// commit's date, which is what [Table.Name] returns and every record it
// prices carries: now "litellm-2026-03-03", from commit
// 4c1b15d6854c9ccad7e4348ed6f45edc45f8039d (table_gen.go's header says the
// same). It holds the chat, responses, completion and embedding models of
// the providers llmhistory records: OpenAI, Azure OpenAI, the Gemini API,
// Vertex AI (Gemini and Claude) and Anthropic, about 300 entries in 35 KB
// of Go. Each has per-token rates for input, output,
// cache reads, cache writes (Anthropic's five-minute and one-hour writes
// apart), reasoning where priced apart, and, for models that cost more
// above a prompt length (Gemini 2.5 Pro, Claude Sonnet 4 and later above
// 200,000 input tokens), the rates of that long-context tier.
//
// Two things are not LiteLLM's figures as they are. For Claude, a cache
// rate LiteLLM lacks is derived from Anthropic's multipliers of the input
// rate (a five-minute write 1.25×, a read 0.1×), and the one-hour write is
// always 2× input, as Anthropic prices it: LiteLLM lacks it for most current
// models (Sonnet 4.5 among them) and has it wrong for a few old ones. The
// generated file marks every such entry with a "derived" comment.
//
// What is priced is text tokens at standard rates: the batch, flex and
// priority service tiers, audio and image tokens priced apart, per-call
// fees (web search) and Gemini's cache storage are not, because a record
// does not carry them. Models released after the table's date are unknown
// until it is regenerated.
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
//     "projects/p/locations/l/publishers/anthropic/models/claude-opus-4@20250514")
//     or a provider prefix as LiteLLM's keys carry them ("azure/", "gemini/",
//     "vertex_ai/", "openai/", "anthropic/"). A path or prefix says which
//     provider's prices to try first; then the bare name is tried, then the
//     name under each of the table's prefixes (Azure alone says
//     "gpt-35-turbo").
//   - That name with a date or version cut off its end, the longest such
//     prefix first: "gpt-4o-2024-08-06" is its own entry when the table has
//     it and "gpt-4o" otherwise; "claude-sonnet-4-5-20250929",
//     "gemini-2.5-flash-001", "gpt-4-0613"; a Gemini preview's date goes
//     first ("gemini-2.5-flash-preview-05-20", then
//     "gemini-2.5-flash-preview", then "gemini-2.5-flash").
//
// A cut is made only at a '-' followed by a date (2024-08-06, 20250929,
// 0613, and 05-20 or 09-2025 after -preview or -exp) or a three-digit
// version (001): "gpt-4o-mini" never becomes "gpt-4o", nor
// "gemini-2.5-flash-lite" "gemini-2.5-flash". Nothing else is guessed: an
// Azure deployment name that is not a model name ("my-prod-gpt4"), a
// fine-tuned model without an "ft:" price, a model newer than the table,
// are unknown, and a call to an unknown model is not priced (never priced
// at zero). OpenAI's fine-tuned names ("ft:gpt-4o-mini-2024-07-18:org::id")
// resolve to their own "ft:" prices, never to the base model's.
//
// Azure OpenAI reports the OpenAI model name in its responses, and that is
// the record's model, so Azure calls are priced at OpenAI's rates unless
// the table has an "azure/" entry for a name only Azure uses.
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
// exceed their whole, or that has negative counts, is not priced.
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
// missing.
//
// # Regenerating
//
// The table is table_gen.go, written by the generator in internal/gen from
// LiteLLM's file, which is not kept in the repository. To move to newer
// prices, take a commit of github.com/BerriAI/litellm and run, from the
// module's root:
//
//	LITELLM_COMMIT=<commit> LITELLM_DATE=<its date, YYYY-MM-DD> \
//	LITELLM_JSON=https://raw.githubusercontent.com/BerriAI/litellm/<commit>/model_prices_and_context_window.json \
//	go generate ./cost
//
// LITELLM_JSON may also be a file path (LiteLLM keeps a copy at
// litellm/model_prices_and_context_window_backup.json). The generator prints
// the rates it derived; review the diff of table_gen.go, and rerun the
// tests: the golden bills pin the rates they use and say which changed.
//
// # Overriding prices
//
// A negotiated price, a model newer than the table, an Azure deployment
// name: [Table.With] adds or replaces prices from Go, and [Table.LoadJSON]
// from a file of per-million-token rates:
//
//	{"version": 1, "table": "acme-2026-11", "models": {
//	  "my-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0, "cache_read_per_mtok": 0.1}}}
//
// Both return a new table under a new name, which is what the records it
// prices carry, so that a figure from your prices is never taken for
// LiteLLM's. Tables are never changed once built and are safe for
// concurrent use.
package cost
