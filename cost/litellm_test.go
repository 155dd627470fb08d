package cost_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const tinyLiteLLM = `{
    "sample_spec": {"litellm_provider": "one of https://docs.litellm.ai/docs/providers", "mode": "one of: chat"},
    "gpt-9": {"input_cost_per_token": 1e-06, "output_cost_per_token": 4e-06, "litellm_provider": "openai", "mode": "chat"}
}`

// LoadFile takes either format: LiteLLM's file is a table of its own,
// dated by its name or else its modification time; llmhistory's adds to
// the table it is called on.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()

	named := writeFile(t, dir, "litellm-2026-11-20.json", tinyLiteLLM)
	tbl, err := cost.Builtin().LoadFile(named)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Name() != "litellm-2026-11-20" || tbl.Len() != 1 {
		t.Errorf("%s: %q with %d models; want litellm-2026-11-20 with gpt-9 alone", named, tbl.Name(), tbl.Len())
	}

	plain := writeFile(t, dir, "model_prices_and_context_window.json", tinyLiteLLM)
	mtime := time.Date(2026, 11, 21, 23, 30, 0, 0, time.UTC)
	if err := os.Chtimes(plain, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	tbl, err = cost.Builtin().LoadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Name() != "litellm-2026-11-21" {
		t.Errorf("%s: %q; want litellm-2026-11-21, the day it was written", plain, tbl.Name())
	}
	// gpt-9: 1,000,000 × 1e-06 + 100,000 × 4e-06 = 1.0 + 0.4 = 1.4
	if c, ok := tbl.Cost("gpt-9", record.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}); !ok || !closeTo(c.USD, 1.4) {
		t.Errorf("gpt-9: %+v, %v; want $1.40", c, ok)
	}

	ours := writeFile(t, dir, "acme.json", `{"version": 1, "table": "acme-2026-11", "models": {"my-model": {"input_per_mtok": 1, "output_per_mtok": 2}}}`)
	tbl, err = cost.Builtin().LoadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Name() != "acme-2026-11" || tbl.Len() != cost.Builtin().Len()+1 {
		t.Errorf("%s: %q with %d models; want acme-2026-11, the built-in models and one more", ours, tbl.Name(), tbl.Len())
	}
}

// A price file that cannot be used is an error that names it and says
// what is wrong, with the line of a syntax error.
func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.json")
	for _, c := range []struct {
		path, want string
		priceFile  bool
	}{
		{missing, "open " + missing + ": no such file or directory", false},
		{dir, dir + ": is a directory, not a price file", false},
		{writeFile(t, dir, "syntax.json", "{\n  \"gpt-9\": {\"input_cost_per_token\": 1e-06,}\n}"),
			"syntax.json: cost: invalid price file: invalid character '}' looking for beginning of object key string (line 2)", true},
		{writeFile(t, dir, "ours-syntax.json", "{\"models\": {\n  \"m\": {\"input_per_mtok\": 1,}\n}}"),
			"ours-syntax.json: cost: invalid price file: invalid character '}' looking for beginning of object key string (line 2)", true},
		{writeFile(t, dir, "neither.json", `{"call_id": "c1", "model": "gpt-4o"}`),
			`neither.json: cost: invalid price file: neither llmhistory's price file (it has no "models" object) nor LiteLLM's (it has no model of the providers llmhistory records)`, true},
		{writeFile(t, dir, "damaged.json", `{"gpt-9": {"input_cost_per_token": "free", "output_cost_per_token": 4e-06, "litellm_provider": "openai", "mode": "chat"}}`),
			`damaged.json: cost: invalid price file: model "gpt-9": input_cost_per_token is "free", not a per-token price`, true},
		{writeFile(t, dir, "array.json", "[\n1]"), "array.json: cost: invalid price file: json: cannot unmarshal array into Go value of type cost.priceFile (line 1)", true},
	} {
		tbl, err := cost.Builtin().LoadFile(c.path)
		if err == nil || tbl != nil {
			t.Errorf("LoadFile(%s) = %v, %v; want an error", c.path, tbl, err)
			continue
		}
		if !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("LoadFile(%s):\n got %v\nwant …%s", c.path, err, c.want)
		}
		if errors.Is(err, cost.ErrPriceFile) != c.priceFile {
			t.Errorf("LoadFile(%s): errors.Is(ErrPriceFile) = %v", c.path, !c.priceFile)
		}
	}
	if _, err := cost.LoadLiteLLM(strings.NewReader(tinyLiteLLM), time.Time{}); !errors.Is(err, cost.ErrPriceFile) {
		t.Errorf("LoadLiteLLM without a date: %v", err)
	}
}

