package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// streamedRecords are 1,000 streamed calls of anthropic.messages.create
// whose first chunks came after 1, 2, … 1,000 ms (in a shuffled order),
// 500 calls of the same method that were not streamed, and 3 unstreamed
// calls of openai.chat.completions.create.
func streamedRecords() []record.Record {
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []record.Record
	for i, v := range rng.Perm(1000) {
		r := call(fmt.Sprintf("s%d", i), i%60)
		r.MethodName = "anthropic.messages.create"
		r.TimeToFirstChunkMS = float64(v + 1)
		r.DurationMS = float64(v+1) + 2000
		recs = append(recs, r)
	}
	for i := range 500 {
		r := call(fmt.Sprintf("u%d", i), i%60)
		r.MethodName = "anthropic.messages.create"
		r.DurationMS = 1500
		recs = append(recs, r)
	}
	for i := range 3 {
		recs = append(recs, call(fmt.Sprintf("o%d", i), i))
	}
	return recs
}

// The time to first chunk of each method's streamed calls: how many, and
// p50, p95 and max, the quantiles within the histogram's 1% of the exact
// nearest-rank value, over the streamed records only.
func TestFirstChunk(t *testing.T) {
	r := build(t, report.Options{}, encode(t, streamedRecords()...))
	require.Len(t, r.Latency, 2)
	an, oa := r.Latency[0], r.Latency[1]
	assert.Equal(t, "anthropic.messages.create", an.Method)
	assert.Equal(t, int64(1500), an.Records, "every record with a duration")
	assert.Equal(t, int64(1000), an.FirstChunkCount, "the streamed records only")
	assert.InEpsilon(t, 500, an.FirstChunkP50MS, 0.01+1e-6, "the 500th of 1..1000")
	assert.InEpsilon(t, 950, an.FirstChunkP95MS, 0.01+1e-6, "the 950th of 1..1000")
	assert.Equal(t, 1000.0, an.FirstChunkMaxMS, "the maximum is exact")

	assert.Equal(t, "openai.chat.completions.create", oa.Method)
	assert.Equal(t, int64(3), oa.Records)
	assert.Zero(t, oa.FirstChunkCount)
	assert.Zero(t, oa.FirstChunkP50MS)
	assert.Zero(t, oa.FirstChunkP95MS)
	assert.Zero(t, oa.FirstChunkMaxMS)
}

// A time to first chunk that is not a positive finite duration is not a
// streamed call; a streamed record without a duration still counts for its
// first chunk, and its method's duration figures stay 0, not NaN; a figure
// past the histogram's range is counted at its end.
func TestFirstChunkOddValues(t *testing.T) {
	b := report.NewBuilder(report.Options{})
	for i, v := range []float64{0, -5, math.NaN(), math.Inf(1), math.Inf(-1), 12.5, 7.5} {
		r := call(fmt.Sprint(i), 0)
		r.TimeToFirstChunkMS = v
		b.Add(r)
	}
	r := call("x", 0)
	r.MethodName = "gemini.models.streamGenerateContent"
	r.DurationMS = 0
	r.TimeToFirstChunkMS = 300
	b.Add(r)
	// Past 10⁹ ms (11.5 days) a figure is damage, counted as 10⁹ ms: never
	// a maximum or a mean of +Inf, which JSON cannot write.
	huge := call("huge", 0)
	huge.MethodName = "http.POST /slow"
	huge.DurationMS, huge.TimeToFirstChunkMS = 1e308, 1e308
	b.Add(huge)
	b.Add(huge)
	rep := b.Report()
	require.Len(t, rep.Latency, 3)
	assert.Equal(t, report.Latency{
		Method: "http.POST /slow", Records: 2, P50MS: 1e9, P90MS: 1e9, P99MS: 1e9, MaxMS: 1e9, MeanMS: 1e9,
		FirstChunkCount: 2, FirstChunkP50MS: 1e9, FirstChunkP95MS: 1e9, FirstChunkMaxMS: 1e9,
	}, rep.Latency[1])
	assert.Equal(t, report.Latency{
		Method: "openai.chat.completions.create", Records: 7, P50MS: 100, P90MS: 100, P99MS: 100, MaxMS: 100, MeanMS: 100,
		FirstChunkCount: 2, FirstChunkP50MS: 7.5, FirstChunkP95MS: 12.5, FirstChunkMaxMS: 12.5,
	}, rep.Latency[0])
	assert.Equal(t, report.Latency{
		Method: "gemini.models.streamGenerateContent", FirstChunkCount: 1, FirstChunkP50MS: 300, FirstChunkP95MS: 300, FirstChunkMaxMS: 300,
	}, rep.Latency[2])

	md, page := formats(t, rep)
	assert.Contains(t, md, "| gemini.models.streamGenerateContent | 0 | – | – | – | – | 1 | 300 ms | 300 ms | 300 ms |")
	assert.Contains(t, page, `<td>gemini.models.streamGenerateContent</td><td class="n">0</td><td class="n">–</td>`)
	assert.Equal(t, 3+3*2, svgCharts(page)["chart-latency"], "no bars for a method without durations")
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js), "no NaN in the JSON")
}

