package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/detect"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Options configures a [Builder]. The zero value is the defaults.
type Options struct {
	// TopTraces is how many of the largest traces are listed; default 10.
	TopTraces int
	// TraceCapacity is how many distinct traces are counted at once;
	// default 10,000. Past it the trace counts become estimates.
	TraceCapacity int
	// MaxKeys caps the distinct speakers, methods, models, error types and
	// pattern tags counted; default 1,000. The rest are counted as "(other)".
	MaxKeys int
	// TopGroups is how many users and tags are listed, by records; the
	// rest are summed as "(other)". Default 10.
	TopGroups int
	// MaxGroups caps the distinct users and the distinct tags counted
	// apart (a latency sketch of a few KiB each); default 1,000. The
	// records of users or tags first seen past it are summed as "(other)".
	MaxGroups int
	// MaxLatencyMethods caps the methods with latency histograms of their
	// own (a few KiB each, and as much again for the time to first chunk
	// of a method with streamed calls); default 100. The rest share one
	// pair, "(other)".
	MaxLatencyMethods int
	// MaxCallIDs caps the distinct call ids held for the duplicate check;
	// default 1,048,576 (about 40 MiB when full). Later records are not checked.
	MaxCallIDs int
	// MaxBadLines is how many garbled lines and torn sources are kept for
	// the report; default 10. All are counted.
	MaxBadLines int
	// MinEvidence is how many records with program_source make the
	// evidence stream sufficient; default 100.
	MinEvidence int
	// NoExamples turns off the example span of each pattern tag, which
	// costs one scan of a record's program_source per tag until found.
	NoExamples bool

	// Prices, when set, prices every record again with this table for the
	// report, whatever cost it carries: a record the table cannot price
	// is unpriced, even if it carries a cost. Nil: the report sums the
	// costs the records carry, as the recorder set them.
	Prices *cost.Table
	// PricesFrom says where Prices came from (a file's name), for the
	// report's provenance.
	PricesFrom string

	// Now gives the report's generated_at; default time.Now.
	Now func() time.Time
	// Tool names what made the report in its provenance; default this
	// module's version as the binary records it, and the Go version.
	Tool string

	// Scores are scores of the records (a store's, a scores file's),
	// reported by the model and the tags of the records they are on.
	Scores []store.Score

	// Progress, when set, is called by [Build] about every 100 ms.
	Progress func(Progress)
	// OnBadLine, when set, is called by [Build] for each garbled line, as
	// well as [Builder.AddBadLine].
	OnBadLine func(source string, line int, err error)
}

// Progress is how far [Build] has read.
type Progress struct {
	Records int64         // records added so far
	Bytes   int64         // bytes read from all sources so far
	Elapsed time.Duration // since Build started
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.TopTraces, 10)
	def(&o.TraceCapacity, 10_000)
	def(&o.MaxKeys, 1000)
	def(&o.MaxLatencyMethods, 100)
	def(&o.TopGroups, 10)
	def(&o.MaxGroups, 1000)
	def(&o.MaxCallIDs, 1<<20)
	def(&o.MaxBadLines, 10)
	def(&o.MinEvidence, 100)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tool == "" {
		o.Tool = toolVersion()
	}
	return o
}

// maxExampleTries bounds the scans made for one tag's example: a tag the
// detector never finds in the code at hand must not cost a scan per record.
const maxExampleTries = 3

// maxExampleRunes is the longest example span shown.
const maxExampleRunes = 80

// Builder gathers the report's figures from records one at a time, in
// memory bounded by its Options whatever the number of records. It is not
// safe for concurrent use.
type Builder struct {
	scores *scoreTally // scores.go
	opts   Options

	records, calls                 int64
	ok, failed, canceled           int64
	first, last                    time.Time
	appended, guidance, access     int64
	withSource, accessWithSource   int64
	references, referencesNoAccess int64
	maxHistory                     int
	sumHistory                     int64

	speakers, methods, models, tags *counter
	examples                        map[string]*example

	errors      map[string]*ErrorType
	errorsOther ErrorType

	attempts       [5]int64 // 1, 2, 3, 4, 5+
	retried, extra int64

	latency      map[string]*methodLatency
	latencyOther methodLatency

	tokens      map[string]*Tokens
	tokensOther Tokens

	providers     map[string]*Provider
	providerOther Provider

	depth        [11]int64 // 0..9, 10+
	depthUnknown int64

	traces                  *topK[int64]
	withTrace, withoutTrace int64

	ids       *idSet
	missingID int64

	garbled     int64
	badLines    []BadLine
	torn        int64
	tornSources []string

	spend spender

	users, tagGroups *grouper

	inputs []Input // the sources ReadFrom read
}

