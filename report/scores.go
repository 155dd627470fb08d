package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// ScoreGroup is the figures of one score over the calls of one model or
// one tag: how many scores, the mean of the numbers and booleans among
// them (a boolean's is the share of true), and the count of each
// category. A call's score counts under its call's model and tags; a
// conversation's, under its first record's.
type ScoreGroup struct {
	Name   string           `json:"name"` // the score
	By     string           `json:"by"`   // "model" or "tag"
	Key    string           `json:"key"`  // the model or the tag; "(none)" for records without
	Count  int64            `json:"count"`
	Mean   *float64         `json:"mean,omitempty"`
	Labels map[string]int64 `json:"labels,omitempty"`
}

// scoreTally attributes the scores given in [Options].Scores to the
// records they are on, as the records are added. It holds the scores and
// one entry per scored call or conversation: nothing for records without.
type scoreTally struct {
	scores  []store.Score
	byCall  map[string][]int // call ID → indices of its scores
	byTrace map[string][]int // trace ID → its conversation's scores, until its first record
	groups  map[[3]string]*scoreAcc
}

type scoreAcc struct {
	count, numbers int64
	sum            float64
	labels         map[string]int64
}

func newScoreTally(scores []store.Score) *scoreTally {
	t := &scoreTally{scores: store.LatestScores(scores), byCall: map[string][]int{}, byTrace: map[string][]int{}, groups: map[[3]string]*scoreAcc{}}
	for i, sc := range t.scores {
		if sc.CallID != "" {
			t.byCall[sc.CallID] = append(t.byCall[sc.CallID], i)
		} else {
			t.byTrace[sc.TraceID] = append(t.byTrace[sc.TraceID], i)
		}
	}
	return t
}

// add counts the scores on r, and its conversation's when r is the first
// of it the report sees.
func (t *scoreTally) add(r *record.Record) {
	if len(t.scores) == 0 {
		return
	}
	idx := t.byCall[r.CallID]
	if conv, ok := t.byTrace[r.TraceID]; ok && r.TraceID != "" {
		idx = append(slices.Clip(idx), conv...)
		delete(t.byTrace, r.TraceID)
	}
	if len(idx) == 0 {
		return
	}
	delete(t.byCall, r.CallID) // a record seen twice counts once
	model := r.Model
	if model == "" {
		model = "(none)"
	}
	tags := r.Tags
	if len(tags) == 0 {
		tags = []string{"(none)"}
	}
	for _, i := range idx {
		sc := t.scores[i]
		t.acc(sc.Name, "model", model).count1(sc.Value)
		for _, tag := range tags {
			t.acc(sc.Name, "tag", tag).count1(sc.Value)
		}
	}
}

func (t *scoreTally) acc(name, by, key string) *scoreAcc {
	k := [3]string{name, by, key}
	a := t.groups[k]
	if a == nil {
		a = &scoreAcc{}
		t.groups[k] = a
	}
	return a
}

func (a *scoreAcc) count1(v store.Value) {
	a.count++
	if x, ok := v.Float(); ok {
		a.numbers++
		a.sum += x
		return
	}
	if a.labels == nil {
		a.labels = map[string]int64{}
	}
	a.labels[v.Label()]++
}

// report returns the groups, by score, then model before tag, then key.
func (t *scoreTally) report() []ScoreGroup {
	out := []ScoreGroup{}
	for k, a := range t.groups {
		g := ScoreGroup{Name: k[0], By: k[1], Key: k[2], Count: a.count, Labels: a.labels}
		if a.numbers > 0 {
			m := a.sum / float64(a.numbers)
			g.Mean = &m
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.By != b.By {
			return a.By == "model"
		}
		return a.Key < b.Key
	})
	return out
}

// Figure is a group's figure as the reports write it: the mean, the
// categories, or both.
func (g ScoreGroup) Figure() string {
	var parts []string
	if g.Mean != nil {
		parts = append(parts, "mean "+strconv.FormatFloat(*g.Mean, 'g', 3, 64))
	}
	labels := make([]string, 0, len(g.Labels))
	for l := range g.Labels {
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool {
		return g.Labels[labels[i]] > g.Labels[labels[j]] || g.Labels[labels[i]] == g.Labels[labels[j]] && labels[i] < labels[j]
	})
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf("%s %d", l, g.Labels[l]))
	}
	return strings.Join(parts, ", ")
}

// markdownScores writes the scores section, when there are scores.
func (r *Report) markdownScores(m *mdWriter) {
	if len(r.Scores) == 0 {
		return
	}
	m.printf("## Scores\n\nEach score by the model and the tags of the call it is on (a conversation's: its first call). A boolean's mean is the share of true.\n\n")
	var rows [][]string
	for _, g := range r.Scores {
		rows = append(rows, []string{md(g.Name), g.By, md(g.Key), num(g.Count), md(g.Figure())})
	}
	m.table("lllrl", []string{"Score", "By", "Model or tag", "Scores", "Figure"}, rows)
}

// scoresHTML is the HTML report's scores section.
const scoresHTML = `{{define "scores"}}{{if .}}
<section id="scores">
<h2>Scores</h2>
<p>Each score by the model and the tags of the call it is on (a conversation's: its first call). A boolean's mean is the share of true.</p>
<table>
<tr><th>Score</th><th>By</th><th>Model or tag</th><th class="n">Scores</th><th>Figure</th></tr>
{{- range .}}
<tr><td>{{.Name}}</td><td>{{.By}}</td><td>{{.Key}}</td><td class="n">{{num .Count}}</td><td>{{.Figure}}</td></tr>
{{- end}}
</table>
</section>
{{end}}{{end}}`