// Past MaxLatencyMethods the streamed calls of the other methods share
// "(other)", as their durations do.
func TestFirstChunkCapped(t *testing.T) {
	b := report.NewBuilder(report.Options{MaxLatencyMethods: 1})
	for i := range 30 {
		r := call(fmt.Sprint(i), 0)
		r.MethodName = fmt.Sprintf("m%d", i%3)
		r.TimeToFirstChunkMS = float64(10 * (i%3 + 1))
		b.Add(r)
	}
	rep := b.Report()
	require.Len(t, rep.Latency, 2)
	assert.Equal(t, "m0", rep.Latency[0].Method)
	assert.Equal(t, int64(10), rep.Latency[0].FirstChunkCount)
	assert.Equal(t, 10.0, rep.Latency[0].FirstChunkMaxMS)
	other := rep.Latency[1]
	assert.Equal(t, "(other)", other.Method)
	assert.Equal(t, int64(20), other.FirstChunkCount)
	assert.InEpsilon(t, 20, other.FirstChunkP50MS, 0.01)
	assert.Equal(t, 30.0, other.FirstChunkMaxMS)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "Latency is kept per method for the first 1 methods")
}

// The time to first chunk quantiles stay within 1% of the exact
// nearest-rank quantile, as the durations' do.
func TestFirstChunkError(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, dist := range []struct {
		name string
		gen  func() float64
	}{
		{"lognormal", func() float64 { return math.Exp(rng.NormFloat64()*1.2 + 6) }},
		{"uniform", func() float64 { return rng.Float64() * 5000 }},
		{"tiny", func() float64 { return 0.002 + rng.Float64()*0.01 }},
	} {
		l, all := latencySamples(dist.gen, func(r *record.Record, v float64) { r.TimeToFirstChunkMS = v })
		require.Equal(t, int64(len(all)), l.FirstChunkCount)
		for _, q := range []struct {
			p   float64
			got float64
		}{{0.5, l.FirstChunkP50MS}, {0.95, l.FirstChunkP95MS}} {
			want := all[int(math.Ceil(q.p*float64(len(all))))-1]
			// Within 1%, and the JSON's rounding to the microsecond.
			assert.InDelta(t, want, q.got, 0.01*want+0.0005+1e-9, "%s p%v", dist.name, q.p*100)
		}
		assert.InDelta(t, all[len(all)-1], l.FirstChunkMaxMS, 0.001)
	}
}

// Markdown and HTML show the time to first chunk in the latency table, in
// human units, only when some record was streamed; the JSON always has
// its keys, 0 without streamed records.
func TestFirstChunkShown(t *testing.T) {
	r := build(t, report.Options{}, encode(t, streamedRecords()...))
	md, page := formats(t, r)
	assert.Contains(t, md, "| Method | Records | p50 | p90 | p99 | max | Streamed | First chunk p50 | First chunk p95 | First chunk max |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	an := r.Latency[0]
	// Durations: p50 2.25 s, p90 2.85 s, p99 2.985 s, max 3 s; first
	// chunk: p50 500 ms, p95 950 ms, max 1 s, each within 1%.
	assert.Regexp(t, `\n\| anthropic\.messages\.create \| 1,500 \| 2\.2\d s \| 2\.8\d s \| (2\.9\d|3|3\.0\d) s \| 3 s \| 1,000 \| (49\d|50\d) ms \| 9[45]\d ms \| 1 s \|\n`, md)
	assert.Contains(t, md, "| openai.chat.completions.create | 3 | 100 ms | 100 ms | 100 ms | 100 ms | 0 | – | – | – |\n")
	assert.Contains(t, md, "Time to first chunk, for the streamed calls only: from the call's start to the first bytes of the response body.")
	assert.Contains(t, page, `<tr><th>Method</th><th class="n">Records</th><th class="n">p50</th><th class="n">p90</th><th class="n">p99</th><th class="n">max</th><th class="n">Streamed</th><th class="n">First chunk p50</th><th class="n">First chunk p95</th><th class="n">First chunk max</th></tr>`)
	assert.Regexp(t, `<td>anthropic\.messages\.create</td><td class="n">1,500</td>(<td class="n">[^<]+</td>){4}<td class="n">1,000</td><td class="n">(49\d|50\d) ms</td><td class="n">9[45]\d ms</td><td class="n">1 s</td></tr>`, page)
	assert.Contains(t, page, "Time to first chunk, for the streamed calls only")
	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var out struct{ Latency []map[string]any }
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	assert.Equal(t, 1000.0, out.Latency[0]["first_chunk_count"])
	assert.Equal(t, an.FirstChunkP95MS, out.Latency[0]["first_chunk_p95_ms"])
	assert.Equal(t, 1000.0, out.Latency[0]["first_chunk_max_ms"])
	assert.Equal(t, 0.0, out.Latency[1]["first_chunk_count"])

	// Without a streamed record: no column, no sentence, the same keys.
	plain := build(t, report.Options{}, encode(t, call("c1", 0), call("c2", 1)))
	md, page = formats(t, plain)
	for _, s := range []string{md, page} {
		assert.NotContains(t, s, "Streamed")
		assert.NotContains(t, s, "First chunk")
		assert.NotContains(t, s, "first chunk")
	}
	assert.Contains(t, md, "| Method | Records | p50 | p90 | p99 | max |\n|---|--:|--:|--:|--:|--:|\n")
	assert.Contains(t, page, `<tr><th>Method</th><th class="n">Records</th><th class="n">p50</th><th class="n">p90</th><th class="n">p99</th><th class="n">max</th></tr>`)
	js.Reset()
	require.NoError(t, plain.WriteJSON(&js))
	out.Latency = nil
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	for _, key := range []string{"p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms", "first_chunk_count", "first_chunk_p50_ms", "first_chunk_p95_ms", "first_chunk_max_ms"} {
		assert.Contains(t, out.Latency[0], key)
	}
	assert.Equal(t, 0.0, out.Latency[0]["first_chunk_count"])
	assert.Equal(t, 0.0, out.Latency[0]["first_chunk_p95_ms"])
}
