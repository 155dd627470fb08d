package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Variant is one way of answering a dataset's items: a model, a system
// prompt, parameters. An experiment runs each item against each variant.
type Variant struct {
	Name string `json:"name"`
	// Model replaces the item's model; empty keeps it.
	Model string `json:"model,omitempty"`
	// System replaces the item's system messages; empty keeps them.
	System string `json:"system,omitempty"`
	// Params are set over the item's parameters (temperature, max_tokens
	// ...).
	Params map[string]json.RawMessage `json:"params,omitempty"`
}

// Call is one item asked of one variant, as a [Task] gets it.
type Call struct {
	Item    *Item
	Variant Variant
	// Client records what it sends: build the SDK client of your choice
	// on it (go-openai's, openai-go's, genai's, anthropic-sdk-go's), and
	// every call of the task is recorded, tagged with the experiment and
	// the variant.
	Client *http.Client
}

// Messages are the item's input with the variant's system prompt, if it
// has one, in place of the item's system messages.
func (c Call) Messages() []record.Message {
	if c.Variant.System == "" {
		return c.Item.Input
	}
	out := []record.Message{record.TextMessage(record.RoleSystem, c.Variant.System)}
	for _, m := range c.Item.Input {
		if m.Role != record.RoleSystem {
			out = append(out, m)
		}
	}
	return out
}

// Model is the model asked: the variant's, or the item's.
func (c Call) Model() string {
	if c.Variant.Model != "" {
		return c.Variant.Model
	}
	s, _ := record.String(c.Item.Params["model"])
	return s
}

// Params are the item's parameters with the variant's set over them, and
// the model the variant's.
func (c Call) Params() map[string]json.RawMessage {
	p := make(map[string]json.RawMessage, len(c.Item.Params)+len(c.Variant.Params)+1)
	for k, v := range c.Item.Params {
		p[k] = v
	}
	for k, v := range c.Variant.Params {
		p[k] = v
	}
	if m := c.Model(); m != "" {
		b, _ := json.Marshal(m)
		p["model"] = b
	}
	return p
}

// Task asks one item of one variant through c.Client, with ctx (which
// carries the trial's trace, tags and metadata: pass it on). The answer
// is what the last call it made answered.
type Task func(ctx context.Context, c Call) error

// Experiment runs a dataset against variants (see [RunExperiment]).
type Experiment struct {
	Name     string
	Variants []Variant
	Task     Task
	// Evaluators score each trial: its records as the subject, the
	// item's reference beside them (see [Subject.Reference]).
	Evaluators []Evaluator
	// Workers bounds the trials run at once; default GOMAXPROCS.
	Workers int
	// Transport is what the recorded client sends through; nil is
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Sinks receive the trials' records too (a store, a JSONL file).
	Sinks []record.Sink
	// Previous is an earlier result of this experiment: its trials that
	// did not fail are kept and not run again (a run stopped half way
	// resumes).
	Previous *ExperimentResult
	// Progress, when not nil, is told how many trials are done, of how
	// many.
	Progress func(done, total int64)
}

// Trial is one item asked of one variant: what came back, what it cost,
// and its scores.
type Trial struct {
	Item    string `json:"item"`
	Variant string `json:"variant"`
	// TraceID is the trial's trace: its records carry it.
	TraceID string          `json:"trace_id"`
	CallIDs []string        `json:"call_ids,omitempty"`
	Output  *record.Message `json:"output,omitempty"`
	Error   string          `json:"error,omitempty"`

	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
	// Priced says every call of the trial had a price: CostUSD is whole.
	Priced    bool    `json:"priced,omitempty"`
	LatencyMS float64 `json:"latency_ms,omitempty"`

	Scores []store.Score `json:"scores,omitempty"`
}

// ExperimentResult is what [RunExperiment] gives: every trial, in the
// dataset's order, each item's variants in the experiment's order.
type ExperimentResult struct {
	Experiment     string    `json:"experiment"`
	Dataset        string    `json:"dataset"`
	DatasetVersion string    `json:"dataset_version"`
	Variants       []Variant `json:"variants"`
	Trials         []Trial   `json:"trials"`
	// Items are the dataset's items asked, for a comparison to show.
	Items []Item `json:"items"`
}