// methodLatency is what one method's records took: their durations, and
// for the streamed ones the time to their first chunk.
type methodLatency struct {
	duration, firstChunk histogram
}

// used reports whether any record was counted.
func (l *methodLatency) used() bool { return l.duration.Count() > 0 || l.firstChunk.Count() > 0 }

type example struct {
	span, callID string
	tries        int
}

// NewBuilder returns an empty builder.
func NewBuilder(opts Options) *Builder {
	o := opts.withDefaults()
	return &Builder{
		opts:     o,
		speakers: newCounter(o.MaxKeys),
		methods:  newCounter(o.MaxKeys),
		models:   newCounter(o.MaxKeys),
		tags:     newCounter(o.MaxKeys),
		examples: make(map[string]*example),
		errors:   make(map[string]*ErrorType),
		latency:  make(map[string]*methodLatency),
		tokens:   make(map[string]*Tokens),

		providers: make(map[string]*Provider),
		traces:    newTopK[int64](o.TraceCapacity),
		ids:       newIDSet(o.MaxCallIDs),
		spend:     newSpender(o),
		users:     newGrouper(o.MaxGroups),
		tagGroups: newGrouper(o.MaxGroups),
		scores:    newScoreTally(o.Scores),
	}
}

// label names an empty key.
func label(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Add counts one record. It keeps no reference to r.
func (b *Builder) Add(r record.Record) {
	b.records++
	b.scores.add(&r)
	n := max(r.Attempts, 1)
	b.calls += int64(n)
	b.attempts[min(n, 5)-1]++
	if n > 1 {
		b.retried++
		b.extra += int64(n - 1)
	}

	switch {
	case r.Outcome.OK:
		b.ok++
	case r.Outcome.Status == record.StatusCanceled:
		b.failed++
		b.canceled++
	default:
		b.failed++
	}
	if !r.Outcome.OK {
		b.addError(r)
	}
	t, err := record.ParseTime(r.Timestamp)
	timed := err == nil
	if timed {
		if b.first.IsZero() || t.Before(b.first) {
			b.first = t
		}
		if b.last.IsZero() || t.After(b.last) {
			b.last = t
		}
	}

	b.addHistory(r)
	b.speakers.add(label(r.Speaker), 1)
	method := label(r.MethodName)
	b.methods.add(method, 1)
	model := label(r.Model)
	b.models.add(model, 1)

	timedCall := r.DurationMS > 0 && !math.IsInf(r.DurationMS, 0)
	streamed := r.TimeToFirstChunkMS > 0 && !math.IsInf(r.TimeToFirstChunkMS, 0)
	if timedCall || streamed {
		l := b.latencyOf(method)
		if timedCall {
			l.duration.add(r.DurationMS)
		}
		if streamed {
			l.firstChunk.add(r.TimeToFirstChunkMS)
		}
	}
	if r.Usage != nil {
		t := b.tokensOf(model)
		t.Records++
		t.InputTokens += int64(r.Usage.InputTokens)
		t.OutputTokens += int64(r.Usage.OutputTokens)
		t.TotalTokens += int64(r.Usage.TotalTokens)
		t.CachedTokens += int64(r.Usage.CachedTokens)
		t.CacheWriteTokens += int64(r.Usage.CacheWriteTokens)
	}
	b.addSpend(&r, model, n, t, timed) // r.Cost is the report's price from here
	b.users.add(label(r.UserID), &r)
	if len(r.Tags) == 0 {
		b.tagGroups.add(label(""), &r)
	}
	for i, tag := range r.Tags {
		if !slices.Contains(r.Tags[:i], tag) { // a damaged record may repeat one
			b.tagGroups.add(label(tag), &r)
		}
	}
	p := b.providerOf(r.MethodName)
	p.Records++
	p.Calls += int64(n)
	if !r.Outcome.OK {
		p.Errors++
	}
	if r.Usage != nil {
		p.InputTokens += int64(r.Usage.InputTokens)
		p.OutputTokens += int64(r.Usage.OutputTokens)
		p.TotalTokens += int64(r.Usage.TotalTokens)
	}

	switch {
	case r.Depth == nil || *r.Depth < 0:
		b.depthUnknown++
	default:
		b.depth[min(*r.Depth, 10)]++
	}

	if r.TraceID == "" {
		b.withoutTrace++
	} else {
		b.withTrace++
		b.traces.add(r.TraceID, 1)
	}
	if r.CallID == "" {
		b.missingID++
	} else {
		b.ids.add(r.CallID)
	}
}

func (b *Builder) addError(r record.Record) {
	typ := r.FailureType()
	if typ == "" {
		typ = record.ErrorUnknown
	}
	typ = keyOf(typ)
	e, ok := b.errors[typ]
	if !ok {
		if len(b.errors) >= b.opts.MaxKeys {
			e = &b.errorsOther
		} else {
			e = &ErrorType{Type: typ}
			b.errors[typ] = e
		}
	}
	e.Count++
	if r.Outcome.Retriable {
		e.Retriable++
	}
}

func (b *Builder) latencyOf(method string) *methodLatency {
	method = keyOf(method)
	l, ok := b.latency[method]
	if !ok {
		if len(b.latency) >= b.opts.MaxLatencyMethods {
			return &b.latencyOther
		}
		l = new(methodLatency)
		b.latency[method] = l
	}
	return l
}

func (b *Builder) tokensOf(model string) *Tokens {
	model = keyOf(model)
	t, ok := b.tokens[model]
	if !ok {
		if len(b.tokens) >= b.opts.MaxKeys {
			return &b.tokensOther
		}
		t = &Tokens{Model: model}
		b.tokens[model] = t
	}
	return t
}

func (b *Builder) providerOf(method string) *Provider {
	name := keyOf(label(record.ProviderOf(method))) // "(none)", as for every missing name
	p, ok := b.providers[name]
	if !ok {
		if len(b.providers) >= b.opts.MaxKeys {
			return &b.providerOther
		}
		p = &Provider{Name: name}
		b.providers[name] = p
	}
	return p
}

func (b *Builder) addHistory(r record.Record) {
	if r.HistoryRecordAppended {
		b.appended++
	}
	if r.HistoryGuidance {
		b.guidance++
	}
	if r.HistoryAccessDetected {
		b.access++
	}
	b.maxHistory = max(b.maxHistory, r.ConversationHistorySize)
	b.sumHistory += int64(max(r.ConversationHistorySize, 0))
	if r.ProgramSource != "" {
		b.withSource++
		if r.HistoryAccessDetected {
			b.accessWithSource++
		}
		if strings.Contains(r.ProgramSource, detect.DefaultName) {
			b.references++
			if !r.HistoryAccessDetected {
				b.referencesNoAccess++
			}
		}
	}

	var seen detect.TagSet
	var wanted []detect.Tag
	for _, name := range r.HistoryQueryPatterns {
		tag, known := detect.ParseTag(name)
		if known {
			if seen.Has(tag) {
				continue // a tag counts once per record
			}
			seen = seen.With(tag)
		}
		b.tags.add(name, 1)
		if !known || b.opts.NoExamples || r.ProgramSource == "" {
			continue
		}
		ex := b.examples[name]
		if ex == nil {
			ex = new(example)
			b.examples[name] = ex
		}
		if ex.span == "" && ex.tries < maxExampleTries {
			ex.tries++
			wanted = append(wanted, tag)
		}
	}
	if len(wanted) > 0 {
		b.findExamples(r, wanted)
	}
}

// findExamples scans r's program source once for the spans of the tags
// still without an example. The recorder keeps either the model's text or
// a tool call's JSON arguments; in the second case the code is a string
// inside the JSON, and the spans are taken from that string.
func (b *Builder) findExamples(r record.Record, tags []detect.Tag) {
	for _, src := range codeTexts(r.ProgramSource) {
		res := detect.ScanOutput(src)
		for _, tag := range tags {
			ex := b.examples[tag.String()]
			if ex.span != "" {
				continue
			}
			for _, f := range res.Findings {
				if f.Tag != tag {
					continue
				}
				if span := spanOf(src, f.Line, f.EndLine); span != "" {
					ex.span, ex.callID = span, keyOf(r.CallID)
					break
				}
			}
		}
	}
}

// maxCodeTexts bounds the strings taken from one tool call's arguments.
const maxCodeTexts = 8

// codeTexts returns the texts of src to scan: the string values of a JSON
// object or array that mention the history (a tool call's arguments), or
// else src itself.
func codeTexts(src string) []string {
	t := strings.TrimSpace(src)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return []string{src}
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return []string{src}
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		if len(out) >= maxCodeTexts {
			return
		}
		switch x := v.(type) {
		case string:
			if strings.Contains(x, detect.DefaultName) {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys) // the same example on every run
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	if len(out) == 0 {
		return []string{src}
	}
	return out
}

// spanOf returns lines from..to (1-based) of src as one line: spaces
// collapsed, control characters dropped, at most maxExampleRunes. A finding
// runs from where the history is named to the operation that earned its
// tag, which is on its last line: when the whole span does not fit, the
// first line and the last are kept, joined by " … ", so the example still
// shows the code that earned the tag (".last(3)" at the end of a chain).
func spanOf(src string, from, to int) string {
	if from <= 0 {
		return ""
	}
	to = max(to, from)
	start := 0
	for line := 1; line < from; line++ {
		i := strings.IndexByte(src[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	var lines []string
	rest := src[start:]
	for line := from; line <= to && rest != ""; line++ {
		l, after, _ := strings.Cut(rest, "\n")
		// Only the first few hundred bytes of a line can be shown.
		lines = append(lines, l[:min(len(l), 16*maxExampleRunes)])
		rest = after
	}
	if len(lines) == 0 {
		return ""
	}
	whole := oneLine(strings.Join(lines, "\n"), 4*maxExampleRunes)
	if len(lines) == 1 || utf8.RuneCountInString(whole) <= maxExampleRunes {
		return oneLine(whole, maxExampleRunes)
	}
	const sep = " … "
	last := oneLine(lines[len(lines)-1], 4*maxExampleRunes)
	if n := utf8.RuneCountInString(last); n > maxExampleRunes/2 {
		r := []rune(last)
		last = "…" + strings.TrimLeft(string(r[n-maxExampleRunes/2+1:]), " ")
	}
	head := oneLine(lines[0], maxExampleRunes-utf8.RuneCountInString(sep)-utf8.RuneCountInString(last))
	return head + sep + last
}

// AddBadLine counts a line of source that is not a record; the first few
// are kept for the report.
func (b *Builder) AddBadLine(source string, line int, err error) {
	b.garbled++
	if len(b.badLines) < b.opts.MaxBadLines {
		msg := "garbled line"
		if err != nil {
			msg = err.Error()
		}
		b.badLines = append(b.badLines, BadLine{Source: keyOf(source), Line: line, Message: oneLine(msg, 200)})
	}
}

// AddTorn counts a source that ended in a torn line, as a crash in the
// middle of a write leaves it.
func (b *Builder) AddTorn(source string) {
	b.torn++
	if len(b.tornSources) < b.opts.MaxBadLines {
		b.tornSources = append(b.tornSources, keyOf(source))
	}
}

// oneLine makes s one line of at most n runes: spaces collapsed, control
// characters and invalid UTF-8 dropped.
func oneLine(s string, n int) string {
	s = strings.Map(func(c rune) rune {
		switch {
		case c == utf8.RuneError:
			return -1
		case unicode.IsControl(c):
			return ' '
		}
		return c
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// rate is n/d, 0 when d is 0.
func rate(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Report returns a snapshot of the figures so far. The builder can go on
// adding records afterwards.
func (b *Builder) Report() *Report {
	r := &Report{Version: 1, Scores: b.scores.report()}
	r.Provenance = Provenance{
		GeneratedAt: record.FormatTime(b.opts.Now()),
		Tool:        b.opts.Tool,
		Inputs:      slices.Clone(b.inputs),
		BadLines:    b.garbled,
	}
	if r.Provenance.Inputs == nil {
		r.Provenance.Inputs = []Input{}
	}
	r.Provenance.PriceTables = names(b.spend.sum.Tables, 0)
	if b.opts.Prices != nil {
		r.Provenance.RepricedWith = b.opts.Prices.Name()
		r.Provenance.PricesFrom = b.opts.PricesFrom
	}
	for _, in := range b.inputs {
		r.Provenance.Lines += in.Lines
	}
	r.Summary = Summary{
		Records:         b.records,
		Calls:           b.calls,
		OKRecords:       b.ok,
		ErrorRecords:    b.failed,
		CanceledRecords: b.canceled,
	}
	if !b.first.IsZero() {
		r.Summary.FirstTimestamp = record.FormatTime(b.first)
		r.Summary.LastTimestamp = record.FormatTime(b.last)
		r.Summary.SpanSeconds = math.Round(b.last.Sub(b.first).Seconds()*1000) / 1000
	}
	r.History = History{
		Appended:                b.appended,
		AppendRate:              rate(b.appended, b.records),
		Guidance:                b.guidance,
		GuidanceRate:            rate(b.guidance, b.records),
		Access:                  b.access,
		AccessRate:              rate(b.access, b.records),
		WithProgramSource:       b.withSource,
		AccessWithProgramSource: b.accessWithSource,
		AccessRateProgramSource: rate(b.accessWithSource, b.withSource),
		ReferencesHistory:       b.references,
		ReferencesWithoutAccess: b.referencesNoAccess,
		MaxHistorySize:          b.maxHistory,
		MeanHistorySize:         math.Round(rate(b.sumHistory, b.records)*100) / 100,
	}
	r.Patterns = b.patterns()
	r.Speakers = withOther(b.speakers)
	r.Methods = withOther(b.methods)
	r.Models = withOther(b.models)
	r.Providers = b.providerSums()
	r.Errors = b.errorTypes()
	r.Retries = Retries{RetriedRecords: b.retried, ExtraAttempts: b.extra}
	for i, n := range b.attempts {
		name := strconv.Itoa(i + 1)
		if i == len(b.attempts)-1 {
			name += "+"
		}
		r.Retries.Histogram = append(r.Retries.Histogram, Count{Name: name, Count: n})
	}
	r.Latency = b.latencies()
	r.Tokens = b.tokenSums()
	r.Spend = b.spendReport()
	r.Users = b.users.top(b.opts.TopGroups)
	r.Tags = b.tagGroups.top(b.opts.TopGroups)
	for i, n := range b.depth {
		name := strconv.Itoa(i)
		if i == len(b.depth)-1 {
			name += "+"
		}
		r.Depth = append(r.Depth, Count{Name: name, Count: n})
	}
	r.Depth = append(r.Depth, Count{Name: "unknown", Count: b.depthUnknown})
	r.Traces = Traces{
		WithTrace:    b.withTrace,
		WithoutTrace: b.withoutTrace,
		Tracked:      len(b.traces.heap),
		Exact:        !b.traces.replaced,
		Top:          []TraceCount{},
	}
	for _, e := range b.traces.top(b.opts.TopTraces) {
		r.Traces.Top = append(r.Traces.Top, TraceCount{TraceID: e.key, Records: e.count, MaxOvercount: e.err})
	}
	if b.traces.replaced {
		r.Traces.MaxOvercount = b.traces.minCount()
	}
	r.Duplicates = Duplicates{
		CheckedIDs: int64(len(b.ids.seen)),
		Duplicates: b.ids.dups,
		Unchecked:  b.ids.unchecked,
		MissingID:  b.missingID,
		Cap:        b.opts.MaxCallIDs,
	}
	r.BadInput = BadInput{
		GarbledLines: b.garbled,
		FirstGarbled: slices.Clone(b.badLines),
		TornTails:    b.torn,
		TornSources:  slices.Clone(b.tornSources),
	}
	if r.BadInput.FirstGarbled == nil {
		r.BadInput.FirstGarbled = []BadLine{}
	}
	if r.BadInput.TornSources == nil {
		r.BadInput.TornSources = []string{}
	}
	r.Checklist = b.checklist(r)
	r.Notes = b.notes(r)
	return r
}

func withOther(c *counter) []Count {
	out := c.sorted()
	if c.other > 0 {
		out = append(out, Count{Name: "(other)", Count: c.other})
	}
	return out
}

// patterns lists the known tags in their stable order, then any other
// names, by count.
func (b *Builder) patterns() []Pattern {
	out := []Pattern{}
	for _, c := range withOther(b.tags) {
		p := Pattern{Tag: c.Name, Records: c.Count}
		if ex := b.examples[c.Name]; ex != nil {
			p.Example, p.ExampleCallID = ex.span, ex.callID
		}
		out = append(out, p)
	}
	rank := func(name string) int {
		if t, ok := detect.ParseTag(name); ok {
			return int(t)
		}
		return len(detect.AllTags())
	}
	slices.SortStableFunc(out, func(a, b Pattern) int { return rank(a.Tag) - rank(b.Tag) })
	return out
}

func (b *Builder) errorTypes() []ErrorType {
	out := []ErrorType{}
	for _, e := range b.errors {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b ErrorType) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Type, b.Type))
	})
	if b.errorsOther.Count > 0 {
		o := b.errorsOther
		o.Type = "(other)"
		out = append(out, o)
	}
	return out
}

func latencyOf(method string, l *methodLatency) Latency {
	ms := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	h, fc := &l.duration, &l.firstChunk
	out := Latency{
		Method:          method,
		Records:         h.Count(),
		P50MS:           ms(h.quantile(0.50)),
		P90MS:           ms(h.quantile(0.90)),
		P99MS:           ms(h.quantile(0.99)),
		MaxMS:           ms(h.Max()),
		FirstChunkCount: fc.Count(),
		FirstChunkP50MS: ms(fc.quantile(0.50)),
		FirstChunkP95MS: ms(fc.quantile(0.95)),
		FirstChunkMaxMS: ms(fc.Max()),
	}
	if h.Count() > 0 {
		out.MeanMS = ms(h.sum / float64(h.Count()))
	}
	return out
}

func (b *Builder) latencies() []Latency {
	out := []Latency{}
	for m, l := range b.latency {
		out = append(out, latencyOf(m, l))
	}
	slices.SortFunc(out, func(a, b Latency) int {
		return cmp.Or(cmp.Compare(b.Records, a.Records), cmp.Compare(b.FirstChunkCount, a.FirstChunkCount), strings.Compare(a.Method, b.Method))
	})
	if b.latencyOther.used() {
		out = append(out, latencyOf("(other)", &b.latencyOther))
	}
	return out
}

func (b *Builder) tokenSums() []Tokens {
	out := []Tokens{}
	for _, t := range b.tokens {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Tokens) int {
		return cmp.Or(cmp.Compare(b.TotalTokens, a.TotalTokens), strings.Compare(a.Model, b.Model))
	})
	if b.tokensOther.Records > 0 {
		o := b.tokensOther
		o.Model = "(other)"
		out = append(out, o)
	}
	for i := range out {
		out[i].CachedShare = rate(out[i].CachedTokens, out[i].InputTokens)
	}
	return out
}

func (b *Builder) providerSums() []Provider {
	out := []Provider{}
	for _, p := range b.providers {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Provider) int {
		return cmp.Or(cmp.Compare(b.Records, a.Records), strings.Compare(a.Name, b.Name))
	})
	if b.providerOther.Records > 0 {
		o := b.providerOther
		o.Name = "(other)"
		out = append(out, o)
	}
	return out
}

// percent formats n/d as a percentage with one decimal, never rounding
// to 100% what is not all, nor to 0% what is not none.
func percent(n, d int64) string {
	if d == 0 {
		return "–"
	}
	if n == d {
		return "100%"
	}
	p := math.Round(float64(n)*1000/float64(d)) / 10
	if n < d {
		p = min(p, 99.9)
	}
	if n > 0 {
		p = max(p, 0.1)
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

func (b *Builder) checklist(r *Report) []Check {
	var out []Check
	add := func(id, item, figure, verdict string) {
		out = append(out, Check{ID: id, Item: item, Figure: figure, Verdict: verdict})
	}
	whole := func(n, d int64) string {
		switch {
		case d == 0:
			return NoData
		case n == d:
			return Met
		}
		return NotMet
	}

	add("append_success", "History record appended for every call (100%)",
		fmt.Sprintf("%s (%s of %s)", percent(b.appended, b.records), num(b.appended), plural(b.records, "record", "records")),
		whole(b.appended, b.records))
	add("guidance_presence", "History guidance in every generated call's prompt (100%)",
		fmt.Sprintf("%s (%s of %s)", percent(b.guidance, b.records), num(b.guidance), plural(b.records, "record", "records")),
		whole(b.guidance, b.records))

	v := NoData
	if b.references > 0 {
		v = Met
		if b.referencesNoAccess > 0 {
			v = NotMet
		}
	}
	add("access_detected", "History access detected for every call whose code references conversation_history",
		fmt.Sprintf("records whose program_source mentions it: %s, of which without history_access_detected: %s", num(b.references), num(b.referencesNoAccess)), v)

	ids := b.ids
	fig := fmt.Sprintf("duplicate call_ids: %s, records with a call_id: %s", num(ids.dups), num(b.records-b.missingID))
	switch {
	case b.records == 0:
		v = NoData
	case ids.dups > 0:
		v = NotMet
	case ids.unchecked > 0:
		v = NotChecked
		fig += fmt.Sprintf("; not checked past %s distinct ids (%s records unchecked)", num(int64(b.opts.MaxCallIDs)), num(ids.unchecked))
	default:
		v = Met
	}
	add("no_duplicates", "One record per logical call (no duplicate call_id)", fig, v)

	fig = fmt.Sprintf("retried records: %s, extra attempts: %s, duplicate call_ids: %s", num(b.retried), num(b.extra), num(ids.dups))
	switch {
	case ids.dups > 0:
		v = NotMet
	case b.retried == 0:
		v = NoData
		fig = "no record has attempts > 1"
	default:
		v = Met
	}
	add("retries_collapsed", "Retries folded into one record per call", fig, v)

	switch {
	case b.records == 0:
		v = NoData
	case b.withSource >= int64(b.opts.MinEvidence):
		v = Met
	default:
		v = NotMet
	}
	fig = fmt.Sprintf("records with program_source: %s, of which with history access detected: %s", num(b.withSource), num(b.accessWithSource))
	if v == NotMet && b.records < int64(b.opts.MinEvidence) {
		// Not a fault found: the history is too short to judge by.
		fig += fmt.Sprintf("; only %s in all, fewer than the %d needed: a short run (the demo's) cannot meet it", plural(b.records, "record", "records"), b.opts.MinEvidence)
	}
	add("evidence_stream", fmt.Sprintf("Sufficient evidence stream (at least %d records with program_source)", b.opts.MinEvidence), fig, v)
	return out
}

func (b *Builder) notes(r *Report) []string {
	notes := []string{}
	for _, c := range []struct {
		name string
		c    *counter
	}{{"speakers", b.speakers}, {"methods", b.methods}, {"models", b.models}, {"pattern tags", b.tags}} {
		if c.c.other > 0 {
			notes = append(notes, fmt.Sprintf("More than %d distinct %s: the rest are counted under (other).", b.opts.MaxKeys, c.name))
		}
	}
	if b.errorsOther.Count > 0 {
		notes = append(notes, fmt.Sprintf("More than %d distinct error types: the rest are counted under (other).", b.opts.MaxKeys))
	}
	if b.latencyOther.used() {
		notes = append(notes, fmt.Sprintf("Latency is kept per method for the first %d methods; the rest share (other).", b.opts.MaxLatencyMethods))
	}
	if b.tokensOther.Records > 0 {
		notes = append(notes, fmt.Sprintf("More than %d distinct models with usage: the rest are summed under (other).", b.opts.MaxKeys))
	}
	if !r.Traces.Exact {
		notes = append(notes, fmt.Sprintf("More than %d distinct traces: trace counts are upper bounds, each too high by at most %d records.", b.opts.TraceCapacity, r.Traces.MaxOvercount))
	}
	notes = append(notes, b.spendNotes(r)...)
	for _, in := range b.inputs {
		if in.UnresolvedArgs > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d records (the first on line %d) begin their args with an earlier record that is missing or damaged (args_prefix): their args hold only what they add. The figures do not depend on args.", in.Name, in.UnresolvedArgs, in.FirstUnresolvedLine))
		}
	}
	if b.ids.unchecked > 0 {
		notes = append(notes, fmt.Sprintf("Duplicate call ids were checked for the first %d distinct ids only; %d records were not checked.", b.opts.MaxCallIDs, b.ids.unchecked))
	}
	return notes
}

// modulePath is this module's path, looked for in the binary's build info.
const modulePath = "github.com/llmhistory/llmhistory"

// toolVersion names what is making the report: this module at the version
// the binary was built from (a release tag, a pseudo-version, or the
// commit of a checkout), and the Go version.
func toolVersion() string {
	version := "of unknown version"
	if bi, ok := debug.ReadBuildInfo(); ok {
		m := &bi.Main
		if m.Path != modulePath {
			m = nil
			for _, d := range bi.Deps {
				if d.Path == modulePath {
					m = d
					break
				}
			}
		}
		if m != nil {
			version = m.Version
			if m.Replace != nil && m.Replace.Version != "" {
				version = m.Replace.Version
			}
		}
		if version == "" || version == "(devel)" {
			version = "devel"
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" {
				version = "commit " + rev
				if modified == "true" {
					version += " with changes"
				}
			}
		}
	}
	return "llmhistory " + version + " (" + runtime.Version() + ")"
}
