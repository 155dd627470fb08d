package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Model is the model a [Judge] asks. [OpenAIModel] speaks the OpenAI chat
// completions API (and every server compatible with it); implement it
// over any other client.
//
// Complete must honour ctx: the judge gives each verdict a deadline.
type Model interface {
	Complete(ctx context.Context, p Prompt) (Reply, error)
}

// Prompt is what a judge sends: a system message and a user message.
type Prompt struct {
	System, User string
}

// Reply is a model's answer to a [Prompt].
type Reply struct {
	Text string
	// Refusal is the model's refusal, when its API says it refused
	// (OpenAI's message.refusal) rather than answering.
	Refusal string
	// Model is the model that answered, and Usage its tokens, when the
	// API says: they price the verdict against a [Budget].
	Model string
	Usage *record.Usage
}

// Scale is the kind of verdict a judge gives.
type Scale struct {
	// Kind is store.NumberValue (a number from Min to Max),
	// store.BoolValue (pass or fail) or store.CategoryValue (one of
	// Categories).
	Kind       store.ValueKind
	Min, Max   float64
	Categories []string
}

// describe says in the prompt what the score must be.
func (s Scale) describe() string {
	switch s.Kind {
	case store.BoolValue:
		return `"score" is true when the answer meets the rubric, false when it does not.`
	case store.CategoryValue:
		q := make([]string, len(s.Categories))
		for i, c := range s.Categories {
			q[i] = strconv.Quote(c)
		}
		return `"score" is exactly one of the strings ` + strings.Join(q, ", ") + `.`
	}
	return `"score" is a number from ` + strconv.FormatFloat(s.Min, 'g', -1, 64) + ` to ` + strconv.FormatFloat(s.Max, 'g', -1, 64) + `.`
}

func (s Scale) check() error {
	switch s.Kind {
	case store.NumberValue:
		if !(s.Min < s.Max) || math.IsInf(s.Min, 0) || math.IsInf(s.Max, 0) {
			return fmt.Errorf("eval: a judge's numeric scale needs Min < Max, finite (got %v to %v)", s.Min, s.Max)
		}
	case store.BoolValue:
	case store.CategoryValue:
		if len(s.Categories) == 0 || slices.Contains(s.Categories, "") {
			return errors.New("eval: a judge's categorical scale needs its categories, none empty")
		}
	default:
		return errors.New("eval: a judge's scale has no kind (number, boolean or category)")
	}
	return nil
}

// DefaultSystem is the system message of a judge that names none.
const DefaultSystem = `You are an impartial evaluator. You judge an AI assistant's answer against a rubric. ` +
	`Reply with one JSON object and nothing else: {"score": ..., "reason": "one sentence"}.`

// DefaultTemplate is the user message of a judge that names none: a
// text/template given a [TemplateData].
const DefaultTemplate = `Rubric:
{{.Rubric}}

The conversation, as the application sent it to the model (JSON):
{{.Input}}

The answer to judge:
{{.Output}}

{{.Format}}`

// TemplateData is what a judge's template is given.
type TemplateData struct {
	Rubric string
	// Input is what the call judged sent: its args as JSON (the messages,
	// in its provider's shape), the end kept when long. For a judge of
	// conversations, the last call's args, which hold the conversation.
	Input string
	// Output is the answer: the call's output, and its tool calls as
	// JSON lines.
	Output string
	// Format says what the reply must be: the JSON object and its score.
	Format string
	// Call is the record judged.
	Call *record.Record
}

// maxInput bounds the args a judge is shown, in bytes.
const maxInput = 48 << 10

// JudgeOptions configures [NewJudge].
type JudgeOptions struct {
	// Name is the score's name: "helpfulness". Required.
	Name string
	// Version changes with what the judge judges. Empty: a digest of the
	// rubric, the scale, the system message, the template and ModelName,
	// so that a change of any gives scores apart from the old.
	Version string
	// Rubric says what a good answer is. Required.
	Rubric string
	Scale  Scale
	// System and Template are the prompt; empty means DefaultSystem and
	// DefaultTemplate.
	System, Template string
	// Model answers. Required. Give it a client the recorder wraps
	// (Recorder.Client): the judge's calls are then recorded, tagged
	// [Tag], and never judged in their turn.
	Model Model
	// ModelName names the model in the version digest.
	ModelName string
	// Conversation makes a judge of whole conversations.
	Conversation bool
	// Timeout bounds one verdict; default 60 seconds.
	Timeout time.Duration
	// Budget, when not nil, bounds what this judge and any other sharing
	// it spend.
	Budget *Budget
	// Prices prices a verdict's usage for the budget; nil is
	// cost.Default().
	Prices *cost.Table
}

