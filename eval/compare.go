package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Comparison sets runs side by side, item by item: the first run is the
// baseline, each other is compared with it. It is built from results
// alone, in their order and the datasets' (maps are sorted), so that the
// same results give the same comparison, byte for byte, in every format.
type Comparison struct {
	Runs []ComparedRun `json:"runs"`
	// Scores are the names of the scores the trials got, sorted.
	Scores  []string       `json:"scores"`
	Items   []ComparedItem `json:"items"`
	Summary []ScoreSummary `json:"summary"`
	Totals  []RunTotals    `json:"totals"`
	Options CompareOptions `json:"-"`
}

// ComparedRun is one run: a variant of an experiment.
type ComparedRun struct {
	Label      string `json:"label"` // the variant's name, or EXPERIMENT/VARIANT when several experiments are compared
	Experiment string `json:"experiment"`
	Variant    string `json:"variant"`
	Model      string `json:"model,omitempty"`
}

// ComparedItem is one item across the runs.
type ComparedItem struct {
	Item      string `json:"item"`
	Asked     string `json:"asked"`     // the item's last user message
	Reference string `json:"reference"` // its reference answer's text
	Cells     []Cell `json:"cells"`     // one per run, in the runs' order
}

// Cell is one run's trial of an item.
type Cell struct {
	Missing bool   `json:"missing,omitempty"` // the run has no trial of this item
	Output  string `json:"output"`
	// Diff is the output's unified diff from the baseline's, by line;
	// empty for the baseline and for the same output.
	Diff   string          `json:"diff,omitempty"`
	Error  string          `json:"error,omitempty"`
	Scores []ComparedScore `json:"scores,omitempty"`

	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	LatencyMS    float64 `json:"latency_ms,omitempty"`
}

// ComparedScore is a score of a trial, and how it compares with the
// baseline's.
type ComparedScore struct {
	Name  string       `json:"name"`
	Value *store.Value `json:"value,omitempty"`
	// Delta is the change from the baseline, for numbers (and booleans,
	// as 0 and 1).
	Delta *float64 `json:"delta,omitempty"`
	// Outcome against the baseline: "win", "loss", "tie", or "" when
	// there is nothing to compare (the baseline, a missing score, two
	// categories that differ).
	Outcome string `json:"outcome,omitempty"`
}

// ScoreSummary counts, for one score and one run, the items it won, lost
// and tied against the baseline, and the score's mean.
type ScoreSummary struct {
	Score  string   `json:"score"`
	Run    string   `json:"run"`
	Wins   int      `json:"wins"`
	Losses int      `json:"losses"`
	Ties   int      `json:"ties"`
	Mean   *float64 `json:"mean,omitempty"` // over the items it scored, for numbers and booleans
	Scored int      `json:"scored"`
}

