package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"testing"

	"github.com/llmhistory/llmhistory/cost/internal/litellm"
)

func TestRender(t *testing.T) {
	raw, err := os.ReadFile("../litellm/testdata/litellm_sample.json")
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := litellm.Parse(raw)
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
		`{"us.anthropic.claude-sonnet-4-6", Price{Rates: Rates{Input: 3.3e-06, Output: 1.65e-05, CacheRead: 3.3e-07, CacheWrite: 4.125e-06, CacheWrite1h: 6.6e-06}}},`,
	} {
		if !bytes.Contains(src, []byte(s)) {
			t.Errorf("the table lacks %s", s)
		}
	}
}
