package cost_test

import (
	"testing"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// The names a recorder meets: a response's model as it is, a dated
// snapshot the table does not list, a Vertex AI resource path, a name the
// table does not know (every rule tried, then given up), and Bedrock's
// ids: a global profile with a version the table does not list (cut, then
// priced as the model), and an inference-profile ARN.
var benchModels = []struct{ name, model string }{
	{"exact", "gpt-4o-2024-08-06"},
	{"snapshot", "gpt-4o-mini-2099-01-01"},
	{"vertex_path", "projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929"},
	{"unknown", "my-prod-deployment-2024-08-06"},
	{"bedrock_global", "global.anthropic.claude-opus-4-7-v1:0"},
	{"bedrock_arn", "arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6"},
}

var benchUsage = record.Usage{InputTokens: 50_000, CachedTokens: 30_000, CacheWriteTokens: 15_000, CacheWrite1hTokens: 5_000, OutputTokens: 2_000, ReasoningTokens: 500}

// BenchmarkCost prices one call, as the recorder does once per record on
// its goroutine: resolution and arithmetic, no allocation.
func BenchmarkCost(b *testing.B) {
	t := cost.Default()
	for _, m := range benchModels {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				t.Cost(m.model, benchUsage)
			}
		})
	}
}

// BenchmarkApply is Cost plus the record.Cost it points the record at.
func BenchmarkApply(b *testing.B) {
	t := cost.Default()
	r := record.Record{Model: "claude-sonnet-4-5-20250929", Usage: &benchUsage}
	b.ReportAllocs()
	for b.Loop() {
		t.Apply(&r)
	}
}

// Pricing a known model does not allocate, whatever rule finds it; Apply
// allocates the one record.Cost.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	tbl := cost.Default()
	tbl.Len() // build the default table outside the count
	for _, m := range benchModels {
		if n := testing.AllocsPerRun(100, func() { tbl.Cost(m.model, benchUsage) }); n != 0 {
			t.Errorf("Cost(%s): %v allocations, want 0", m.name, n)
		}
	}
	r := record.Record{Model: "gpt-4o", Usage: &benchUsage}
	if n := testing.AllocsPerRun(100, func() { tbl.Apply(&r) }); n != 1 {
		t.Errorf("Apply: %v allocations, want 1", n)
	}
}
