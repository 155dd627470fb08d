package prompt

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// fitSlow is fit as it was before fitting worked on sizes: each step
// renders the whole prompt twice. It is the oracle the fast fit is held
// to: same text, same decisions, same errors.
func fitSlow(p *plan) error {
	if !p.budget.bounded() {
		return nil
	}
	for range 1 << 20 { // each step drops something: this ends
		a := p.render()
		scope, unit, need, limit, over := overSlow(p, &a)
		if !over {
			return nil
		}
		sec := Section(-1)
		if scope != "total" {
			sec = sectionByLabel(scope)
		}
		before, beforeTok := utf8.RuneCountInString(a.Text), p.budget.estimate(a.Text)
		d, ok := p.drop(sec)
		if !ok {
			return &BudgetError{Scope: scope, Unit: unit, Need: need, Cap: limit}
		}
		after := p.render()
		d.Chars = before - utf8.RuneCountInString(after.Text)
		d.Tokens = beforeTok - p.budget.estimate(after.Text)
		d.Detail += "; " + scope + " " + strconv.Itoa(need) + " > " + strconv.Itoa(limit) + " " + unit
		p.meta.Decisions = append(p.meta.Decisions, d)
	}
	return nil
}

// overSlow is over as it was: on the rendered text.
func overSlow(p *plan, a *Assembled) (scope, unit string, need, limit int, over bool) {
	for sec := Section(0); sec < numSections; sec++ {
		l, ok := p.budget.Sections[sec]
		if !ok {
			continue
		}
		text := a.Sections.Get(sec)
		if n := utf8.RuneCountInString(text); l.MaxChars > 0 && n > l.MaxChars {
			return sec.Label(), "chars", n, l.MaxChars, true
		}
		if n := p.budget.estimate(text); l.MaxTokens > 0 && n > l.MaxTokens {
			return sec.Label(), "tokens", n, l.MaxTokens, true
		}
	}
	if n := utf8.RuneCountInString(a.Text); p.budget.MaxChars > 0 && n > p.budget.MaxChars {
		return "total", "chars", n, p.budget.MaxChars, true
	}
	if n := p.budget.estimate(a.Text); p.budget.MaxTokens > 0 && n > p.budget.MaxTokens {
		return "total", "tokens", n, p.budget.MaxTokens, true
	}
	return "", "", 0, 0, false
}

// assembleSlow is Assemble with the oracle's fit.
func assembleSlow(spec Spec, cfg Config) (Assembled, error) {
	if !hasTask(spec.Task) {
		return Assembled{}, ErrMissingTask
	}
	if strings.TrimSpace(spec.Input.UserQuery) == "" {
		return Assembled{}, ErrMissingInput
	}
	p := newPlan(spec, cfg)
	if err := fitSlow(p); err != nil {
		return Assembled{}, err
	}
	out := p.render()
	out.Meta = p.meta
	out.Meta.Chars = utf8.RuneCountInString(out.Text)
	out.Meta.Tokens = p.budget.estimate(out.Text)
	return out, nil
}

