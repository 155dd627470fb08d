package view

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/store"
)

// ScoreReader is where the viewer reads scores: a [*store.Store], or the
// scores files beside JSONL histories ([OpenScoresFile]).
type ScoreReader interface {
	Scores(ctx context.Context, q store.ScoreQuery) ([]store.Score, error)
}

// scoreAggregator is a ScoreReader that aggregates (a store, a scores
// file): the overview's scores over time and by model.
type scoreAggregator interface {
	AggregateScores(ctx context.Context, q store.ScoreAggregateQuery) ([]store.ScoreGroup, error)
}

// ScoresFile is the scores of JSONL histories: the scores files beside
// them (store.ScoresPath), read whole on each page (they are small: one
// line per score), the latest score of each call or conversation, name
// and author kept, as a store keeps them. Annotations are appended to the
// first. It is safe for concurrent use.
type ScoresFile struct {
	paths []string
	src   Source // for the calls' models and days
	mu    sync.Mutex
	w     *store.ScoreJSONL
}

// OpenScoresFile returns the scores in files (none needs to exist yet),
// whose calls src holds.
func OpenScoresFile(paths []string, src Source) *ScoresFile {
	return &ScoresFile{paths: paths, src: src}
}

func (f *ScoresFile) all() ([]store.Score, error) {
	var all []store.Score
	for _, p := range f.paths {
		in, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		got, err := store.ReadScores(in)
		in.Close()
		all = append(all, got...)
		var le interface{ Unwrap() error }
		if err != nil && !errors.As(err, &le) {
			return nil, err
		}
	}
	return store.LatestScores(all), nil
}

// Scores implements [ScoreReader]. TraceID selects the scores that name
// the trace (a conversation's, and a call's written with its trace).
func (f *ScoresFile) Scores(_ context.Context, q store.ScoreQuery) ([]store.Score, error) {
	all, err := f.all()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sc := range all {
		switch {
		case len(q.CallIDs) > 0 && !slices.Contains(q.CallIDs, sc.CallID),
			q.TraceID != "" && sc.TraceID != q.TraceID,
			q.Name != "" && sc.Name != q.Name,
			q.Author != "" && sc.Author != q.Author,
			q.Source != "" && sc.Source != q.Source:
			continue
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b store.Score) int { return a.Time.Compare(b.Time) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return out, nil
}

// AddScore appends sc to the first scores file.
func (f *ScoresFile) AddScore(ctx context.Context, sc store.Score) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w == nil {
		w, err := store.OpenScoreJSONL(f.paths[0])
		if err != nil {
			return err
		}
		f.w = w
	}
	if err := f.w.AddScore(ctx, sc); err != nil {
		return err
	}
	return f.w.Flush()
}

// Close closes the file annotations were appended to.
func (f *ScoresFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w == nil {
		return nil
	}
	return f.w.Close()
}

// AggregateScores groups a score by the day or the model of the call it
// is on (a conversation's score: its first call), as a store does; it
// knows those two dimensions, and no filter.
func (f *ScoresFile) AggregateScores(ctx context.Context, q store.ScoreAggregateQuery) ([]store.ScoreGroup, error) {
	if len(q.By) != 1 || (q.By[0] != store.ByDay && q.By[0] != store.ByModel) {
		return nil, fmt.Errorf("%w: a scores file groups by day or by model", store.ErrBadGroup)
	}
	scores, err := f.Scores(ctx, store.ScoreQuery{Name: q.Name})
	if err != nil {
		return nil, err
	}
	groups := map[string]*store.ScoreGroup{}
	for _, sc := range scores {
		var call *Call
		if sc.CallID != "" {
			c, err := f.src.Call(ctx, sc.CallID)
			if err != nil {
				continue // a call this history does not hold
			}
			call = &c
		} else {
			tp, err := f.src.Trace(ctx, TraceQuery{ID: sc.TraceID, Limit: 1, SkipArgs: true})
			if err != nil || len(tp.Calls) == 0 {
				continue
			}
			call = &tp.Calls[0]
		}
		key, day := modelOf(&call.Record), time.Time{}
		if q.By[0] == store.ByDay {
			t, err := time.Parse(time.RFC3339Nano, call.Record.Timestamp)
			if err != nil {
				continue
			}
			day = t.UTC().Truncate(24 * time.Hour)
			key = day.Format(time.RFC3339)
		}
		g := groups[key]
		if g == nil {
			g = &store.ScoreGroup{Key: []string{key}, Time: day}
			groups[key] = g
		}
		addToGroup(g, sc.Value)
	}
	out := make([]store.ScoreGroup, 0, len(groups))
	for _, g := range groups {
		if n := g.Count - labelled(g); n > 0 {
			g.Mean /= float64(n)
		}
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key[0] < out[j].Key[0] })
	return out, nil
}

// addToGroup counts v in g, its Mean a running sum until divided.
func addToGroup(g *store.ScoreGroup, v store.Value) {
	first := g.Count-labelled(g) == 0
	g.Count++
	if x, ok := v.Float(); ok {
		if first || x < g.Min {
			g.Min = x
		}
		if first || x > g.Max {
			g.Max = x
		}
		g.Mean += x
		return
	}
	if g.Labels == nil {
		g.Labels = map[string]int64{}
	}
	g.Labels[v.Label()]++
}

