package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The types below follow the prompt assembly framework v2's TypeScript
// types, Go-cased. Zero values mean the layout's defaults: priority 3,
// heading level 2, empty sections shown, render mode "summary", tasks
// required.

// ConversationStateItem is one message of a transcript excerpt.
type ConversationStateItem struct {
	Role    string // "user", "assistant" or "tool"
	Content string // one logical message
	At      string // RFC 3339 timestamp, optional
}

// Retention bounds the transcript the assembler renders: the last
// MaxMessages items, within MaxChars of content. Zero means no bound.
type Retention struct {
	MaxMessages int
	MaxChars    int
}

// RenderMode says what of the conversation state is rendered.
type RenderMode string

// The render modes; the zero value is RenderSummary.
const (
	RenderSummary    RenderMode = "summary"
	RenderTranscript RenderMode = "transcript"
	RenderBoth       RenderMode = "both"
)

// ConversationState is the short-term, session-scoped state that informs
// the current exchange: a compact summary (preferred) and, when the render
// mode includes it, a trimmed transcript excerpt.
type ConversationState struct {
	Summary    string
	Transcript []ConversationStateItem
	Retention  Retention
	RenderMode RenderMode
}

// SystemPrompt holds the system's immutable laws and defaults.
type SystemPrompt struct {
	Summary string
	Rules   []string
	Sources []string
}

// Identity is the assistant's persona (rendered as [Assistant Identity]).
type Identity struct {
	PersonaID       string
	Name            string
	Summary         string // the role the assistant plays: "Staff Engineer"
	Traits          []string
	Tone            string
	StyleGuidelines []string
}

// RequestingUser holds stable, non-sensitive traits of the requester.
type RequestingUser struct {
	UserID      string
	Handle      string
	DisplayName string
	Roles       []string
	Locale      string
	Timezone    string
	Tier        string
}

// Priority orders constraints and tasks: 1 is the highest, 5 the lowest,
// 0 means the default, 3.
type Priority int

// DefaultPriority is what a zero priority means.
const DefaultPriority Priority = 3

func (p Priority) value() Priority {
	if p == 0 {
		return DefaultPriority
	}
	return p
}

// Constraint is a non-negotiable rule.
type Constraint struct {
	ID       string
	Priority Priority
	Text     string
	Tags     []string
	Source   string // "system", "policy" or "runtime"
}

// FormatSpec says what form a task's output takes.
type FormatSpec struct {
	Type       string // "markdown", "json", "xml" or "text"
	JSONSchema any
	Example    string
}

// TaskAnnotation is one prioritized instruction.
type TaskAnnotation struct {
	ID           string
	Priority     Priority
	Instruction  string
	Optional     bool // required=false in the layout's own terms
	OutputFormat *FormatSpec
}

// Attachment is a file that comes with the input. Only its description
// is rendered; BytesBase64 never enters the prompt text.
type Attachment struct {
	Name        string
	MIME        string
	URI         string
	BytesBase64 string
}

// InputPayload is the immediate user query and what comes with it.
type InputPayload struct {
	UserQuery   string
	Attachments []Attachment
	Context     string // free-form context that is not history
}

// Spec is everything a prompt is assembled from. Task and Input are
// required; every other section is optional.
type Spec struct {
	SystemPrompt      *SystemPrompt
	Identity          *Identity
	RequestingUser    *RequestingUser
	ConversationState *ConversationState
	Constraints       []Constraint
	Task              []TaskAnnotation
	Input             InputPayload
}

// Config says how to render. The zero value is the layout's defaults.
type Config struct {
	HeadingLevel      int    // 1, 2 or 3; 0 means 2
	HideEmptySections bool   // showEmptySections=false in the layout's own terms
	Provider          string // "openai" or "google": the target, for the mappings
	Budget            Budget
	// Redact, when set, runs over the conversation state's summary and
	// transcript before they are rendered.
	Redact func(string) string
}

// Section names one of the seven canonical sections.
type Section int

// The sections, in canonical order.
const (
	SectionSystemPrompt Section = iota
	SectionIdentity
	SectionRequestingUser
	SectionConversationState
	SectionConstraints
	SectionTask
	SectionInput
	numSections
)

var sectionLabels = [numSections]string{
	"System Prompt", "Assistant Identity", "Requesting User", "Conversation State / History",
	"Constraints", "Task", "Input",
}

// Label is the section's bracketed label: "Assistant Identity".
func (s Section) Label() string {
	if s >= 0 && s < numSections {
		return sectionLabels[s]
	}
	return "Section " + strconv.Itoa(int(s))
}

