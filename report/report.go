package report

// Report is a snapshot of the figures a [Builder] gathered. Its JSON form
// (see [Report.WriteJSON] and the package doc) is stable: keys are only
// ever added.
type Report struct {
	Version int `json:"version"`
	// Provenance says where the figures come from: when and by what the
	// report was made, from which inputs.
	Provenance Provenance  `json:"provenance"`
	Summary    Summary     `json:"summary"`
	History    History     `json:"history"`
	Patterns   []Pattern   `json:"patterns"`
	Speakers   []Count     `json:"speakers"`
	Methods    []Count     `json:"methods"`
	Models     []Count     `json:"models"`
	Providers  []Provider  `json:"providers"`
	Errors     []ErrorType `json:"errors"`
	Retries    Retries     `json:"retries"`
	Latency    []Latency   `json:"latency"`
	Tokens     []Tokens    `json:"tokens"`
	// Spend is what the records cost: in total, by model, speaker and
	// trace, over time, on failures and retries, and what is unpriced.
	Spend Spend `json:"spend"`
	// Users and Tags group the records by user_id and by tag: calls,
	// errors, tokens, spend and latency, the largest first ("(none)" for
	// records without; a record with two tags counts in both).
	Users []Group `json:"users"`
	Tags  []Group `json:"tags"`
	// Scores are the scores given in Options.Scores, by model and by
	// tag (scores.go); empty without.
	Scores     []ScoreGroup `json:"scores,omitempty"`
	Depth      []Count      `json:"depth"`
	Traces     Traces       `json:"traces"`
	Duplicates Duplicates   `json:"duplicates"`
	BadInput   BadInput     `json:"bad_input"`
	Checklist  []Check      `json:"checklist"`
	// Notes say where a figure is an estimate or a list was cut.
	Notes []string `json:"notes"`
}

// Provenance is where a report comes from.
type Provenance struct {
	GeneratedAt string `json:"generated_at"` // RFC 3339 UTC, when the report was made
	Tool        string `json:"tool"`         // what made it: module version and Go version
	// Inputs are the sources [Build] read, in order; empty for a report
	// fed record by record with [Builder.Add].
	Inputs   []Input `json:"inputs"`
	Lines    int64   `json:"lines"`     // lines read from all inputs, blank ones included
	BadLines int64   `json:"bad_lines"` // lines that were not records (torn last lines not counted)
	// PriceTables are the price tables that priced the records counted
	// ([record.Cost].Table), with how many records each priced, most
	// first: the tables named in the records, or the one table of
	// [Options.Prices].
	PriceTables []Count `json:"price_tables"`
	// RepricedWith names the table every record was priced with for this
	// report ([Options.Prices]), whatever cost it carried; "" when the
	// report used the costs the records carry.
	RepricedWith string `json:"repriced_with"`
	// PricesFrom says where that table came from ([Options.PricesFrom]).
	PricesFrom string `json:"prices_from"`
}

// Input is one source of a report and what was read from it.
type Input struct {
	Name     string `json:"name"`
	Lines    int64  `json:"lines"`
	Records  int64  `json:"records"`
	BadLines int64  `json:"bad_lines"`
	Torn     bool   `json:"torn"` // it ended in a torn line, skipped
	// UnresolvedArgs counts the records whose args_prefix named an
	// earlier record that was missing or did not match (a line lost, the
	// file cut or edited): their args hold only what they add, which the
	// report does not need. FirstUnresolvedLine is the line of the first.
	UnresolvedArgs      int64 `json:"unresolved_args"`
	FirstUnresolvedLine int64 `json:"first_unresolved_line,omitempty"`
}

// NoRecords reports whether the input had lines, none of which was a
// record: most likely not a history file at all.
func (in Input) NoRecords() bool { return in.Records == 0 && in.BadLines > 0 }

// Provider is what one provider's calls came to. The provider is the part
// of method_name before its first dot: openai, gemini, anthropic, or http
// for endpoints no provider recognized ("http.POST /path").
type Provider struct {
	Name         string `json:"name"`
	Records      int64  `json:"records"`      // logical calls
	Calls        int64  `json:"calls"`        // HTTP attempts, 0 counting as 1
	Errors       int64  `json:"errors"`       // records not ok, canceled included
	InputTokens  int64  `json:"input_tokens"` // over the records with usage
	OutputTokens int64  `json:"output_tokens"`
	TotalTokens  int64  `json:"total_tokens"`
}

