package cost

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The generated table's invariants, which the generator is meant to keep
// and a hand edit of table_gen.go could break.
func TestGeneratedTable(t *testing.T) {
	if !regexp.MustCompile(`^litellm-\d{4}-\d{2}-\d{2}$`).MatchString(defaultName) {
		t.Errorf("table name %q is not litellm-YYYY-MM-DD", defaultName)
	}
	if !strings.Contains(defaultSource, "BerriAI/litellm") {
		t.Errorf("source %q does not name LiteLLM", defaultSource)
	}
	names := make([]string, len(defaultEntries))
	for i, e := range defaultEntries {
		names[i] = e.name
		if canonicalKey(e.name) != e.name {
			t.Errorf("%q is not canonical: a lookup of its own name would not find it", e.name)
		}
		for _, r := range []Rates{e.price.Rates, e.price.LongContext} {
			for _, v := range []float64{r.Input, r.Output, r.CacheRead, r.CacheWrite, r.CacheWrite1h, r.Reasoning} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e-3 {
					t.Errorf("%s: rate %v is not a per-token price", e.name, v)
				}
			}
		}
		if (e.price.LongContextAbove == 0) != (e.price.LongContext == Rates{}) {
			t.Errorf("%s: a long-context threshold without rates, or rates without one", e.name)
		}
		// Claude's cache rates are all there, the 1-hour write at 2× input.
		if strings.Contains(e.name, "claude-") {
			p := e.price
			if p.CacheRead == 0 || p.CacheWrite == 0 || math.Abs(p.CacheWrite1h-2*p.Input) > 1e-12*p.Input {
				t.Errorf("%s: cache rates %+v; want read, write and a 1-hour write of 2× input", e.name, p.Rates)
			}
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("entries are not sorted and unique")
	}
	// The models a recorder meets most are all there.
	for _, m := range []string{
		"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o3", "o4-mini", "text-embedding-3-small", "text-embedding-3-large",
		"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.0-flash", "gemini-embedding-001", "gemini/gemini-2.5-pro",
		"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001",
		// Released after the table of 2026-03-03.
		"gpt-5.4", "gpt-5.4-mini", "gpt-5.5", "claude-opus-4-7", "claude-sonnet-4-6", "claude-opus-4-6",
		// Bedrock, for the provider that will record its calls.
		"anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6", "eu.anthropic.claude-opus-4-7",
	} {
		if _, ok := Builtin().prices[m]; !ok {
			t.Errorf("%s is not in the table", m)
		}
	}
	// Small, as promised: tens of KB, not LiteLLM's 1.4 MB.
	if fi, err := os.Stat("table_gen.go"); err != nil || fi.Size() > 64<<10 {
		t.Errorf("table_gen.go: %v, %v; want under 64 KiB", fi, err)
	}
}

// The package documentation names the table and the commit it came from:
// a regeneration must update it.
func TestDocNamesTheTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	commit := regexp.MustCompile(`commit ([0-9a-f]{40})`).FindStringSubmatch(defaultSource)
	if commit == nil {
		t.Fatalf("source %q names no commit", defaultSource)
	}
	for _, s := range []string{`"` + defaultName + `"`, commit[1]} {
		if !strings.Contains(string(doc), s) {
			t.Errorf("doc.go does not name %s: update it with the table", s)
		}
	}
}
