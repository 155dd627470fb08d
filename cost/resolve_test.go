package cost_test

import (
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/cost"
)

// Names as providers return them, resolved against the default table. The
// want is the entry's name; "" means unknown.
func TestLookupDefault(t *testing.T) {
	cases := []struct {
		rule, model, want string
	}{
		// Exact names, in any case and with stray space.
		{"exact", "gpt-4o", "gpt-4o"},
		{"case", "GPT-4o", "gpt-4o"},
		{"space", "  gpt-4o\n", "gpt-4o"},
		{"exact embedding", "text-embedding-3-small", "text-embedding-3-small"},

		// Dated snapshots: their own entry when the table has it (its price
		// may differ: gpt-4o-2024-05-13 is $5/M), else the model's.
		{"snapshot listed", "gpt-4o-2024-08-06", "gpt-4o-2024-08-06"},
		{"snapshot listed, other price", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
		{"snapshot not listed", "gpt-4o-2099-01-01", "gpt-4o"},
		{"snapshot of mini", "gpt-4o-mini-2099-01-01", "gpt-4o-mini"},
		{"snapshot of o3-mini", "o3-mini-2099-01-01", "o3-mini"},
		{"legacy MMDD snapshot", "gpt-4-0613", "gpt-4-0613"},
		{"legacy MMDD snapshot not listed", "gpt-4-0999", "gpt-4"},
		{"anthropic date listed", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"},
		{"anthropic date not listed", "claude-sonnet-4-5-20991231", "claude-sonnet-4-5"},
		{"anthropic 3.7", "claude-3-7-sonnet-20250219", "claude-3-7-sonnet-20250219"},
		{"anthropic, released after the old table", "claude-opus-4-7-20260416", "claude-opus-4-7-20260416"},
		{"openai, released after the old table", "gpt-5.5-2026-04-23", "gpt-5.5-2026-04-23"},
		{"openai snapshot not listed", "gpt-5.4-mini-2099-01-01", "gpt-5.4-mini"},

		// Gemini's versions and previews.
		{"gemini version", "gemini-2.5-flash-001", "gemini-2.5-flash"},
		{"gemini version listed", "gemini-2.0-flash-001", "gemini-2.0-flash-001"},
		{"gemini preview listed", "gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash-preview-09-2025"},
		{"gemini preview not listed", "gemini-2.5-flash-preview-11-30", "gemini-2.5-flash"},
		{"gemini preview MM-YYYY", "gemini-2.5-flash-lite-preview-11-2099", "gemini-2.5-flash-lite"},
		{"gemini preview keeps its preview entry", "gemini-3-pro-preview-11-2099", "gemini-3-pro-preview"},

		// Resource paths.
		{"gemini api path", "models/gemini-2.5-flash", "gemini-2.5-flash"},
		{"gemini api path, own price", "models/gemini-2.5-pro", "gemini/gemini-2.5-pro"},
		{"gemini api path, version", "models/gemini-2.5-pro-001", "gemini/gemini-2.5-pro"},
		{"gemini api embedding", "models/gemini-embedding-001", "gemini-embedding-001"},
		{"vertex gemini", "publishers/google/models/gemini-2.5-pro", "gemini-2.5-pro"},
		{"vertex gemini full", "projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash", "gemini-2.5-flash"},
		{"vertex claude", "projects/p/locations/l/publishers/anthropic/models/claude-opus-4@20250514", "claude-opus-4-20250514"},
		{"vertex claude, vertex-only name", "projects/p/locations/us-east5/publishers/anthropic/models/claude-3-5-haiku@20241022", "vertex_ai/claude-3-5-haiku-20241022"},
		{"vertex @ date alone", "claude-3-5-haiku@20241022", "vertex_ai/claude-3-5-haiku-20241022"},
		{"vertex @ date not listed", "publishers/anthropic/models/claude-sonnet-4-5@20991231", "claude-sonnet-4-5"},
		{"tuned model", "tunedModels/my-model", ""},

		// Provider prefixes as LiteLLM's keys carry them.
		{"openai/", "openai/gpt-4o", "gpt-4o"},
		{"anthropic/", "anthropic/claude-3-7-sonnet-20250219", "claude-3-7-sonnet-20250219"},
		{"gemini/", "gemini/gemini-2.5-pro", "gemini/gemini-2.5-pro"},
		{"gemini/ same price as bare", "gemini/gemini-2.5-flash", "gemini-2.5-flash"},
		{"vertex_ai/", "vertex_ai/claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"},
		{"vertex_ai/ own entry", "vertex_ai/claude-3-haiku@20240307", "vertex_ai/claude-3-haiku-20240307"},
		{"azure/ own price", "azure/gpt-4o-mini", "azure/gpt-4o-mini"},
		{"azure/ same price as openai", "azure/gpt-4o-2024-08-06", "gpt-4o-2024-08-06"},
		{"azure/ snapshot not listed", "azure/gpt-4o-mini-2099-01-01", "azure/gpt-4o-mini"},

		// Azure: the record's model is the response's, the OpenAI name;
		// names only Azure uses are under azure/.
		{"azure response model", "gpt-4o-2024-11-20", "gpt-4o-2024-11-20"},
		{"azure-only name", "gpt-35-turbo", "azure/gpt-35-turbo"},
		{"azure-only name, snapshot", "gpt-35-turbo-0125", "azure/gpt-35-turbo-0125"},
		{"azure deployment name", "my-prod-gpt4o", ""},
		{"azure deployment name that starts like a model", "gpt-4o-prod", ""},

		// OpenAI fine-tuned models: their own price, never the base model's.
		{"fine-tuned", "ft:gpt-4o-mini-2024-07-18:acme::AbC123", "ft:gpt-4o-mini-2024-07-18"},
		{"fine-tuned with suffix", "ft:gpt-4.1-2025-04-14:acme:support:xyz", "ft:gpt-4.1-2025-04-14"},
		{"fine-tuned, base not listed", "ft:gpt-5-2025-08-07:acme::x", ""},

		// Amazon Bedrock's model ids, inference profiles and ARNs.
		{"bedrock id", "anthropic.claude-sonnet-4-6", "anthropic.claude-sonnet-4-6"},
		{"bedrock id, version", "anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"bedrock id, minor version not listed", "anthropic.claude-opus-4-6-v1:0", "anthropic.claude-opus-4-6-v1"},
		{"bedrock id, version not listed", "anthropic.claude-opus-4-7-v1:0", "anthropic.claude-opus-4-7"},
		{"bedrock us profile, its own price", "us.anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6"},
		{"bedrock eu profile", "eu.anthropic.claude-opus-4-7", "eu.anthropic.claude-opus-4-7"},
		{"bedrock apac profile", "apac.anthropic.claude-sonnet-4-20250514-v1:0", "apac.anthropic.claude-sonnet-4-20250514-v1:0"},
		{"bedrock global profile, the model's price", "global.anthropic.claude-sonnet-4-6", "anthropic.claude-sonnet-4-6"},
		{"bedrock global profile, version", "global.anthropic.claude-opus-4-7-v1:0", "anthropic.claude-opus-4-7"},
		{"bedrock regional profile LiteLLM lacks", "apac.anthropic.claude-opus-4-7", ""},
		{"bedrock other vendor", "meta.llama3-70b-instruct-v1:0", "meta.llama3-70b-instruct-v1:0"},
		{"bedrock foundation-model arn", "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6", "anthropic.claude-sonnet-4-6"},
		{"bedrock inference-profile arn", "arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6"},
		{"bedrock application profile arn", "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6", ""},
		{"bedrock provisioned arn", "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc", ""},
		{"bedrock/ prefix", "bedrock/us.anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6"},
		{"not bedrock: a dotted openai name", "gpt-5.5-v1", ""},

		// Never another model by similarity.
		{"mini is not 4o", "gpt-4o-mini", "gpt-4o-mini"},
		{"tts is not mini", "gpt-4o-mini-tts", ""},
		{"audio preview is not 4o", "gpt-4o-audio-preview-2099-01-01", "gpt-4o-audio-preview"},
		{"lite is not flash", "gemini-2.5-flash-lite-001", "gemini-2.5-flash-lite"},
		{"opus 4.1 is not opus 4", "claude-opus-4-1-20991231", "claude-opus-4-1"},
		{"unknown version word", "gemini-2.5-flash-turbo", ""},
		{"newer than the table", "claude-sonnet-9", ""},
		{"a different family", "gpt-5o", ""},
		{"two-digit tail is not a date", "gpt-4o-99", ""},
		{"date without a model", "2024-08-06", ""},
		{"empty", "", ""},
		{"space", "   ", ""},
		{"bare path", "models/", ""},
		{"prefix only", "azure/", ""},
	}
	tbl := cost.Default()
	for _, c := range cases {
		_, got, ok := tbl.Lookup(c.model)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: Lookup(%q) = %q, %v; want %q", c.rule, c.model, got, ok, c.want)
		}
	}
}

// The rules alone, on a table made for them.
func TestLookupRules(t *testing.T) {
	p := func(in float64) cost.Price { return cost.Price{Rates: cost.Rates{Input: in, Output: in}} }
	tbl := cost.NewTable("rules", map[string]cost.Price{
		"m":                p(1),
		"m-preview":        p(2),
		"m-mini":           p(3),
		"vertex_ai/v":      p(4),
		"gemini/m":         p(5),
		"azure/only-azure": p(6),
		"Upper@001":        p(7),
		"m-exp":            p(8),
		"vendor.x-v1":      p(9),
		"vendor.y":         p(10),
		"global.vendor.z":  p(11),
	})
	cases := []struct{ model, want string }{
		{"m-preview-05-20", "m-preview"},                   // the longest known prefix first
		{"m-preview-2099-01-01", "m-preview"},              // a full date after a preview
		{"m-mini-preview-05-20", "m-mini"},                 // then the model
		{"m-mini-20250101", "m-mini"},                      // never m
		{"m-maxi-20250101", ""},                            // never m
		{"m-05-20", ""},                                    // MM-DD only after -preview or -exp
		{"m-1", ""},                                        // one digit is not a version
		{"m-12345", ""},                                    // nor five
		{"m-001", "m"},                                     // three are
		{"m-001-001", ""},                                  // one version, not two
		{"v@20250101", "vertex_ai/v"},                      // a name found only under a scope
		{"models/m", "gemini/m"},                           // the Gemini API's own price first
		{"publishers/google/models/m", "m"},                // Vertex: no vertex_ai/m, then bare
		{"projects/p/locations/l/models/v", "vertex_ai/v"}, // a Vertex path without a publisher
		{"only-azure", "azure/only-azure"},
		{"AZURE/only-azure-2099-01-01", "azure/only-azure"},
		{"upper-001", "upper-001"}, // keys are canonical too
		{"UPPER@001", "upper-001"},
		{"foo/models/m", "m"}, // an unknown path: the name alone, bare first
		{"somemodels/m", ""},
		{"m-exp-12-31", "m-exp"},               // a date after -exp
		{"vendor.x-v1:0", "vendor.x-v1"},       // a Bedrock minor version
		{"vendor.y-v2:1", "vendor.y"},          // and the whole version
		{"vendor.y-20250101-v1:0", "vendor.y"}, // and a date before it
		{"vendor.y-v1:x", ""},                  // not a version
		{"m-v1", ""},                           // no vendor: not a Bedrock id
		{"global.vendor.y", "vendor.y"},        // a global profile: the model
		{"us.vendor.y", ""},                    // a regional one: not
		{"global.vendor.z", "global.vendor.z"}, // a global profile of its own
		{"global.global.vendor.y", ""},         // one profile, not two
		{"arn:aws:bedrock:r:1:inference-profile/global.vendor.y", "vendor.y"},
		{"arn:aws:bedrock:r:1:foundation-model", ""},
		{"arn:aws", ""},
	}
	for _, c := range cases {
		_, got, ok := tbl.Lookup(c.model)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.model, got, ok, c.want)
		}
	}
}

// Every entry of the default table is found by its own name, in any case,
// and a newer dated snapshot of it resolves to it and to nothing shorter:
// the rule that keeps gpt-4o-mini from pricing as gpt-4o, checked on every
// model the table has.
func TestLookupEveryEntry(t *testing.T) {
	tbl := cost.Default()
	for _, name := range tbl.Models() {
		want, _, _ := tbl.Lookup(name)
		for _, model := range []string{name, strings.ToUpper(name), name + "-2099-12-31", name + "@20991231"} {
			p, got, ok := tbl.Lookup(model)
			if !ok || got != name || p != want {
				t.Errorf("Lookup(%q) = %q, %v; want %q", model, got, ok, name)
			}
		}
	}
}