// Tags and metadata keys the trials' records carry.
const (
	// ExperimentTag marks the records of an experiment's trials.
	ExperimentTag = "llmhistory.experiment"
	// MetaExperiment, MetaVariant and MetaItem are the metadata keys of
	// a trial's records: the experiment's name, the variant's, the item's
	// ID.
	MetaExperiment = "experiment"
	MetaVariant    = "variant"
	MetaItem       = "dataset_item"
)

// ErrExperiment: an experiment that cannot run (no task, no variant,
// two variants of one name), or a result that cannot be read.
var ErrExperiment = errors.New("eval: experiment")

// RunExperiment asks every item of d of every variant of e, through e.Task
// and a recorder of its own: each trial's calls are recorded (into
// e.Sinks too) on a trace of their own, tagged [ExperimentTag], with the
// experiment, variant and item in their metadata. Each trial is then
// scored by e.Evaluators. At most e.Workers trials run at once.
//
// A trial that fails (its task returned an error, or made no call) is
// kept with its error; RunExperiment returns an error only when ctx
// ends, with the trials done so far (give them as e.Previous to go on).
func RunExperiment(ctx context.Context, d *Dataset, e Experiment) (*ExperimentResult, error) {
	if e.Task == nil || len(e.Variants) == 0 {
		return nil, fmt.Errorf("%w: a task and at least one variant", ErrExperiment)
	}
	seen := map[string]bool{}
	for _, v := range e.Variants {
		if v.Name == "" || seen[v.Name] {
			return nil, fmt.Errorf("%w: variants need names, each its own (%q)", ErrExperiment, v.Name)
		}
		seen[v.Name] = true
	}
	res := &ExperimentResult{Experiment: e.Name, Dataset: d.Name, DatasetVersion: d.Version(),
		Variants: e.Variants, Items: d.Items, Trials: make([]Trial, len(d.Items)*len(e.Variants))}
	done := map[[2]string]Trial{}
	if e.Previous != nil {
		for _, t := range e.Previous.Trials {
			if t.Error == "" && t.Output != nil {
				done[[2]string{t.Item, t.Variant}] = t
			}
		}
	}

	col := &collector{byTrace: map[string][]record.Record{}}
	opts := []middleware.Option{middleware.WithSink(col)}
	for _, s := range e.Sinks {
		opts = append(opts, middleware.WithSink(s))
	}
	rec := middleware.NewRecorder(opts...)
	client := rec.Client(&http.Client{Transport: e.Transport})

	workers := e.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := int64(len(res.Trials))
	var finished atomic.Int64
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				it, v := &d.Items[i/len(e.Variants)], e.Variants[i%len(e.Variants)]
				res.Trials[i] = Trial{Item: it.ID, Variant: v.Name, TraceID: trialTrace(e.Name, v.Name, it.ID)}
				if t, ok := done[[2]string{it.ID, v.Name}]; ok {
					res.Trials[i] = t
				} else {
					res.Trials[i].Error = runTask(ctx, e, it, v, client, res.Trials[i].TraceID)
				}
				if e.Progress != nil {
					e.Progress(finished.Add(1), total)
				}
			}
		}()
	}
feed:
	for i := range res.Trials {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := rec.Close(); err != nil {
		return res, err
	}

	for i := range res.Trials {
		t := &res.Trials[i]
		if _, kept := done[[2]string{t.Item, t.Variant}]; kept || t.Item == "" {
			continue
		}
		recs := col.take(t.TraceID)
		t.fill(recs)
		if t.Error != "" || len(recs) == 0 {
			continue
		}
		it := d.Item(t.Item)
		for _, ev := range e.Evaluators {
			scores, err := Score(ctx, ev, Subject{Records: recs, Reference: it.Reference})
			if err != nil {
				t.Error = err.Error()
				continue
			}
			t.Scores = append(t.Scores, scores...)
		}
		slices.SortStableFunc(t.Scores, func(a, b store.Score) int { return strings.Compare(a.Name, b.Name) })
	}
	res.Trials = slices.DeleteFunc(res.Trials, func(t Trial) bool { return t.Item == "" }) // not reached: ctx ended
	return res, ctx.Err()
}

// trialTrace is a trial's trace ID: the same for the same experiment,
// variant and item, so that a trial run again is found in a store by it.
func trialTrace(exp, variant, item string) string {
	return "exp:" + exp + ":" + variant + ":" + item
}