// Summary is the size and time span of the input.
type Summary struct {
	Records         int64   `json:"records"`          // logical calls: one record each
	Calls           int64   `json:"calls"`            // HTTP attempts: the sum of attempts, 0 counting as 1
	OKRecords       int64   `json:"ok_records"`       // outcome ok
	ErrorRecords    int64   `json:"error_records"`    // outcome not ok, canceled included
	CanceledRecords int64   `json:"canceled_records"` // status canceled
	FirstTimestamp  string  `json:"first_timestamp"`  // RFC 3339 UTC; "" without records
	LastTimestamp   string  `json:"last_timestamp"`
	SpanSeconds     float64 `json:"span_seconds"`
}

// History holds the history telemetry every record carries. Each rate is
// its count over its denominator (records, or with_program_source), and 0
// when the denominator is 0.
type History struct {
	Appended     int64   `json:"appended"` // history_record_appended
	AppendRate   float64 `json:"append_rate"`
	Guidance     int64   `json:"guidance"` // history_guidance
	GuidanceRate float64 `json:"guidance_rate"`
	Access       int64   `json:"access"` // history_access_detected
	AccessRate   float64 `json:"access_rate"`

	WithProgramSource       int64   `json:"with_program_source"`
	AccessWithProgramSource int64   `json:"access_with_program_source"`
	AccessRateProgramSource float64 `json:"access_rate_program_source"`
	// ReferencesHistory counts records whose program_source contains
	// "conversation_history" anywhere (comments and strings too);
	// ReferencesWithoutAccess those of them without history_access_detected.
	ReferencesHistory       int64 `json:"references_history"`
	ReferencesWithoutAccess int64 `json:"references_without_access"`

	MaxHistorySize  int     `json:"max_conversation_history_size"`
	MeanHistorySize float64 `json:"mean_conversation_history_size"`
}

// Pattern is one history query pattern tag: how many records carry it,
// and one short example of it from a record's program_source.
type Pattern struct {
	Tag           string `json:"tag"`
	Records       int64  `json:"records"`
	Example       string `json:"example"`         // one line, at most 80 characters; "" when none was found
	ExampleCallID string `json:"example_call_id"` // the record the example comes from
}

// Count is a name and how many records have it. The name "(other)" collects
// the names past the report's cap on distinct names, "(none)" the records
// without one.
type Count struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// ErrorType is one error type and how many of its records were retriable.
type ErrorType struct {
	Type      string `json:"type"`
	Count     int64  `json:"count"`
	Retriable int64  `json:"retriable"`
}

// Retries shows retries folded into records: the records by attempts.
type Retries struct {
	Histogram      []Count `json:"histogram"`       // names "1", "2", "3", "4", "5+"
	RetriedRecords int64   `json:"retried_records"` // attempts > 1
	ExtraAttempts  int64   `json:"extra_attempts"`  // attempts beyond the first, summed
}

// Latency is the duration of one method's calls, in milliseconds, over the
// records that carry a duration, and the time to first chunk of its
// streamed calls. Quantiles are within 1% of the true value (see the
// package doc). A method is listed when some record of it carries either.
type Latency struct {
	Method  string  `json:"method"`
	Records int64   `json:"records"` // records with a duration_ms
	P50MS   float64 `json:"p50_ms"`
	P90MS   float64 `json:"p90_ms"`
	P99MS   float64 `json:"p99_ms"`
	MaxMS   float64 `json:"max_ms"`
	MeanMS  float64 `json:"mean_ms"`
	// FirstChunkCount counts the streamed records, those with a
	// time_to_first_chunk_ms: the time from the call's start to the first
	// bytes of the response body. The quantiles and maximum are over them,
	// all four 0 when there are none.
	FirstChunkCount int64   `json:"first_chunk_count"`
	FirstChunkP50MS float64 `json:"first_chunk_p50_ms"`
	FirstChunkP95MS float64 `json:"first_chunk_p95_ms"`
	FirstChunkMaxMS float64 `json:"first_chunk_max_ms"`
}

