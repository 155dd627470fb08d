package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// Group is what the records of one user, or of one tag, came to: the
// questions "what did user 42 do" and "what does the checkout assistant
// cost".
type Group struct {
	Name         string  `json:"name"`    // the user_id or tag; "(none)" for records without; "(other)" for the rest
	Records      int64   `json:"records"` // logical calls
	Errors       int64   `json:"errors"`  // records not ok, canceled included
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	USD          float64 `json:"usd"`              // over the priced records
	Unpriced     int64   `json:"unpriced_records"` // records with usage but no cost
	P50MS        float64 `json:"p50_ms"`           // latency over the records with a duration
	P95MS        float64 `json:"p95_ms"`
}

// grouper sums records by one key (a user, a tag), for at most max keys;
// the records of keys past it are summed as "(other)".
type grouper struct {
	max    int
	groups map[string]*groupSum
	other  groupSum
}

type groupSum struct {
	Group
	latency histogram
}

func newGrouper(max int) *grouper { return &grouper{max: max, groups: make(map[string]*groupSum)} }

func (g *grouper) add(key string, r *record.Record) {
	key = keyOf(key)
	s, ok := g.groups[key]
	if !ok {
		if len(g.groups) >= g.max {
			s = &g.other
		} else {
			s = &groupSum{Group: Group{Name: key}}
			g.groups[key] = s
		}
	}
	s.Records++
	if !r.Outcome.OK {
		s.Errors++
	}
	if u := r.Usage; u != nil {
		s.InputTokens += int64(u.InputTokens)
		s.OutputTokens += int64(u.OutputTokens)
		s.TotalTokens += int64(u.TotalTokens)
		if r.Cost == nil {
			s.Unpriced++
		}
	}
	if r.Cost != nil {
		s.USD += r.Cost.USD
	}
	if r.DurationMS > 0 && !math.IsInf(r.DurationMS, 0) {
		s.latency.add(r.DurationMS)
	}
}

// top returns the n groups with the most records (spend breaking ties),
// and the rest summed as "(other)", with the keys past the cap.
func (g *grouper) top(n int) []Group {
	all := make([]*groupSum, 0, len(g.groups))
	for _, s := range g.groups {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b *groupSum) int {
		return cmp.Or(cmp.Compare(b.Records, a.Records), cmp.Compare(b.USD, a.USD), strings.Compare(a.Name, b.Name))
	})
	out := []Group{}
	rest := g.other
	rest.Name = "(other)"
	rest.latency = histogram{sum: g.other.latency.sum}
	rest.latency.Merge(&g.other.latency.Sketch) // a copy: g.other stays as it is
	for i, s := range all {
		if i < n {
			out = append(out, s.summed())
			continue
		}
		rest.merge(s)
	}
	if rest.Records > 0 {
		out = append(out, rest.summed())
	}
	return out
}

func (s *groupSum) summed() Group {
	out := s.Group
	out.USD = math.Round(out.USD*1e9) / 1e9
	out.P50MS = math.Round(s.latency.quantile(0.50)*1000) / 1000
	out.P95MS = math.Round(s.latency.quantile(0.95)*1000) / 1000
	return out
}

func (s *groupSum) merge(o *groupSum) {
	s.Records += o.Records
	s.Errors += o.Errors
	s.InputTokens += o.InputTokens
	s.OutputTokens += o.OutputTokens
	s.TotalTokens += o.TotalTokens
	s.USD += o.USD
	s.Unpriced += o.Unpriced
	s.latency.merge(&o.latency)
}

// attributed reports whether groups say anything: some record had the
// key. A list of "(none)" alone is left out of the report.
func attributed(groups []Group) bool {
	return len(groups) > 1 || len(groups) == 1 && groups[0].Name != "(none)"
}

// msText formats a latency in milliseconds for a table: "–" when none
// was measured.
func msText(ms float64) string {
	if ms == 0 {
		return "–"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
}