func labelled(g *store.ScoreGroup) int64 {
	var n int64
	for _, c := range g.Labels {
		n += c
	}
	return n
}

// scoreSummary is a score's name and what its scores add up to, as a
// list's cell and the overview show it.
type scoreSummary struct {
	Name string
	Text string // "0.72", "✓ 3 ✗ 1", "off_topic"
	Bad  bool   // a low mean, more ✗ than ✓
	N    int
}

// summarizeScores sums up scores by name, in the order of first appearance.
func summarizeScores(scores []store.Score) []scoreSummary {
	type acc struct {
		n, yes, no int
		sum        float64
		labels     map[string]int
		kind       store.ValueKind
	}
	var order []string
	by := map[string]*acc{}
	for _, sc := range scores {
		a := by[sc.Name]
		if a == nil {
			a = &acc{labels: map[string]int{}, kind: sc.Value.Kind()}
			by[sc.Name] = a
			order = append(order, sc.Name)
		}
		a.n++
		switch sc.Value.Kind() {
		case store.BoolValue:
			if x, _ := sc.Value.Float(); x != 0 {
				a.yes++
			} else {
				a.no++
			}
		case store.NumberValue:
			x, _ := sc.Value.Float()
			a.sum += x
		case store.CategoryValue:
			a.labels[sc.Value.Label()]++
		}
	}
	out := make([]scoreSummary, 0, len(order))
	for _, name := range order {
		a := by[name]
		s := scoreSummary{Name: name, N: a.n}
		switch {
		case a.yes+a.no == a.n:
			s.Text, s.Bad = fmt.Sprintf("✓ %d ✗ %d", a.yes, a.no), a.no > a.yes
		case len(a.labels) == 0:
			mean := a.sum / float64(a.n)
			s.Text = strconv.FormatFloat(mean, 'g', 3, 64)
		default:
			best, n := "", 0
			for l, c := range a.labels {
				if c > n || c == n && l < best {
					best, n = l, c
				}
			}
			s.Text = best
			if len(a.labels) > 1 {
				s.Text += fmt.Sprintf(" +%d", len(a.labels)-1)
			}
		}
		out = append(out, s)
	}
	return out
}

// scoreOverview is one score on the overview: by day and by model.
type scoreOverview struct {
	Name           string
	ByDay, ByModel []store.ScoreGroup
}

// groupText is a group's figure as the overview shows it.
func groupText(g store.ScoreGroup) string {
	if len(g.Labels) > 0 {
		type lc struct {
			l string
			n int64
		}
		var ls []lc
		for l, n := range g.Labels {
			ls = append(ls, lc{l, n})
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].n > ls[j].n || ls[i].n == ls[j].n && ls[i].l < ls[j].l })
		s := ""
		for i, x := range ls {
			if i == 3 {
				s += " …"
				break
			}
			if i > 0 {
				s += ", "
			}
			s += fmt.Sprintf("%s %d", x.l, x.n)
		}
		return s
	}
	return "mean " + strconv.FormatFloat(g.Mean, 'g', 3, 64)
}

// scoresOf returns the scores q selects, or none when the viewer has no
// scores; an error of the reader is logged, not shown: scores are an
// addition to a page, not the page.
func (h *Handler) scoresOf(ctx context.Context, q store.ScoreQuery) []store.Score {
	if h.opts.Scores == nil {
		return nil
	}
	scores, err := h.opts.Scores.Scores(ctx, q)
	if err != nil && !errors.Is(err, context.Canceled) {
		h.opts.Logger.Warn("llmhistory view: scores", "err", err)
	}
	return scores
}

// overviewScores returns each score's figures by day and by model, for
// the scores named among the latest thousand.
func (h *Handler) overviewScores(ctx context.Context) []scoreOverview {
	agg, ok := h.opts.Scores.(scoreAggregator)
	if !ok {
		return nil
	}
	var names []string
	for _, sc := range h.scoresOf(ctx, store.ScoreQuery{Limit: 1000}) {
		if !slices.Contains(names, sc.Name) {
			names = append(names, sc.Name)
		}
	}
	slices.Sort(names)
	var out []scoreOverview
	for _, name := range names {
		o := scoreOverview{Name: name}
		var err error
		if o.ByDay, err = agg.AggregateScores(ctx, store.ScoreAggregateQuery{Name: name, By: []store.GroupBy{store.ByDay}}); err == nil {
			o.ByModel, err = agg.AggregateScores(ctx, store.ScoreAggregateQuery{Name: name, By: []store.GroupBy{store.ByModel}})
		}
		if err != nil {
			h.opts.Logger.Warn("llmhistory view: scores", "err", err)
			continue
		}
		out = append(out, o)
	}
	return out
}

// pageScores is what a page shows of scores.
type pageScores struct {
	List     []store.Score             // a call's, or a conversation's and its calls'
	Summary  map[string][]scoreSummary // the list's, by conversation
	Overview []scoreOverview
	Form     *annotateForm // the annotation form, when the reviewer may annotate
	Annotate bool          // the viewer annotates (the browser may not hold the token)
	Base     string
}

// scoreValue is a value as a page shows it: ✓ and ✗ for booleans (marks
// every font has, where an emoji may show as a box).
func scoreValue(v store.Value) string {
	if v.Kind() == store.BoolValue {
		if x, _ := v.Float(); x != 0 {
			return "✓ true"
		}
		return "✗ false"
	}
	return v.String()
}
