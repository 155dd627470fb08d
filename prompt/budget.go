package prompt

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Budget caps the assembled prompt, in characters (runes) and in estimated
// tokens, in total and per section. A zero field is no cap.
type Budget struct {
	MaxChars  int
	MaxTokens int
	Sections  map[Section]Limit
	// Estimate counts a text's tokens; nil means a quarter of its
	// characters, rounded up, a common rule of thumb. Plug in a real
	// tokenizer for exact figures.
	Estimate func(string) int
}

// Limit caps one section.
type Limit struct {
	MaxChars  int
	MaxTokens int
}

// EstimateTokens is the default estimator: characters / 4, rounded up.
func EstimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

func (b Budget) withDefaults() Budget {
	if b.Estimate == nil {
		b.Estimate = EstimateTokens
	}
	return b
}

func (b Budget) estimate(s string) int { return b.Estimate(s) }

func (b Budget) bounded() bool {
	if b.MaxChars > 0 || b.MaxTokens > 0 {
		return true
	}
	for _, l := range b.Sections {
		if l.MaxChars > 0 || l.MaxTokens > 0 {
			return true
		}
	}
	return false
}

// Meta records the assembled prompt's size and every trimming decision,
// for logs: counts and sizes, never the trimmed text.
type Meta struct {
	Chars     int // characters (runes) of Text
	Tokens    int // estimated tokens of Text
	Decisions []Decision
}

// Decision is one thing the budget removed.
type Decision struct {
	Section Section
	Action  string // "dropped transcript item", "dropped summary line", "dropped task", ...
	Detail  string // which, and why: "item 1 of 6 (user); total 1042 > 1000 chars"
	Chars   int    // characters the prompt lost
	Tokens  int    // estimated tokens it lost
}

// ErrOverBudget is matched (errors.Is) by every *BudgetError.
var ErrOverBudget = errors.New("prompt: over budget")

// BudgetError says that what is never dropped (the System Prompt, the
// Constraints, the user query and the first task) does not fit a cap.
type BudgetError struct {
	Scope string // "total" or a section's label
	Unit  string // "chars" or "tokens"
	Need  int
	Cap   int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("prompt: what is never dropped needs %d %s, over the %s cap of %d by %d",
		e.Need, e.Unit, e.Scope, e.Cap, e.Need-e.Cap)
}

// Is makes errors.Is(err, ErrOverBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrOverBudget }

// fit trims the plan until every cap holds, in the preservation order:
// transcript items first (oldest first), then summary lines (last first),
// then tasks (lowest priority first, keeping the first), then the input's
// context, then its attachments, then the Requesting User and the
// Assistant Identity. The System Prompt, the Constraints, the user query
// and the highest-priority task are never dropped.
func (p *plan) fit() error {
	if !p.budget.bounded() {
		return nil
	}
	for range 1 << 20 { // each step drops something: this ends
		a := p.render()
		scope, unit, need, limit, over := p.over(&a)
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

func sectionByLabel(label string) Section {
	for s := Section(0); s < numSections; s++ {
		if s.Label() == label {
			return s
		}
	}
	return -1
}

// over finds the first cap exceeded: a section's, in canonical order, then
// the total.
func (p *plan) over(a *Assembled) (scope, unit string, need, limit int, over bool) {
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

// drop removes the next thing in the preservation order, within sec (or
// anywhere for -1), and says what it did.
func (p *plan) drop(sec Section) (Decision, bool) {
	in := func(s Section) bool { return sec < 0 || sec == s }
	switch {
	case in(SectionConversationState) && len(p.transcript) > 0:
		it := p.transcript[0]
		p.transcript = p.transcript[1:]
		p.cutItems++
		return Decision{Section: SectionConversationState, Action: "dropped transcript item",
			Detail: "the oldest shown (" + it.Role + ", " + strconv.Itoa(len(it.Content)) + " chars)"}, true
	case in(SectionConversationState) && len(p.summary) > 0:
		p.summary = p.summary[:len(p.summary)-1]
		return Decision{Section: SectionConversationState, Action: "dropped summary line",
			Detail: "line " + strconv.Itoa(len(p.summary)+1)}, true
	case in(SectionTask) && len(p.tasks) > 1:
		// The lowest priority is last (the sort is stable): drop it.
		t := p.tasks[len(p.tasks)-1]
		p.tasks = p.tasks[:len(p.tasks)-1]
		return Decision{Section: SectionTask, Action: "dropped task",
			Detail: "priority " + strconv.Itoa(int(t.Priority.value())) + idDetail(t.ID)}, true
	case in(SectionInput) && p.input.Context != "":
		p.input.Context = ""
		return Decision{Section: SectionInput, Action: "dropped input context"}, true
	case in(SectionInput) && len(p.input.Attachments) > 0:
		a := p.input.Attachments[len(p.input.Attachments)-1]
		p.input.Attachments = p.input.Attachments[:len(p.input.Attachments)-1]
		return Decision{Section: SectionInput, Action: "dropped attachment", Detail: a.Name}, true
	case in(SectionRequestingUser) && p.user != nil:
		p.user = nil
		return Decision{Section: SectionRequestingUser, Action: "dropped section"}, true
	case in(SectionIdentity) && p.identity != nil:
		p.identity = nil
		return Decision{Section: SectionIdentity, Action: "dropped section"}, true
	}
	return Decision{}, false
}

func idDetail(id string) string {
	if id == "" {
		return ""
	}
	return " (" + id + ")"
}