// Tokens sums the usage of one model's records that report usage. As in
// [record.Usage], InputTokens includes CachedTokens and CacheWriteTokens.
type Tokens struct {
	Model        string `json:"model"`
	Records      int64  `json:"records"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	TotalTokens  int64  `json:"total_tokens"`
	// CachedTokens is the part of InputTokens read from the prompt cache,
	// CacheWriteTokens the part written to it.
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// CachedShare is CachedTokens over InputTokens: the share of the
	// input served from the cache.
	CachedShare float64 `json:"cached_share"`
}

// Spend is what the records cost, in US dollars: the sum of their costs
// ([record.Cost], set by the recorder at record time, or by
// [Options.Prices] for this report). A record without a cost is unpriced:
// it adds nothing to any sum, and is counted by reason.
//
// Every share is of USD, the whole spend, and 0 when USD is 0.
type Spend struct {
	USD           float64 `json:"usd"`
	PricedRecords int64   `json:"priced_records"`
	// UnpricedRecords have usage but no cost: a model the price table does
	// not know (or usage that breaks its one meaning). Without
	// Options.Prices the report cannot tell these from records written
	// by a recorder with pricing turned off (WithPrices(nil)); -prices
	// tells, by pricing them.
	UnpricedRecords int64 `json:"unpriced_records"`
	// NoUsageRecords have neither usage nor cost: most are failed calls,
	// which the provider billed nothing for or did not say.
	NoUsageRecords int64 `json:"no_usage_records"`
	// LocalRecords ran on a model on the caller's own machine (Ollama's
	// native API, [cost.Local]): they cost nothing per token, and are
	// counted as local, neither priced nor unpriced.
	LocalRecords int64 `json:"local_records,omitempty"`
	// UnpricedModels are the models of the UnpricedRecords, most often
	// first: the prices the table is missing ("(none)": no model).
	UnpricedModels []Count `json:"unpriced_models"`
	// InvalidCosts counts records whose cost was not a price (negative,
	// or more than $1,000,000 for one call): damage, counted as unpriced.
	InvalidCosts int64 `json:"invalid_costs"`

	Models   []SpendBy `json:"models"`   // by model, most spent first
	Speakers []SpendBy `json:"speakers"` // by speaker, most spent first
	// Failed is the spend of the records that ended in error (canceled
	// included); Retried that of the records whose call took more than one
	// attempt. A record is priced on its last attempt's usage, so Retried
	// is what those calls' last attempts cost: what an earlier attempt
	// cost, if anything, is not in the record. A record can be in both.
	Failed  SpendShare  `json:"failed"`
	Retried SpendShare  `json:"retried"`
	Traces  SpendTraces `json:"traces"`
	// Cache is how much of the input the prompt cache served.
	Cache    Cache         `json:"cache"`
	OverTime SpendOverTime `json:"over_time"`
	// StalePrices are the price tables that priced records more than
	// StalePriceDays newer than the table: their models may be unpriced
	// and their prices out of date. Empty when none is, or when no table
	// name carries a date ([cost.DateOf]).
	StalePrices []StalePrices `json:"stale_prices"`
}

// StalePriceDays is how much newer than its price table a record may be
// before the report warns that the table is stale: about a quarter, in
// which providers have released models and changed prices every time so
// far.
const StalePriceDays = 90

// StalePrices is a price table that priced records much newer than
// itself.
type StalePrices struct {
	Table        string `json:"table"`         // the table's name, as the records carry it
	TableDate    string `json:"table_date"`    // its date, YYYY-MM-DD
	NewestRecord string `json:"newest_record"` // the timestamp of the newest record it priced, RFC 3339 UTC
	DaysNewer    int    `json:"days_newer"`    // whole days from the table's date to that record
}

// SpendBy is the spend of the records with one name (a model, a speaker).
type SpendBy struct {
	Name    string  `json:"name"`
	Records int64   `json:"records"` // priced records
	USD     float64 `json:"usd"`
	Share   float64 `json:"share"`
}

// SpendShare is the spend of a kind of record, and its share of the whole.
type SpendShare struct {
	Records       int64   `json:"records"`        // records of the kind, priced or not
	PricedRecords int64   `json:"priced_records"` // of which with a cost
	USD           float64 `json:"usd"`
	Share         float64 `json:"share"`
}

// SpendTraces lists the traces that cost the most, found in bounded
// memory as the largest traces are (see the package doc).
type SpendTraces struct {
	PricedRecords int64   `json:"priced_records"` // priced records with a trace_id
	USD           float64 `json:"usd"`            // their spend
	Share         float64 `json:"share"`          // of the whole spend
	Tracked       int     `json:"tracked"`        // traces held by the counter
	// Exact is true when the traces with a cost never exceeded the
	// counter's capacity; otherwise each trace's spend may be too high by
	// its max_overcount_usd, and by at most MaxOvercountUSD.
	Exact           bool         `json:"exact"`
	MaxOvercountUSD float64      `json:"max_overcount_usd"`
	Top             []TraceSpend `json:"top"`
}

// TraceSpend is one trace and its spend, an upper bound unless the
// counting was exact.
type TraceSpend struct {
	TraceID         string  `json:"trace_id"`
	USD             float64 `json:"usd"`
	Share           float64 `json:"share"`
	MaxOvercountUSD float64 `json:"max_overcount_usd"`
}

// Cache sums the input tokens of the records with usage and the parts of
// them the prompt cache served or took.
type Cache struct {
	InputTokens      int64   `json:"input_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`      // read from the cache
	CacheWriteTokens int64   `json:"cache_write_tokens"` // written to it
	CachedShare      float64 `json:"cached_share"`       // CachedTokens over InputTokens
}

