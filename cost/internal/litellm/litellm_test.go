package litellm

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A hand-made file in LiteLLM's format, one entry per rule of Parse.
func TestParse(t *testing.T) {
	raw, err := os.ReadFile("testdata/litellm_sample.json")
	if err != nil {
		t.Fatal(err)
	}
	entries, notes, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	var keys []string
	for _, e := range entries {
		got[e.Key] = e
		keys = append(keys, e.Key)
	}
	want := []string{
		"amazon.titan-embed-text-v2:0",      // a Bedrock embedding model
		"anthropic.claude-sonnet-4-6",       // a Bedrock model id, in-region
		"azure/gpt-4o-mini",                 // Azure's own price; azure/gpt-4o is gpt-4o's and dropped
		"claude-3-opus-20240229",            // 1h write corrected
		"claude-sonnet-4-5-20250929",        // tier, 1h writes derived
		"claude-sonnet-4-6",                 // no tier: standard rates across the 1M window
		"ft:gpt-4o-mini-2024-07-18",         // fine-tuned prices kept
		"gemini-2.0-flash-exp",              // a tier of zeros is no tier
		"gemini-2.5-pro",                    // tier; reasoning equal to output dropped
		"gpt-4o",                            // batch rates ignored
		"gpt-5-pro",                         // responses mode
		"meta.llama3-70b-instruct-v1:0",     // Bedrock serves other vendors' models too
		"text-embedding-3-small",            // embedding
		"textembedding-gecko-003",           // '@' read as '-'
		"us.anthropic.claude-sonnet-4-6",    // a US inference profile, at its own (higher) price
		"vertex_ai/claude-3-haiku-20240307", // cache rates derived
		"vertex_ai/claude-opus-4-6",         // @default folded into the plain name
	}
	// Dropped: sample_spec, azure/gpt-4o (same as gpt-4o), gemini/gemini-2.5-pro
	// (same as gemini-2.5-pro: the priority rate is not read), azure/eu/gpt-4o
	// (a deployment type), azure/mistral-large-latest and
	// vertex_ai/mistral-large@2407 (not our families), dall-e-3,
	// gpt-4o-mini-tts and amazon.nova-canvas-v1:0 (not our modes),
	// gpt-4-per-char (no per-token rates), global.anthropic.claude-sonnet-4-6
	// (priced as anthropic.claude-sonnet-4-6), bedrock/us-gov-west-1/... (a
	// region a record cannot tell), claude-sonnet-4-5-20250929-v1:0 (a
	// Bedrock key that is no Bedrock id), anthropic.claude-mythos-preview
	// (priced at 0: no price).
	if !slices.Equal(keys, want) {
		t.Errorf("keys:\n got %q\nwant %q", keys, want)
	}

	if e := got["gemini-2.5-pro"]; e.Above != 200_000 || e.Long != (Rates{Input: 2.5e-06, Output: 1.5e-05, CacheRead: 2.5e-07}) || e.Base.Reasoning != 0 {
		t.Errorf("gemini-2.5-pro: %+v", e)
	}
	if e := got["gemini-2.0-flash-exp"]; e.Above != 0 || e.Base.Reasoning != 3.5e-06 {
		t.Errorf("gemini-2.0-flash-exp: %+v; want no tier and its own reasoning rate", e)
	}
	if e := got["claude-3-opus-20240229"]; e.Base.CacheWrite1h != 3e-05 || e.Base.CacheWrite != 1.875e-05 {
		t.Errorf("claude-3-opus: %+v; want the 1h write at 2× input, 3e-05", e.Base)
	}
	if e := got["claude-sonnet-4-5-20250929"]; e.Base.CacheWrite1h != 6e-06 || e.Long.CacheWrite1h != 1.2e-05 || e.Long.CacheWrite != 7.5e-06 {
		t.Errorf("claude-sonnet-4-5: %+v", e)
	}
	if e := got["claude-sonnet-4-6"]; e.Above != 0 || e.Long != (Rates{}) {
		t.Errorf("claude-sonnet-4-6: %+v; want no long-context tier", e)
	}
	if e := got["us.anthropic.claude-sonnet-4-6"]; e.Base != (Rates{Input: 3.3e-06, Output: 1.65e-05, CacheRead: 3.3e-07, CacheWrite: 4.125e-06, CacheWrite1h: 6.6e-06}) {
		t.Errorf("us.anthropic.claude-sonnet-4-6: %+v", e.Base)
	}
	// Derived rates read as prices do, without binary noise.
	if e := got["vertex_ai/claude-3-haiku-20240307"]; e.Base != (Rates{Input: 2.5e-07, Output: 1.25e-06, CacheRead: 2.5e-08, CacheWrite: 3.125e-07, CacheWrite1h: 5e-07}) {
		t.Errorf("vertex claude-3-haiku: %+v", e.Base)
	}
	joined := strings.Join(notes, "\n")
	for _, n := range []string{"gpt-4-per-char", "not LiteLLM's 6e-06", "vertex_ai/claude-3-haiku-20240307: derived cache read", "anthropic.claude-mythos-preview: input and output priced at 0"} {
		if !strings.Contains(joined, n) {
			t.Errorf("notes do not mention %q:\n%s", n, joined)
		}
	}
}