// Judge is an LLM-as-judge: an [Evaluator] whose verdict comes from a
// model asked with a rubric. Its verdict is read strictly: the reply must
// be one JSON object, alone (a Markdown fence around it is allowed),
// {"score": S, "reason": "..."}, with S of the scale's kind and in its
// range. Anything else is an error wrapping [ErrVerdict] (or [ErrRefused]
// when the model declined), never a score of zero.
type Judge struct {
	info Info
	o    JudgeOptions
	tmpl *template.Template
}

// NewJudge returns a judge, or an error naming what is missing.
func NewJudge(o JudgeOptions) (*Judge, error) {
	switch {
	case o.Name == "":
		return nil, errors.New("eval: a judge needs a name (the score's)")
	case strings.TrimSpace(o.Rubric) == "":
		return nil, errors.New("eval: a judge needs a rubric")
	case o.Model == nil:
		return nil, errors.New("eval: a judge needs a model")
	}
	if err := o.Scale.check(); err != nil {
		return nil, err
	}
	if o.System == "" {
		o.System = DefaultSystem
	}
	if o.Template == "" {
		o.Template = DefaultTemplate
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	tmpl, err := template.New(o.Name).Option("missingkey=error").Parse(o.Template)
	if err != nil {
		return nil, fmt.Errorf("eval: judge %s: template: %w", o.Name, err)
	}
	if o.Version == "" {
		o.Version = digest(o.Rubric, o.Scale.describe(), o.System, o.Template, o.ModelName, strconv.FormatBool(o.Conversation))
	}
	return &Judge{
		info: Info{Name: o.Name, Version: o.Version, Source: store.SourceModel, Conversation: o.Conversation},
		o:    o,
		tmpl: tmpl,
	}, nil
}

// Info implements [Evaluator].
func (j *Judge) Info() Info { return j.info }

// Evaluate implements [Evaluator]: it asks the model once. A call that
// failed is not judged; nor is one without an answer (its output was not
// kept, or it had none).
func (j *Judge) Evaluate(ctx context.Context, s Subject) ([]store.Score, error) {
	call := s.Call()
	if call == nil || !call.Outcome.OK {
		return nil, nil
	}
	answer := answerText(call)
	if answer == "" {
		return nil, nil
	}
	var user bytes.Buffer
	err := j.tmpl.Execute(&user, TemplateData{
		Rubric: j.o.Rubric,
		Input:  tail(string(call.Args), maxInput),
		Output: answer,
		Format: `Reply with one JSON object and nothing else: {"score": ..., "reason": "one sentence"}. ` + j.o.Scale.describe(),
		Call:   call,
	})
	if err != nil {
		return nil, fmt.Errorf("eval: judge %s: template: %w", j.o.Name, err)
	}
	if err := j.o.Budget.reserve(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, j.o.Timeout)
	defer cancel()
	// The judge's own call is recorded, when its client is the
	// recorder's, tagged so that nothing ever judges it, and linked to
	// the call it judged.
	ctx = middleware.WithTags(ctx, Tag)
	ctx = middleware.WithMetadata(ctx, "llmhistory.eval.judged", call.CallID)
	reply, err := j.o.Model.Complete(ctx, Prompt{System: j.o.System, User: user.String()})
	j.o.Budget.spend(j.price(reply))
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("judge %s: %w", j.o.Name, err)
	}
	if reply.Refusal != "" {
		return nil, fmt.Errorf("%w: %.200s", ErrRefused, reply.Refusal)
	}
	v, reason, err := ParseVerdict(reply.Text, j.o.Scale)
	if err != nil {
		return nil, err
	}
	return []store.Score{{Name: j.o.Name, Value: v, Comment: reason}}, nil
}