// LLMHISTORY_PRICES names the file FromEnv reads; unset, there is none.
func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cost.EnvPrices, "")
	if tbl, err := cost.FromEnv(); tbl != nil || err != nil {
		t.Errorf("unset: %v, %v; want nil, nil", tbl, err)
	}
	t.Setenv(cost.EnvPrices, writeFile(t, dir, "litellm-2026-11-20.json", tinyLiteLLM))
	tbl, err := cost.FromEnv()
	if err != nil || tbl.Name() != "litellm-2026-11-20" {
		t.Fatalf("FromEnv() = %v, %v", tbl, err)
	}
	// A file of your own prices is added to the built-in table.
	t.Setenv(cost.EnvPrices, writeFile(t, dir, "acme.json", `{"table": "acme", "models": {"my-model": {"input_per_mtok": 1, "output_per_mtok": 2}}}`))
	if tbl, err = cost.FromEnv(); err != nil || tbl.Name() != "acme" || tbl.Len() != cost.Builtin().Len()+1 {
		t.Errorf("FromEnv() = %v, %v", tbl, err)
	}
	bad := filepath.Join(dir, "nope.json")
	t.Setenv(cost.EnvPrices, bad)
	if tbl, err = cost.FromEnv(); tbl != nil || err == nil || !strings.HasPrefix(err.Error(), "LLMHISTORY_PRICES="+bad+": open ") {
		t.Errorf("FromEnv() = %v, %v; want an error naming the variable and the file", tbl, err)
	}
}

func TestDateOf(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"litellm-2026-07-24", "2026-07-24"},
		{"litellm-2026-07-24+custom", "2026-07-24"},
		{"acme-2025-01-01-negotiated-2026-02-03", "2026-02-03"}, // the last date
		{"2026-11-20", "2026-11-20"},
		{"litellm-2026-11-20.json", "2026-11-20"},
		{"acme-2026-11", ""},
		{"litellm-2026-02-30", ""}, // not a date
		{"x12026-07-24", ""},       // part of a longer number
		{"2026-07-245", ""},        // likewise
		{"litellm-2026-7-24", ""},  // not YYYY-MM-DD
		{"", ""},
	} {
		d, ok := cost.DateOf(c.name)
		got := ""
		if ok {
			got = d.Format(time.DateOnly)
			if d.Location() != time.UTC || d.Hour() != 0 {
				t.Errorf("DateOf(%q) = %v; want midnight UTC", c.name, d)
			}
		}
		if got != c.want {
			t.Errorf("DateOf(%q) = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
	if d, ok := cost.Builtin().Date(); !ok || d.Format(time.DateOnly) != strings.TrimPrefix(cost.Builtin().Name(), "litellm-") {
		t.Errorf("Builtin().Date() = %v, %v", d, ok)
	}
}

// FuzzLoadLiteLLM: a LiteLLM file either loads or fails with
// ErrPriceFile, never panics, and what it loads resolves idempotently and
// prices without negative, infinite or NaN figures.
func FuzzLoadLiteLLM(f *testing.F) {
	excerpt, err := os.ReadFile("testdata/litellm_excerpt.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(excerpt)
	for _, s := range []string{
		tinyLiteLLM, `{}`, `[]`, `null`, ``, `{"models": {}}`, "\xef\xbb\xbf" + tinyLiteLLM,
		`{"gpt-9": {"input_cost_per_token": 1e400, "output_cost_per_token": 1, "litellm_provider": "openai", "mode": "chat"}}`,
		`{"gpt-9": {"input_cost_per_token": 1, "output_cost_per_token": 1, "litellm_provider": "openai", "mode": "chat", "input_cost_per_token_above_1k_tokens": 1}}`,
		`{"global.anthropic.claude-x": {"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06, "litellm_provider": "bedrock", "mode": "chat"},
		  "anthropic.claude-x": {"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06, "litellm_provider": "bedrock_converse", "mode": "chat"}}`,
		`{"GPT-9@X": {"input_cost_per_token": 0, "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}}`,
		`{"a": {"b": {"c": [[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]}}}`,
	} {
		f.Add([]byte(s))
	}
	date := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, file []byte) {
		tbl, err := cost.LoadLiteLLM(strings.NewReader(string(file)), date)
		if err != nil {
			if !errors.Is(err, cost.ErrPriceFile) || tbl != nil {
				t.Fatalf("LoadLiteLLM: %v, %v; want nil and ErrPriceFile", tbl, err)
			}
			return
		}
		if tbl.Name() != "litellm-2026-11-20" || tbl.Len() == 0 {
			t.Fatalf("loaded %q with %d models", tbl.Name(), tbl.Len())
		}
		u := record.Usage{InputTokens: 300_000, CachedTokens: 1_000, CacheWriteTokens: 2_000, CacheWrite1hTokens: 500, OutputTokens: 5_000, ReasoningTokens: 1_000}
		for _, m := range tbl.Models() {
			p, name, ok := tbl.Lookup(m)
			if !ok || name != m {
				t.Fatalf("model %q resolves to %q, %v", m, name, ok)
			}
			if usd, ok := p.Cost(u); !ok || !(usd >= 0) {
				t.Fatalf("model %q: %v, %v", m, usd, ok)
			}
		}
	})
}
