package detect

import (
	"strings"
	"testing"
)

func lexAll(src string, lang Language) (tokens int, l lexer) {
	l = newLexer(src, lang)
	var t token
	for l.next(&t); t.kind != tEOF; l.next(&t) {
		tokens++
	}
	return tokens, l
}

// TestLexerWorkIsLinear checks, by counting rather than timing, that no
// input makes the lexer read the same bytes over and over.
func TestLexerWorkIsLinear(t *testing.T) {
	const n = 200000
	inputs := []string{
		strings.Repeat("( /", n),           // a '/' that is never closed, again and again
		strings.Repeat("(/a/)", n),         // regexes
		strings.Repeat("x = %w[a b]\n", n), // percent literals
		strings.Repeat("\"#{x}\"", n),      // interpolations
		strings.Repeat("`${`", n),          // nested template literals, never closed
		strings.Repeat("<<~A\nA\n", n),     // heredocs
		strings.Repeat("\"\\", n),          // escapes at the end
	}
	for _, in := range inputs {
		for _, lang := range []Language{Ruby, Python, JavaScript, Go} {
			_, l := lexAll(in, lang)
			if l.wasted > len(in) {
				t.Errorf("%q... in %v: %d bytes read twice for %d bytes of input", in[:8], lang, l.wasted, len(in))
			}
		}
	}
}

func TestLexerSkipsCommentsAndStrings(t *testing.T) {
	src := "a # c1\nb = \"s #{x} t\" # c2\n'q'"
	var got []string
	l := newLexer(src, Ruby)
	var tk token
	for l.next(&tk); tk.kind != tEOF; l.next(&tk) {
		if tk.kind != tNewline {
			got = append(got, tk.text)
		}
	}
	want := []string{"a", "b", "=", `"s #{`, "x", `} t"`, "'q'"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

func FuzzScan(f *testing.F) {
	f.Add("h = context[:conversation_history]\nh.select { |r| r }.map(&:x)", uint8(Ruby))
	f.Add("[r for r in conversation_history if r]", uint8(Python))
	f.Add("for (const r of context.conversation_history) { r.x }", uint8(JavaScript))
	f.Add("for _, r := range conversation_history { if r {} }", uint8(Go))
	f.Add("```\nconversation_history.map\n~~~", uint8(Unknown))
	f.Fuzz(func(t *testing.T, src string, lang uint8) {
		lg := Language(lang % 5)
		_, l := lexAll(src, lg)
		if l.wasted > len(src) {
			t.Fatalf("%d bytes read twice for %d bytes", l.wasted, len(src))
		}
		lines := strings.Count(src, "\n") + 1
		for _, r := range []Result{Scan(src, lg), ScanOutput(src), ScanToolArguments(src)} {
			if !r.Access && (r.Tags != 0 || len(r.Findings) > 0) {
				t.Fatalf("tags without access: %+v", r)
			}
			for _, f := range r.Findings {
				if f.Line < 1 || f.EndLine < f.Line-1 || f.EndLine > lines+1 {
					t.Fatalf("finding %+v outside %d lines", f, lines)
				}
			}
		}
	})
}