func (j *Judge) price(r Reply) float64 {
	if r.Usage == nil {
		return 0
	}
	model := r.Model
	if model == "" {
		model = j.o.ModelName
	}
	c, ok := j.o.Prices.Cost(model, *r.Usage)
	if !ok {
		return 0
	}
	return c.USD
}

// answerText is what a call answered: its output, then its tool calls as
// JSON, one a line.
func answerText(r *record.Record) string {
	text := r.Output.Text()
	if !r.Output.Has(record.PartToolCall) {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for _, p := range r.Output.Parts {
		if p.Type != record.PartToolCall {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		j, _ := json.Marshal(map[string]string{"tool_call": p.Name, "arguments": p.ArgumentsText()})
		b.Write(j)
	}
	return b.String()
}

// tail keeps the last max bytes of s, marked when cut.
func tail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return "[... " + strconv.Itoa(len(s)-max) + " bytes before ...]" + s[len(s)-max:]
}

// ParseVerdict reads a judge's reply strictly: one JSON object, alone or
// in a Markdown code fence, {"score": S, "reason": "..."}, where S is of
// the scale's kind and within it ("reason" optional, other keys
// refused). A reply that begins as a refusal does is [ErrRefused];
// anything else unreadable is [ErrVerdict].
func ParseVerdict(text string, sc Scale) (v store.Value, reason string, err error) {
	body := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(body, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```"); ok {
			body = strings.TrimSpace(inner)
		}
	}
	fail := func(format string, a ...any) (store.Value, string, error) {
		if _, refused := refusing(body); refused && !strings.HasPrefix(body, "{") {
			return store.Value{}, "", fmt.Errorf("%w: %.200q", ErrRefused, body)
		}
		return store.Value{}, "", fmt.Errorf("%w: %s: %.200q", ErrVerdict, fmt.Sprintf(format, a...), text)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return fail("not a JSON object")
	}
	if dec.More() || dec.InputOffset() != int64(len(body)) {
		return fail("more than one JSON object")
	}
	for k := range raw {
		if k != "score" && k != "reason" {
			return fail("unexpected key %q", k)
		}
	}
	if r, ok := raw["reason"]; ok && json.Unmarshal(r, &reason) != nil {
		return fail("reason is not a string")
	}
	s, ok := raw["score"]
	if !ok {
		return fail("no score")
	}
	switch sc.Kind {
	case store.BoolValue:
		var b bool
		if json.Unmarshal(s, &b) != nil {
			return fail("score is not true or false")
		}
		v = store.Bool(b)
	case store.CategoryValue:
		var c string
		if json.Unmarshal(s, &c) != nil || !slices.Contains(sc.Categories, c) {
			return fail("score is not one of %q", sc.Categories)
		}
		v = store.Category(c)
	default:
		var f float64
		if json.Unmarshal(s, &f) != nil || f < sc.Min || f > sc.Max {
			return fail("score is not a number from %v to %v", sc.Min, sc.Max)
		}
		v = store.Number(f)
	}
	return v, reason, nil
}

// Budget bounds what judges spend: at most MaxUSD dollars (priced from
// the usage their replies report) and at most MaxCalls calls; zero is no
// bound. A judge asks it before each call, so a run overshoots MaxUSD by
// at most the calls in flight. Once spent, judges fail with [ErrBudget]
// and code evaluators go on. Safe for concurrent use; nil is no bound.
type Budget struct {
	MaxUSD   float64
	MaxCalls int

	mu    sync.Mutex
	usd   float64
	calls int
}

// Spent returns what the judges sharing b have spent, and their calls.
func (b *Budget) Spent() (usd float64, calls int) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usd, b.calls
}

func (b *Budget) reserve() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if (b.MaxCalls > 0 && b.calls >= b.MaxCalls) || (b.MaxUSD > 0 && b.usd >= b.MaxUSD) {
		return fmt.Errorf("%w: $%.4f in %d calls (bounds $%v, %d calls)", ErrBudget, b.usd, b.calls, b.MaxUSD, b.MaxCalls)
	}
	b.calls++
	return nil
}

func (b *Budget) spend(usd float64) {
	if b == nil || usd <= 0 {
		return
	}
	b.mu.Lock()
	b.usd += usd
	b.mu.Unlock()
}