// Input that is not LiteLLM's file, or whose rates for a kept model are
// not prices, is an error that says what is wrong; the rates of models
// not kept are never read.
func TestParseRejects(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, "cannot unmarshal array"},
		{`null`, "null, not an object"},
		{`{}`, "no model of the recorded providers"},
		{`not json`, "invalid character"},
		{`{"x": {"litellm_provider": "mistral", "mode": "chat", "input_cost_per_token": 1, "output_cost_per_token": 1}}`, "no model of the recorded providers"},
		{`{"gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": "2.5e-06", "output_cost_per_token": 1e-05}}`,
			`model "gpt-4o": input_cost_per_token is "2.5e-06", not a per-token price`},
		{`{"gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": -1e-06, "output_cost_per_token": 1e-05}}`,
			`model "gpt-4o": input_cost_per_token is -1e-06, not a per-token price (0 to 1 dollars)`},
		{`{"gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-06, "output_cost_per_token": 1e400}}`,
			`model "gpt-4o": output_cost_per_token is 1e400, not a per-token price`},
		{`{"gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-06, "output_cost_per_token": 1e-05, "cache_read_input_token_cost": 2}}`,
			`model "gpt-4o": cache_read_input_token_cost is 2, not a per-token price`},
		{`{"gemini-2.5-pro": {"litellm_provider": "gemini", "mode": "chat", "input_cost_per_token": 1e-06, "output_cost_per_token": 1e-05, "input_cost_per_token_above_200k_tokens": {}}}`,
			`model "gemini-2.5-pro": input_cost_per_token_above_200k_tokens is {}, not a per-token price`},
	} {
		_, _, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s): %v; want an error with %q", c.in, err, c.want)
		}
	}
	// Other providers' damage is none of ours.
	entries, _, err := Parse([]byte(`{"x": {"litellm_provider": "mistral", "mode": "chat", "input_cost_per_token": "free"},
		"gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05}}`))
	if err != nil || len(entries) != 1 {
		t.Errorf("Parse: %v, %v; want gpt-4o alone", entries, err)
	}
}

// FuzzParse: Parse never panics, and what it returns is a table: sorted
// unique keys, rates that are prices, a tier only with rates.
func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile("testdata/litellm_sample.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	for _, s := range []string{
		`{}`, `[]`, `null`, ``, "\xef\xbb\xbf{}",
		`{"gpt-4o": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-06, "output_cost_per_token": 1e-05,
		  "input_cost_per_token_above_9999999k_tokens": 1e-05}}`,
		`{"us.anthropic.claude-x": {"litellm_provider": "bedrock", "mode": "chat", "input_cost_per_token": 1e-06, "output_cost_per_token": 0}}`,
		`{"claude-x@default": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-300, "output_cost_per_token": 5e-324}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _, err := Parse(data)
		if err != nil {
			if entries != nil {
				t.Fatalf("Parse: entries and an error")
			}
			return
		}
		for i, e := range entries {
			if i > 0 && entries[i-1].Key >= e.Key {
				t.Fatalf("keys not sorted and unique: %q, %q", entries[i-1].Key, e.Key)
			}
			if e.Above < 0 || (e.Above == 0) != (e.Long == Rates{}) {
				t.Fatalf("%s: tier %d with %+v", e.Key, e.Above, e.Long)
			}
			for _, r := range []Rates{e.Base, e.Long} {
				for _, v := range []float64{r.Input, r.Output, r.CacheRead, r.CacheWrite, r.CacheWrite1h, r.Reasoning} {
					if !(v >= 0 && v <= 2*maxRate) { // Claude's 2× input may pass maxRate
						t.Fatalf("%s: rate %v", e.Key, v)
					}
				}
			}
		}
	})
}