// runTask runs the task for one trial, and returns its error's text.
func runTask(ctx context.Context, e Experiment, it *Item, v Variant, client *http.Client, trace string) (failure string) {
	defer func() {
		if p := recover(); p != nil {
			failure = fmt.Sprintf("the task panicked: %v", p)
		}
	}()
	ctx = middleware.WithTrace(ctx, trace)
	ctx = middleware.WithTags(ctx, ExperimentTag)
	ctx = middleware.WithMetadata(ctx, MetaExperiment, e.Name)
	ctx = middleware.WithMetadata(ctx, MetaVariant, v.Name)
	ctx = middleware.WithMetadata(ctx, MetaItem, it.ID)
	if err := e.Task(ctx, Call{Item: it, Variant: v, Client: client}); err != nil {
		return err.Error()
	}
	return ""
}

// fill sets what a trial's records say: its calls, its answer (the last
// call's), tokens, cost and latency summed.
func (t *Trial) fill(recs []record.Record) {
	if len(recs) == 0 {
		if t.Error == "" {
			t.Error = "the task made no call"
		}
		return
	}
	t.Priced = true
	for _, r := range recs {
		t.CallIDs = append(t.CallIDs, r.CallID)
		if r.Usage != nil {
			t.InputTokens += int64(r.Usage.InputTokens)
			t.OutputTokens += int64(r.Usage.OutputTokens)
		}
		if r.Cost != nil {
			t.CostUSD += r.Cost.USD
		} else {
			t.Priced = false
		}
		t.LatencyMS += r.DurationMS
	}
	last := recs[len(recs)-1]
	t.Output = last.Output
	if !last.Outcome.OK && t.Error == "" {
		t.Error = "the last call failed: " + last.Outcome.ErrorType
		if last.ErrorMessage != "" {
			t.Error += ": " + last.ErrorMessage
		}
	}
}

// collector keeps the records of the trials by trace, in the order they
// were appended.
type collector struct {
	mu      sync.Mutex
	byTrace map[string][]record.Record
}

func (c *collector) Append(_ context.Context, r record.Record) error {
	c.mu.Lock()
	c.byTrace[r.TraceID] = append(c.byTrace[r.TraceID], r)
	c.mu.Unlock()
	return nil
}

func (c *collector) take(trace string) []record.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := c.byTrace[trace]
	delete(c.byTrace, trace)
	slices.SortStableFunc(recs, func(a, b record.Record) int { return strings.Compare(a.CallID, b.CallID) })
	return recs
}

// ReadExperimentResult reads a result [ExperimentResult.WriteTo] wrote.
func ReadExperimentResult(r io.Reader) (*ExperimentResult, error) {
	var res ExperimentResult
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("%w result: %v", ErrExperiment, err)
	}
	if res.Experiment == "" && len(res.Trials) == 0 {
		return nil, fmt.Errorf("%w result: no experiment in it", ErrExperiment)
	}
	return &res, nil
}

// WriteTo writes the result as indented JSON.
func (res *ExperimentResult) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return 0, err
	}
	return b.WriteTo(w)
}

// OpenAIChat is a [Task] that asks the OpenAI chat completions API (or
// a server compatible with it) at baseURL ("https://api.openai.com/v1")
// with the item's messages in OpenAI's shape, its tools by name, and the
// call's parameters. It is what llmhistory experiment runs.
func OpenAIChat(baseURL, apiKey string) Task {
	return func(ctx context.Context, c Call) error {
		in := &Item{Input: c.Messages(), Tools: c.Item.Tools, Reference: ptr(record.TextMessage(record.RoleAssistant, "."))}
		ex, err := openAIExample(in, nil)
		if err != nil {
			return err
		}
		line := ex.(openAIExampleLine)
		body := map[string]any{}
		for k, v := range c.Params() {
			body[k] = v
		}
		body["messages"] = line.Messages[:len(line.Messages)-1] // the placeholder answer left out
		if len(line.Tools) > 0 {
			body["tools"] = line.Tools
		}
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/chat/completions", bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey)
		}
		resp, err := c.Client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
		}
		io.Copy(io.Discard, resp.Body)
		return nil
	}
}