func (s Section) String() string { return s.Label() }

// Sections holds each section's rendered text, heading included ("" for a
// hidden section).
type Sections struct {
	SystemPrompt      string
	Identity          string
	RequestingUser    string
	ConversationState string
	Constraints       string
	Task              string
	Input             string
}

// Get returns one section's text.
func (s *Sections) Get(sec Section) string { return *s.ptr(sec) }

func (s *Sections) ptr(sec Section) *string {
	switch sec {
	case SectionSystemPrompt:
		return &s.SystemPrompt
	case SectionIdentity:
		return &s.Identity
	case SectionRequestingUser:
		return &s.RequestingUser
	case SectionConversationState:
		return &s.ConversationState
	case SectionConstraints:
		return &s.Constraints
	case SectionTask:
		return &s.Task
	}
	return &s.Input
}

// Assembled is an assembled prompt: the whole text, each section, and the
// record of what the budget trimmed.
type Assembled struct {
	Text     string
	Sections Sections
	Meta     Meta
}

// SystemText is what goes where a provider takes system instructions: the
// System Prompt and the Assistant Identity, as shown, joined by a blank
// line ("" when both are hidden).
func (a Assembled) SystemText() string {
	return joinShown(a.Sections.SystemPrompt, a.Sections.Identity)
}

// UserText is what goes in the user turn: the Requesting User,
// Conversation State / History, Constraints, Task and Input, in that
// order, as shown, joined by a blank line.
func (a Assembled) UserText() string {
	s := a.Sections
	return joinShown(s.RequestingUser, s.ConversationState, s.Constraints, s.Task, s.Input)
}

// joinShown joins the sections that are shown with a blank line, as the
// assembled text does.
func joinShown(sections ...string) string {
	shown := sections[:0:0]
	for _, s := range sections {
		if s != "" {
			shown = append(shown, s)
		}
	}
	return strings.Join(shown, "\n\n")
}

// Errors of Assemble.
var (
	ErrMissingTask  = errors.New("prompt: the task is required: give at least one task annotation with an instruction")
	ErrMissingInput = errors.New("prompt: the input is required: give a user query")
)

// NoneProvided is the body of an empty section that is shown.
const NoneProvided = "None provided."

// Assemble renders spec in canonical order: System Prompt, Assistant
// Identity, Requesting User, Conversation State / History, Constraints,
// Task, Input. Each section is a heading ("## [Label]") and a body, and
// sections are joined by a blank line. Within the budget (cfg.Budget) it
// trims in the layout's preservation order and says so in Meta; when the
// sections that are never dropped alone exceed it, it fails with a
// *BudgetError.
func Assemble(spec Spec, cfg Config) (Assembled, error) {
	if !hasTask(spec.Task) {
		return Assembled{}, ErrMissingTask
	}
	if strings.TrimSpace(spec.Input.UserQuery) == "" {
		return Assembled{}, ErrMissingInput
	}
	p := newPlan(spec, cfg)
	if err := p.fit(); err != nil {
		return Assembled{}, err
	}
	out := p.render()
	out.Meta = p.meta
	out.Meta.Chars = utf8.RuneCountInString(out.Text)
	out.Meta.Tokens = p.budget.estimate(out.Text)
	return out, nil
}

func hasTask(tasks []TaskAnnotation) bool {
	for _, t := range tasks {
		if strings.TrimSpace(t.Instruction) != "" {
			return true
		}
	}
	return false
}

// plan is a spec being fitted to a budget: what is still kept.
type plan struct {
	cfg    Config
	budget Budget
	meta   Meta
	// defaultEstimate: the budget counts tokens with EstimateTokens.
	defaultEstimate bool

	system      *SystemPrompt
	identity    *Identity
	user        *RequestingUser
	summary     []string                // summary lines kept
	transcript  []ConversationStateItem // transcript items kept
	cutItems    int                     // transcript items not shown
	mode        RenderMode
	constraints []Constraint // sorted
	tasks       []TaskAnnotation
	input       InputPayload
}

