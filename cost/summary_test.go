package cost_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// The priced records are counted by the table that priced them, so that a
// report can say whose prices its total is made of.
func TestSummaryTables(t *testing.T) {
	usage := &record.Usage{InputTokens: 10}
	var s cost.Summary
	for _, c := range []*record.Cost{
		{USD: 0.25, Table: "litellm-2026-03-03"},
		{USD: 0.5, Table: "acme-2026-11"},
		{USD: 0.125, Table: "litellm-2026-03-03"},
		nil, // unpriced: not a table's
	} {
		s.Add(&record.Record{Model: "m", Usage: usage, Cost: c})
	}
	assert.Equal(t, map[string]int{"litellm-2026-03-03": 2, "acme-2026-11": 1}, s.Tables, "Tables")
	if s.Priced != 3 || s.Unpriced != 1 || s.USD != 0.875 {
		t.Errorf("Summary = %+v; want 3 priced ($0.875), 1 unpriced", s)
	}
}

// With MaxNames, the names held are bounded whatever the input: the rest
// are counted under OtherNames, and a long name is cut to 256 bytes on a
// rune boundary. Without it every name is kept whole.
func TestSummaryMaxNames(t *testing.T) {
	usage := &record.Usage{InputTokens: 10}
	long := strings.Repeat("é", 200) // 400 bytes
	s := cost.Summary{MaxNames: 2}
	var unbounded cost.Summary
	for _, m := range []string{"a", "b", "c", "a", "d", long, long} {
		r := record.Record{Model: m, Usage: usage}
		s.Add(&r)
		unbounded.Add(&r)
	}
	assert.Equal(t, map[string]int{"a": 2, "b": 1, cost.OtherNames: 4}, s.UnpricedModels, "bounded UnpricedModels")
	if s.Unpriced != 7 {
		t.Errorf("Unpriced = %d, want 7: the bound cuts names, never counts", s.Unpriced)
	}
	if len(unbounded.UnpricedModels) != 5 || unbounded.UnpricedModels[long] != 2 {
		t.Errorf("unbounded UnpricedModels = %d names, %d of the long one; want 5 and 2", len(unbounded.UnpricedModels), unbounded.UnpricedModels[long])
	}

	cut := cost.Summary{MaxNames: 10}
	for range 2 {
		cut.Add(&record.Record{Model: long, Usage: usage})
	}
	want := strings.Repeat("é", 128) + "…" // 256 bytes, whole runes
	assert.Equal(t, map[string]int{want: 2}, cut.UnpricedModels, "a long name")

	tables := cost.Summary{MaxNames: 1}
	for i := range 3 {
		tables.Add(&record.Record{Cost: &record.Cost{USD: 1, Table: fmt.Sprint("t", i)}})
	}
	assert.Equal(t, map[string]int{"t0": 1, cost.OtherNames: 2}, tables.Tables, "bounded Tables")
}