// SpendOverTime is the spend per time bucket, from the bucket of the
// first record's timestamp to that of the last; buckets are aligned to
// multiples of their width since the Unix epoch, in UTC.
type SpendOverTime struct {
	BucketSeconds float64       `json:"bucket_seconds"` // 0 without records
	Buckets       []SpendBucket `json:"buckets"`
}

// SpendBucket is one bucket of [SpendOverTime].
type SpendBucket struct {
	Start   string  `json:"start"`   // RFC 3339 UTC
	Records int64   `json:"records"` // records that started in it
	USD     float64 `json:"usd"`     // what they cost
}

// Traces lists the traces with the most records.
type Traces struct {
	WithTrace    int64 `json:"with_trace"`    // records with a trace_id
	WithoutTrace int64 `json:"without_trace"` // records without one
	Tracked      int   `json:"tracked"`       // distinct traces held by the counter
	// Exact is true when the distinct traces never exceeded the counter's
	// capacity; otherwise each count may be too high by its max_overcount,
	// and by at most MaxOvercount.
	Exact        bool         `json:"exact"`
	MaxOvercount int64        `json:"max_overcount"`
	Top          []TraceCount `json:"top"`
}

// TraceCount is one trace and its record count, an upper bound unless the
// counting was exact.
type TraceCount struct {
	TraceID      string `json:"trace_id"`
	Records      int64  `json:"records"`
	MaxOvercount int64  `json:"max_overcount"`
}

// Duplicates counts call ids seen on more than one record.
type Duplicates struct {
	CheckedIDs int64 `json:"checked_ids"` // distinct call ids held for the check
	Duplicates int64 `json:"duplicates"`  // records whose call_id was seen before
	Unchecked  int64 `json:"unchecked"`   // records past the cap, not checked
	MissingID  int64 `json:"missing_id"`  // records without a call_id
	Cap        int   `json:"cap"`
}

// BadInput is what could not be read as records.
type BadInput struct {
	GarbledLines int64     `json:"garbled_lines"`
	FirstGarbled []BadLine `json:"first_garbled"`
	TornTails    int64     `json:"torn_tails"`
	TornSources  []string  `json:"torn_sources"` // the first few
}

// BadLine is one line that is not a record.
type BadLine struct {
	Source  string `json:"source"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Verdicts of a checklist item.
const (
	Met        = "met"
	NotMet     = "not met"
	NoData     = "no data"
	NotChecked = "not checked"
)

// Check is one item of the evidence-review checklist: what is asked,
// the figure the records give, and whether it is met.
type Check struct {
	ID      string `json:"id"`
	Item    string `json:"item"`
	Figure  string `json:"figure"`
	Verdict string `json:"verdict"` // Met, NotMet, NoData or NotChecked
}