func newPlan(spec Spec, cfg Config) *plan {
	p := &plan{cfg: cfg, budget: cfg.Budget.withDefaults(), system: spec.SystemPrompt, identity: spec.Identity,
		user: spec.RequestingUser, input: spec.Input, defaultEstimate: isDefaultEstimate(cfg.Budget.Estimate)}
	p.constraints = slices.Clone(spec.Constraints)
	slices.SortStableFunc(p.constraints, func(a, b Constraint) int { return int(a.Priority.value() - b.Priority.value()) })
	for _, t := range spec.Task {
		if strings.TrimSpace(t.Instruction) != "" {
			p.tasks = append(p.tasks, t)
		}
	}
	slices.SortStableFunc(p.tasks, func(a, b TaskAnnotation) int { return int(a.Priority.value() - b.Priority.value()) })
	if cs := spec.ConversationState; cs != nil {
		redact := cfg.Redact
		if redact == nil {
			redact = func(s string) string { return s }
		}
		for _, l := range strings.Split(redact(cs.Summary), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				p.summary = append(p.summary, l)
			}
		}
		p.mode = cs.RenderMode
		if p.mode == "" {
			p.mode = RenderSummary
		}
		if p.mode != RenderSummary {
			items := make([]ConversationStateItem, 0, len(cs.Transcript))
			for _, it := range cs.Transcript {
				it.Content = redact(it.Content)
				items = append(items, it)
			}
			kept := retain(items, cs.Retention)
			p.cutItems = len(items) - len(kept)
			p.transcript = kept
		}
	}
	return p
}

// retain keeps the last items within the retention bounds.
func retain(items []ConversationStateItem, r Retention) []ConversationStateItem {
	if r.MaxMessages > 0 && len(items) > r.MaxMessages {
		items = items[len(items)-r.MaxMessages:]
	}
	if r.MaxChars > 0 {
		total := 0
		for i := len(items) - 1; i >= 0; i-- {
			total += len(items[i].Content)
			if total > r.MaxChars {
				return items[i+1:]
			}
		}
	}
	return items
}

// render renders what the plan keeps.
func (p *plan) render() Assembled {
	var out Assembled
	bodies := [numSections]string{
		p.renderSystem(), p.renderIdentity(), p.renderUser(), p.renderState(),
		p.renderConstraints(), p.renderTasks(), p.renderInput(),
	}
	heading := p.heading()
	parts := make([]string, 0, numSections)
	for sec := Section(0); sec < numSections; sec++ {
		body := bodies[sec]
		if body == "" {
			if p.cfg.HideEmptySections {
				continue
			}
			body = NoneProvided
		}
		text := heading + sec.Label() + "]\n" + body
		*out.Sections.ptr(sec) = text
		parts = append(parts, text)
	}
	out.Text = strings.Join(parts, "\n\n")
	return out
}

// heading opens every section's heading: "## [".
func (p *plan) heading() string {
	level := p.cfg.HeadingLevel
	if level < 1 || level > 3 {
		level = 2
	}
	return strings.Repeat("#", level) + " ["
}

// oneLine keeps user-given text to one bullet: newlines cannot start a
// line of their own, so no value can forge a heading.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

func bullets(lines []string) string { return strings.Join(lines, "\n") }

func numbered(b *[]string, i int, text string) {
	*b = append(*b, "- ("+strconv.Itoa(i)+") "+oneLine(text))
}

func (p *plan) renderSystem() string {
	s := p.system
	if s == nil {
		return ""
	}
	var b []string
	if s.Summary != "" {
		b = append(b, "- Summary: "+oneLine(s.Summary))
	}
	n := 0
	for _, r := range s.Rules {
		if strings.TrimSpace(r) == "" {
			continue
		}
		n++
		numbered(&b, n, r)
	}
	if len(s.Sources) > 0 {
		b = append(b, "- Sources: "+oneLine(strings.Join(s.Sources, ", ")))
	}
	return bullets(b)
}

func (p *plan) renderIdentity() string {
	id := p.identity
	if id == nil {
		return ""
	}
	var b []string
	add := func(label, v string) {
		if v = oneLine(v); v != "" {
			b = append(b, "- "+label+": "+v)
		}
	}
	add("Persona", id.PersonaID)
	add("Name", id.Name)
	add("Role", id.Summary)
	add("Traits", strings.Join(id.Traits, ", "))
	add("Tone", id.Tone)
	add("Style", strings.Join(id.StyleGuidelines, "; "))
	return bullets(b)
}

func (p *plan) renderUser() string {
	u := p.user
	if u == nil {
		return ""
	}
	var b []string
	add := func(label, v string) {
		if v = oneLine(v); v != "" {
			b = append(b, "- "+label+": "+v)
		}
	}
	add("User ID", u.UserID)
	add("Handle", u.Handle)
	add("Name", u.DisplayName)
	if len(u.Roles) > 0 {
		add("Roles", "["+strings.Join(u.Roles, ", ")+"]")
	}
	switch loc, tz := oneLine(u.Locale), oneLine(u.Timezone); {
	case loc != "" && tz != "":
		b = append(b, "- Locale: "+loc+"; TZ: "+tz)
	case loc != "":
		b = append(b, "- Locale: "+loc)
	case tz != "":
		b = append(b, "- TZ: "+tz)
	}
	add("Tier", u.Tier)
	return bullets(b)
}

