package prompt

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
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
func EstimateTokens(s string) int { return estimateRunes(utf8.RuneCountInString(s)) }

// estimateRunes is EstimateTokens of a text of n runes.
func estimateRunes(n int) int { return (n + 3) / 4 }

func (b Budget) withDefaults() Budget {
	if b.Estimate == nil {
		b.Estimate = EstimateTokens
	}
	return b
}

// isDefaultEstimate says whether f, a Budget's Estimate, is the default
// estimator: nil or EstimateTokens itself.
func isDefaultEstimate(f func(string) int) bool {
	return f == nil || reflect.ValueOf(f).Pointer() == reflect.ValueOf(EstimateTokens).Pointer()
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
//
// Each step finds the first cap exceeded (see over), drops one thing
// (see drop) and records what the prompt lost. With the default
// estimator every figure is a function of rune counts, so the steps work
// on sizes kept up to date in constant time (see sizer) and the prompt is
// rendered once, by the caller; a pluggable estimator must see each
// intermediate text, so then each step renders it.
func (p *plan) fit() error {
	if !p.budget.bounded() {
		return nil
	}
	if p.defaultEstimate {
		return p.fitBySize()
	}
	return p.fitByText()
}

// fitByText is fit for a pluggable estimator: it renders the prompt
// after each step and estimates its text.
func (p *plan) fitByText() error {
	a := p.render()
	for { // each step drops something or fails: this ends
		scope, unit, need, limit, over := p.over(&a)
		if !over {
			return nil
		}
		before, beforeTok := utf8.RuneCountInString(a.Text), p.budget.estimate(a.Text)
		d, ok := p.drop(scopeSection(scope))
		if !ok {
			return &BudgetError{Scope: scope, Unit: unit, Need: need, Cap: limit}
		}
		a = p.render()
		d.Chars = before - utf8.RuneCountInString(a.Text)
		d.Tokens = beforeTok - p.budget.estimate(a.Text)
		p.decide(d, scope, unit, need, limit)
	}
}

// fitBySize is fit for the default estimator, on sizes alone.
func (p *plan) fitBySize() error {
	z := newSizer(p)
	var secs [numSections]int
	total := z.measure(p, &secs)
	for { // each step drops something or fails: this ends
		scope, unit, need, limit, over := p.overBySize(&secs, total)
		if !over {
			return nil
		}
		d, ok := p.drop(scopeSection(scope))
		if !ok {
			return &BudgetError{Scope: scope, Unit: unit, Need: need, Cap: limit}
		}
		after := z.measure(p, &secs)
		d.Chars = total - after
		d.Tokens = estimateRunes(total) - estimateRunes(after)
		total = after
		p.decide(d, scope, unit, need, limit)
	}
}

// decide records decision d, made because scope was over its cap.
func (p *plan) decide(d Decision, scope, unit string, need, limit int) {
	d.Detail += "; " + scope + " " + strconv.Itoa(need) + " > " + strconv.Itoa(limit) + " " + unit
	p.meta.Decisions = append(p.meta.Decisions, d)
}

// scopeSection is the section a scope names, -1 for the total.
func scopeSection(scope string) Section {
	if scope == "total" {
		return -1
	}
	return sectionByLabel(scope)
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

// overBySize is over on the sizes of the sections (secs, in runes, 0 for
// a hidden section) and of the whole text (total), for the default
// estimator.
func (p *plan) overBySize(secs *[numSections]int, total int) (scope, unit string, need, limit int, over bool) {
	for sec := Section(0); sec < numSections; sec++ {
		l, ok := p.budget.Sections[sec]
		if !ok {
			continue
		}
		if n := secs[sec]; l.MaxChars > 0 && n > l.MaxChars {
			return sec.Label(), "chars", n, l.MaxChars, true
		}
		if n := estimateRunes(secs[sec]); l.MaxTokens > 0 && n > l.MaxTokens {
			return sec.Label(), "tokens", n, l.MaxTokens, true
		}
	}
	if n := total; p.budget.MaxChars > 0 && n > p.budget.MaxChars {
		return "total", "chars", n, p.budget.MaxChars, true
	}
	if n := estimateRunes(total); p.budget.MaxTokens > 0 && n > p.budget.MaxTokens {
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

// sizer measures a plan in runes without rendering it: what the budget
// can drop is rendered line by line up front, and a kept prefix or
// suffix of lines is then a difference of running totals. Line sizes
// below count the newline that joins a line to the next one.
type sizer struct {
	head  int // a section's heading, label excepted: "## [" and "]\n"
	fixed [numSections]int
	// fixed holds the bodies that the budget never changes (the System
	// Prompt, the Constraints) or drops whole (the Assistant Identity and
	// the Requesting User, measured while kept).

	summary    []int // summary[k]: the first k summary lines
	transcript []int // transcript[i]: items i.. of the transcript
	tildes     []int // tildes[i]: the longest run of tildes in items i..
	tasks      []int // tasks[k]: the first k tasks
	query      int   // the fenced user query
	context    int   // the input's context, when rendered
	attach     []int // attach[k]: the first k attachments
}

// newSizer measures what p keeps now; it must be made before p drops
// anything.
func newSizer(p *plan) *sizer {
	z := &sizer{head: utf8.RuneCountInString(p.heading()) + len("]\n")}
	z.fixed[SectionSystemPrompt] = utf8.RuneCountInString(p.renderSystem())
	z.fixed[SectionIdentity] = utf8.RuneCountInString(p.renderIdentity())
	z.fixed[SectionRequestingUser] = utf8.RuneCountInString(p.renderUser())
	z.fixed[SectionConstraints] = utf8.RuneCountInString(p.renderConstraints())

	z.summary = make([]int, len(p.summary)+1)
	for i, l := range p.summary {
		z.summary[i+1] = z.summary[i] + lineSize(summaryLine(l))
	}
	n := len(p.transcript)
	z.transcript = make([]int, n+1)
	z.tildes = make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		line := transcriptLine(p.transcript[i])
		z.transcript[i] = z.transcript[i+1] + lineSize(line)
		z.tildes[i] = max(z.tildes[i+1], longestTildeRun(line))
	}
	z.tasks = make([]int, len(p.tasks)+1)
	var b []string
	for i, t := range p.tasks {
		b = taskLines(b[:0], i+1, t)
		z.tasks[i+1] = z.tasks[i]
		for _, l := range b {
			z.tasks[i+1] += lineSize(l)
		}
	}
	in := p.input
	z.query = lineSize(fence(strings.TrimRight(in.UserQuery, "\n")))
	if strings.TrimSpace(in.Context) != "" {
		z.context = lineSize("- Context:") + lineSize(fence(strings.TrimRight(in.Context, "\n")))
	}
	z.attach = make([]int, len(in.Attachments)+1)
	for i, a := range in.Attachments {
		z.attach[i+1] = z.attach[i] + lineSize(attachmentLine(a))
	}
	return z
}

// lineSize is a line's runes and the newline after it.
func lineSize(line string) int { return utf8.RuneCountInString(line) + 1 }

// measure sets secs to the runes of each section of what p keeps now, as
// render would render it (0 for a hidden section), and returns the runes
// of the whole text.
func (z *sizer) measure(p *plan, secs *[numSections]int) int {
	// Each body is its lines, joined: the sum of lineSize less one.
	bodies := z.fixed
	if p.identity == nil {
		bodies[SectionIdentity] = 0
	}
	if p.user == nil {
		bodies[SectionRequestingUser] = 0
	}
	bodies[SectionConversationState] = lines(z.state(p))
	bodies[SectionTask] = lines(z.tasks[len(p.tasks)])
	in := z.query + z.attach[len(p.input.Attachments)]
	if p.input.Context != "" {
		in += z.context
	}
	bodies[SectionInput] = lines(in)

	total, shown := 0, 0
	for sec := Section(0); sec < numSections; sec++ {
		body := bodies[sec]
		if body == 0 {
			if p.cfg.HideEmptySections {
				secs[sec] = 0
				continue
			}
			body = len(NoneProvided)
		}
		secs[sec] = z.head + utf8.RuneCountInString(sec.Label()) + body
		total += secs[sec]
		shown++
	}
	if shown > 1 {
		total += len("\n\n") * (shown - 1)
	}
	return total
}

// state is the sum of lineSize over the lines of renderState's body.
func (z *sizer) state(p *plan) int {
	n := 0
	if p.mode != RenderTranscript {
		n += z.summary[len(p.summary)]
	}
	if p.mode != RenderSummary && (len(p.transcript) > 0 || p.cutItems > 0) {
		first := len(z.transcript) - 1 - len(p.transcript) // the oldest item kept
		text := z.transcript[first]
		if h := truncationLine(p.cutItems, len(p.transcript)); h != "" {
			text += lineSize(h)
		}
		// fence: "~~~text\n" + text + "\n~~~"; the newline after the
		// text's last line is the one before the closing fence.
		n += lineSize("") + 2*fenceWidth(z.tildes[first]) + len("text\n") + text
	}
	return n
}

// lines is the runes of lines joined by newlines, given the sum of their
// lineSize.
func lines(size int) int { return max(0, size-1) }