// RunTotals sums a run's trials.
type RunTotals struct {
	Run          string  `json:"run"`
	Trials       int     `json:"trials"`
	Errors       int     `json:"errors"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Unpriced     int     `json:"unpriced,omitempty"` // trials with a call that had no price
	LatencyMS    float64 `json:"latency_ms,omitempty"`
}

// CompareOptions configures [Compare].
type CompareOptions struct {
	// NoLatency leaves latency out: it is measured, and differs from
	// one run to the next where all else (given cassettes or fakes) is
	// the same.
	NoLatency bool
}

// Compare sets the runs of results side by side: every variant of each,
// in order, the first the baseline. Items are those of the first
// result, then any the others add.
func Compare(o CompareOptions, results ...*ExperimentResult) (*Comparison, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: nothing to compare", ErrExperiment)
	}
	c := &Comparison{Options: o}
	several := len(results) > 1
	type key struct{ run, item string }
	trials := map[key]*Trial{}
	var items []Item
	itemSeen := map[string]bool{}
	scoreSeen := map[string]bool{}
	for _, res := range results {
		for _, v := range res.Variants {
			label := v.Name
			if several {
				label = res.Experiment + "/" + v.Name
			}
			if slices.ContainsFunc(c.Runs, func(r ComparedRun) bool { return r.Label == label }) {
				return nil, fmt.Errorf("%w: two runs named %q", ErrExperiment, label)
			}
			c.Runs = append(c.Runs, ComparedRun{Label: label, Experiment: res.Experiment, Variant: v.Name, Model: v.Model})
		}
		for i := range res.Trials {
			t := &res.Trials[i]
			label := t.Variant
			if several {
				label = res.Experiment + "/" + t.Variant
			}
			trials[key{label, t.Item}] = t
			for _, s := range t.Scores {
				if !scoreSeen[s.Name] {
					scoreSeen[s.Name] = true
					c.Scores = append(c.Scores, s.Name)
				}
			}
		}
		for _, it := range res.Items {
			if !itemSeen[it.ID] {
				itemSeen[it.ID] = true
				items = append(items, it)
			}
		}
	}
	slices.Sort(c.Scores)

	sums := make([]ScoreSummary, len(c.Scores)*len(c.Runs))
	for si, name := range c.Scores {
		for ri, r := range c.Runs {
			sums[si*len(c.Runs)+ri] = ScoreSummary{Score: name, Run: r.Label}
		}
	}
	meanSum := make([]float64, len(sums))
	totals := make([]RunTotals, len(c.Runs))
	for ri, r := range c.Runs {
		totals[ri].Run = r.Label
	}

	for _, it := range items {
		ci := ComparedItem{Item: it.ID, Asked: lastUserText(it.Input)}
		if it.Reference != nil {
			ci.Reference = replyText(it.Reference)
		}
		var base *Trial
		for ri, r := range c.Runs {
			t := trials[key{r.Label, it.ID}]
			if ri == 0 {
				base = t
			}
			if t == nil {
				ci.Cells = append(ci.Cells, Cell{Missing: true})
				continue
			}
			cell := Cell{Output: replyText(t.Output), Error: t.Error,
				InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CostUSD: t.CostUSD}
			if !o.NoLatency {
				cell.LatencyMS = t.LatencyMS
			}
			if ri > 0 && base != nil {
				cell.Diff = lineDiff(replyText(base.Output), cell.Output, c.Runs[0].Label, r.Label)
			}
			tot := &totals[ri]
			tot.Trials++
			if t.Error != "" {
				tot.Errors++
			}
			tot.InputTokens += t.InputTokens
			tot.OutputTokens += t.OutputTokens
			tot.CostUSD += t.CostUSD
			if !t.Priced {
				tot.Unpriced++
			}
			tot.LatencyMS += cell.LatencyMS
			for si, name := range c.Scores {
				cs := ComparedScore{Name: name}
				v := scoreOf(t, name)
				if v != nil {
					cs.Value = v
					sum := &sums[si*len(c.Runs)+ri]
					sum.Scored++
					if f, ok := numeric(*v); ok {
						meanSum[si*len(c.Runs)+ri] += f
					}
				}
				if ri > 0 && base != nil {
					cs.Delta, cs.Outcome = against(scoreOf(base, name), v)
					sum := &sums[si*len(c.Runs)+ri]
					switch cs.Outcome {
					case "win":
						sum.Wins++
					case "loss":
						sum.Losses++
					case "tie":
						sum.Ties++
					}
				}
				cell.Scores = append(cell.Scores, cs)
			}
			ci.Cells = append(ci.Cells, cell)
		}
		c.Items = append(c.Items, ci)
	}
	for i := range sums {
		if sums[i].Scored > 0 && isNumericScore(c, sums[i].Score) {
			m := round(meanSum[i]/float64(sums[i].Scored), 4)
			sums[i].Mean = &m
		}
	}
	for i := range totals {
		totals[i].CostUSD = round(totals[i].CostUSD, 9)
		totals[i].LatencyMS = round(totals[i].LatencyMS, 3)
	}
	c.Summary, c.Totals = sums, totals
	return c, nil
}

func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

// isNumericScore says a score's values are numbers or booleans in every
// trial that has it.
func isNumericScore(c *Comparison, name string) bool {
	for _, it := range c.Items {
		for _, cell := range it.Cells {
			for _, s := range cell.Scores {
				if s.Name == name && s.Value != nil {
					if _, ok := numeric(*s.Value); !ok {
						return false
					}
				}
			}
		}
	}
	return true
}

func scoreOf(t *Trial, name string) *store.Value {
	if t == nil {
		return nil
	}
	for i := range t.Scores {
		if t.Scores[i].Name == name {
			return &t.Scores[i].Value
		}
	}
	return nil
}

// numeric is a value as a number: a number, or a boolean as 0 or 1.
func numeric(v store.Value) (float64, bool) {
	if f, ok := v.Float(); ok {
		return f, true
	}
	switch v.Kind() {
	case store.BoolValue:
		if v.String() == "true" {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// against compares a run's score with the baseline's: higher numbers and
// true win; the same is a tie; two different categories are neither.
func against(base, v *store.Value) (*float64, string) {
	if base == nil || v == nil {
		return nil, ""
	}
	b, okb := numeric(*base)
	f, okf := numeric(*v)
	if okb && okf {
		d := round(f-b, 6)
		switch {
		case d > 0:
			return &d, "win"
		case d < 0:
			return &d, "loss"
		}
		return &d, "tie"
	}
	if base.String() == v.String() {
		return nil, "tie"
	}
	return nil, ""
}

// lineDiff is the unified diff of two outputs, by line, with the runs'
// labels as file names; empty when they are the same.
func lineDiff(a, b, from, to string) string {
	if a == b {
		return ""
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: from, ToFile: to, Context: 2,
	})
	return d
}

// replyText is an answer on its own: its text, or the tools it calls.
func replyText(m *record.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.Text())
	for _, p := range m.Parts {
		if p.Type == record.PartToolCall {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "→ %s(%s)", p.Name, p.ArgumentsText())
		}
	}
	return b.String()
}

func lastUserText(msgs []record.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == record.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}