// renderState renders summary bullets first, then the transcript excerpt,
// fenced, with its truncation stated.
func (p *plan) renderState() string {
	var b []string
	if p.mode != RenderTranscript {
		for _, l := range p.summary {
			b = append(b, summaryLine(l))
		}
	}
	if p.mode != RenderSummary && (len(p.transcript) > 0 || p.cutItems > 0) {
		var t []string
		if h := truncationLine(p.cutItems, len(p.transcript)); h != "" {
			t = append(t, h)
		}
		for _, it := range p.transcript {
			t = append(t, transcriptLine(it))
		}
		b = append(b, fence(strings.Join(t, "\n")))
	}
	return bullets(b)
}

// summaryLine is the bullet of one summary line.
func summaryLine(l string) string { return "- " + strings.TrimPrefix(oneLine(l), "- ") }

// transcriptLine is the line of one transcript item.
func transcriptLine(it ConversationStateItem) string { return roleMark(it.Role) + ": " + it.Content }

// truncationLine states a transcript's truncation: cut items are not
// shown, kept are ("" when nothing is cut).
func truncationLine(cut, kept int) string {
	switch {
	case cut > 0 && kept == 0:
		return "(all " + strconv.Itoa(cut) + " exchanges truncated)"
	case cut > 0:
		return "(last " + strconv.Itoa(kept) + " exchanges, truncated)"
	}
	return ""
}

func roleMark(role string) string {
	switch role {
	case "assistant", "agent", "model":
		return "A"
	case "tool":
		return "T"
	}
	return "U"
}

// fence wraps text in a ~~~text fence longer than any run of tildes in
// it, so that no user text can close the fence early.
func fence(text string) string {
	f := strings.Repeat("~", fenceWidth(longestTildeRun(text)))
	return f + "text\n" + text + "\n" + f
}

// longestTildeRun is the length of the longest run of tildes in text.
func longestTildeRun(text string) int {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '~' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// fenceWidth is how many tildes fence a text whose longest run of tildes
// is longest.
func fenceWidth(longest int) int { return max(3, longest+1) }

func (p *plan) renderConstraints() string {
	var b []string
	for i, c := range p.constraints {
		numbered(&b, i+1, c.Text)
	}
	return bullets(b)
}

func (p *plan) renderTasks() string {
	var b []string
	for i, t := range p.tasks {
		b = taskLines(b, i+1, t)
	}
	return bullets(b)
}

// taskLines appends the lines of task t, numbered i, to b.
func taskLines(b []string, i int, t TaskAnnotation) []string {
	line := t.Instruction
	if t.Optional {
		line += " (optional)"
	}
	numbered(&b, i, line)
	if f := t.OutputFormat; f != nil {
		if f.Type != "" {
			b = append(b, "  - Output format: "+oneLine(f.Type))
		}
		if f.JSONSchema != nil {
			if schema, err := json.Marshal(f.JSONSchema); err == nil {
				b = append(b, "  - Schema: "+string(schema))
			}
		}
		if f.Example != "" {
			b = append(b, "  - Example: "+oneLine(f.Example))
		}
	}
	return b
}

// renderInput fences the user query (user text is never bare in a
// prompt), then the context, then a line per attachment.
func (p *plan) renderInput() string {
	in := p.input
	b := []string{fence(strings.TrimRight(in.UserQuery, "\n"))}
	if strings.TrimSpace(in.Context) != "" {
		b = append(b, "- Context:", fence(strings.TrimRight(in.Context, "\n")))
	}
	for _, a := range in.Attachments {
		b = append(b, attachmentLine(a))
	}
	return bullets(b)
}

// attachmentLine describes one attachment.
func attachmentLine(a Attachment) string {
	line := "- Attachment: " + oneLine(a.Name)
	var about []string
	if a.MIME != "" {
		about = append(about, oneLine(a.MIME))
	}
	if a.URI != "" {
		about = append(about, oneLine(a.URI))
	}
	if len(about) > 0 {
		line += " (" + strings.Join(about, ", ") + ")"
	}
	return line
}

// String describes the assembled prompt's size, for logs: never its text.
func (a Assembled) String() string {
	return fmt.Sprintf("prompt: %d chars, ~%d tokens, %d trimming decisions", a.Meta.Chars, a.Meta.Tokens, len(a.Meta.Decisions))
}
