package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// A hand-made file in LiteLLM's format, one entry per rule of build.
func TestBuild(t *testing.T) {
	raw, err := os.ReadFile("testdata/litellm_sample.json")
	if err != nil {
		t.Fatal(err)
	}
	entries, notes, err := build(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]entry{}
	var keys []string
	for _, e := range entries {
		got[e.Key] = e
		keys = append(keys, e.Key)
	}
	want := []string{
		"azure/gpt-4o-mini",                 // Azure's own price; azure/gpt-4o is gpt-4o's and dropped
		"claude-3-opus-20240229",            // 1h write corrected
		"claude-sonnet-4-5-20250929",        // tier, 1h writes derived
		"ft:gpt-4o-mini-2024-07-18",         // fine-tuned prices kept
		"gemini-2.0-flash-exp",              // a tier of zeros is no tier
		"gemini-2.5-pro",                    // tier; reasoning equal to output dropped
		"gpt-4o",                            // batch rates ignored
		"gpt-5-pro",                         // responses mode
		"text-embedding-3-small",            // embedding
		"textembedding-gecko-003",           // '@' read as '-'
		"vertex_ai/claude-3-haiku-20240307", // cache rates derived
		"vertex_ai/claude-opus-4-6",         // @default folded into the plain name
	}
	// Dropped: sample_spec, azure/gpt-4o (same as gpt-4o), gemini/gemini-2.5-pro
	// (same as gemini-2.5-pro: the priority rate is not read), azure/eu/gpt-4o
	// (a deployment type), azure/mistral-large-latest and
	// vertex_ai/mistral-large@2407 (not our families), dall-e-3 and
	// gpt-4o-mini-tts (not our modes), gpt-4-per-char (no per-token rates).
	if !slices.Equal(keys, want) {
		t.Errorf("keys:\n got %q\nwant %q", keys, want)
	}

	if e := got["gemini-2.5-pro"]; e.Above != 200_000 || e.Long != (rates{Input: 2.5e-06, Output: 1.5e-05, CacheRead: 2.5e-07}) || e.Base.Reasoning != 0 {
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
	// Derived rates read as prices do, without binary noise.
	if e := got["vertex_ai/claude-3-haiku-20240307"]; e.Base != (rates{Input: 2.5e-07, Output: 1.25e-06, CacheRead: 2.5e-08, CacheWrite: 3.125e-07, CacheWrite1h: 5e-07}) {
		t.Errorf("vertex claude-3-haiku: %+v", e.Base)
	}
	joined := strings.Join(notes, "\n")
	for _, n := range []string{"gpt-4-per-char", "not LiteLLM's 6e-06", "vertex_ai/claude-3-haiku-20240307: derived cache read"} {
		if !strings.Contains(joined, n) {
			t.Errorf("notes do not mention %q:\n%s", n, joined)
		}
	}
}

func TestRender(t *testing.T) {
	raw, err := os.ReadFile("testdata/litellm_sample.json")
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := build(raw)
	if err != nil {
		t.Fatal(err)
	}
	src, err := render(entries, "litellm-2026-03-03", "github.com/BerriAI/litellm at commit abc (2026-03-03)")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(src, []byte("\n"))
	if !bytes.HasPrefix(first, []byte("// Code generated ")) || !bytes.HasSuffix(first, []byte(" DO NOT EDIT.")) {
		t.Errorf("first line %q is not Go's generated-code marker", first)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "table_gen.go", src, 0); err != nil {
		t.Errorf("not Go: %v", err)
	}
	for _, s := range []string{
		`const defaultName = "litellm-2026-03-03"`,
		`{"gpt-4o", Price{Rates: Rates{Input: 2.5e-06, Output: 1e-05, CacheRead: 1.25e-06}}},`,
		`LongContextAbove: 200000, LongContext: Rates{Input: 2.5e-06, Output: 1.5e-05, CacheRead: 2.5e-07}`,
		`// derived: 1h cache write 2× input, not LiteLLM's 6e-06`,
	} {
		if !bytes.Contains(src, []byte(s)) {
			t.Errorf("the table lacks %s", s)
		}
	}
}

func TestBuildRejects(t *testing.T) {
	for _, in := range []string{`[]`, `{}`, `{"x": {"litellm_provider": "bedrock", "mode": "chat", "input_cost_per_token": 1, "output_cost_per_token": 1}}`, `not json`} {
		if _, _, err := build([]byte(in)); err == nil {
			t.Errorf("build(%s): no error", in)
		}
	}
}