// oracleCase builds a random spec and budget from seed, with words of
// text mixed in, and holds Assemble to the oracle on it.
func oracleCase(t *testing.T, seed uint64, text string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed>>7^0x9e3779b97f4a7c15))
	words := []string{"x", "hello", "~", "~~", "~~~~~", "é", "日本語", " ", "  - ", "- ", "\n", "\r\n", "\t", "\xff", "\xe2\x82", "(1)"}
	if text != "" {
		words = append(words, text)
		words = append(words, strings.Fields(text)...)
	}
	str := func(maxWords int) string {
		var b strings.Builder
		for range r.IntN(maxWords + 1) {
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	strs := func(maxN, maxWords int) []string {
		var out []string
		for range r.IntN(maxN + 1) {
			out = append(out, str(maxWords))
		}
		return out
	}
	spec := Spec{Input: InputPayload{UserQuery: "q" + str(4)}}
	if r.IntN(20) == 0 {
		spec.Input.UserQuery = str(2) // maybe blank: an error, both ways
	}
	if r.IntN(3) > 0 {
		spec.SystemPrompt = &SystemPrompt{Summary: str(3), Rules: strs(3, 4), Sources: strs(2, 2)}
	}
	if r.IntN(2) == 0 {
		spec.Identity = &Identity{Name: str(2), Summary: str(3), Traits: strs(2, 2), Tone: str(2)}
	}
	if r.IntN(2) == 0 {
		spec.RequestingUser = &RequestingUser{Handle: str(2), Roles: strs(2, 2), Locale: str(1), Timezone: str(1)}
	}
	if r.IntN(5) > 0 {
		cs := &ConversationState{Summary: strings.Join(strs(8, 5), "\n")}
		roles := []string{"user", "assistant", "tool", "model", "", "agent"}
		for range r.IntN(30) {
			cs.Transcript = append(cs.Transcript, ConversationStateItem{Role: roles[r.IntN(len(roles))], Content: str(8)})
		}
		if r.IntN(3) == 0 {
			cs.Retention = Retention{MaxMessages: r.IntN(20), MaxChars: r.IntN(200)}
		}
		modes := []RenderMode{"", RenderSummary, RenderTranscript, RenderBoth, RenderBoth, "odd"}
		cs.RenderMode = modes[r.IntN(len(modes))]
		spec.ConversationState = cs
	}
	for range r.IntN(4) {
		spec.Constraints = append(spec.Constraints, Constraint{Priority: Priority(r.IntN(6)), Text: str(4)})
	}
	for i := range 1 + r.IntN(8) {
		task := TaskAnnotation{Priority: Priority(r.IntN(6)), Instruction: str(5), Optional: r.IntN(3) == 0}
		if r.IntN(4) == 0 {
			task.ID = "t" + strconv.Itoa(i)
		}
		if r.IntN(3) == 0 {
			task.OutputFormat = &FormatSpec{Type: str(1), Example: str(3)}
			if r.IntN(2) == 0 {
				task.OutputFormat.JSONSchema = map[string]any{"type": str(1), "n": r.IntN(100)}
			}
		}
		spec.Task = append(spec.Task, task)
	}
	if r.IntN(2) == 0 {
		spec.Input.Context = str(6)
	}
	for range r.IntN(5) {
		spec.Input.Attachments = append(spec.Input.Attachments, Attachment{Name: str(2), MIME: str(1), URI: str(1)})
	}
	cfg := Config{HeadingLevel: r.IntN(5), HideEmptySections: r.IntN(2) == 0}
	if r.IntN(4) == 0 {
		cfg.Redact = func(s string) string { return strings.ReplaceAll(s, "x", "[x]") }
	}

	full, err := assembleSlow(spec, cfg)
	if err != nil {
		_, got := Assemble(spec, cfg)
		require.Equal(t, err, got)
		return
	}
	capOf := func(n int) int { // mostly near n, where trimming ends in a fit
		if r.IntN(3) == 0 {
			return r.IntN(n + 2)
		}
		return n + 1 - r.IntN(n/3+2)
	}
	b := Budget{}
	if r.IntN(2) == 0 {
		b.MaxChars = capOf(full.Meta.Chars)
	}
	if r.IntN(3) == 0 {
		b.MaxTokens = capOf(full.Meta.Tokens)
	}
	if r.IntN(2) == 0 {
		b.Sections = map[Section]Limit{}
		for range 1 + r.IntN(3) {
			sec := Section(r.IntN(int(numSections) + 1)) // sometimes out of range
			n := utf8.RuneCountInString(full.Sections.Get(sec))
			l := Limit{}
			if r.IntN(2) == 0 {
				l.MaxChars = capOf(n)
			} else {
				l.MaxTokens = capOf(n / 4)
			}
			b.Sections[sec] = l
		}
	}
	switch r.IntN(5) {
	case 0:
		b.Estimate = EstimateTokens
	case 1:
		b.Estimate = func(s string) int { return len(strings.Fields(s)) }
	}
	cfg.Budget = b

	want, wantErr := assembleSlow(spec, cfg)
	got, gotErr := Assemble(spec, cfg)
	require.Equal(t, wantErr, gotErr, "error")
	require.Equal(t, want, got, "assembled")
}

func TestBudgetMatchesOracle(t *testing.T) {
	for seed := range uint64(3000) {
		oracleCase(t, seed, "")
	}
}

func FuzzBudgetMatchesOracle(f *testing.F) {
	f.Add(uint64(0), "")
	f.Add(uint64(1), "~~~ fence")
	f.Add(uint64(7), "line one\nline two\r\n- bullet")
	f.Add(uint64(42), "日本語 é \xff")
	f.Add(uint64(1234), "(all 3 exchanges truncated)")
	f.Fuzz(func(t *testing.T, seed uint64, text string) {
		oracleCase(t, seed, text)
	})
}

// The default estimator, nil or given, takes the path that never renders
// while trimming; any other estimator takes the one that does.
func TestDefaultEstimateDetected(t *testing.T) {
	require.True(t, isDefaultEstimate(nil))
	require.True(t, isDefaultEstimate(EstimateTokens))
	require.False(t, isDefaultEstimate(func(s string) int { return len(s) }))
	require.False(t, isDefaultEstimate(func(s string) int { return EstimateTokens(s) + 1 }))
}
