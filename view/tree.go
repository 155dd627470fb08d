package view

import (
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// treeBody is a conversation's calls as a tree (parent_call_id), each
// drawn on one time axis from the first call's start to the last one's
// end.
type treeBody struct {
	Conversation Conversation
	Rows         []treeRow
	Ticks        []treeTick
	Drawn        int // calls drawn, at most maxTreeCalls
	Tab          string
}

type treeRow struct {
	Call     *record.Record
	Level    int    // nesting under its parents, shown up to 8
	Start    string // after the first call's start
	Duration string
	X, W     float64 // on a 0 to 1000 axis
	Failed   bool
	Model    string
}

type treeTick struct {
	At    int // 0, 25, 50, 75 or 100: the percentage of the axis
	Label string
}

// maxTreeLevel is the deepest nesting drawn as indentation.
const maxTreeLevel = 8

func buildTree(tp TracePage) treeBody {
	b := treeBody{Conversation: tp.Conversation, Drawn: len(tp.Calls), Tab: "tree"}
	if len(tp.Calls) == 0 {
		return b
	}
	type node struct {
		rec      *record.Record
		start    time.Time
		children []int
	}
	nodes := make([]node, len(tp.Calls))
	byID := make(map[string]int, len(tp.Calls))
	var t0, t1 time.Time
	for i := range tp.Calls {
		r := &tp.Calls[i].Record
		start, _ := record.ParseTime(r.Timestamp)
		nodes[i] = node{rec: r, start: start}
		byID[r.CallID] = i
		end := start.Add(time.Duration(r.DurationMS * float64(time.Millisecond)))
		if t0.IsZero() || start.Before(t0) {
			t0 = start
		}
		if end.After(t1) {
			t1 = end
		}
	}
	var roots []int
	for i := range nodes {
		p, ok := byID[nodes[i].rec.ParentCallID]
		if nodes[i].rec.ParentCallID == "" || !ok || p == i {
			roots = append(roots, i)
			continue
		}
		nodes[p].children = append(nodes[p].children, i)
	}
	span := t1.Sub(t0)
	if span <= 0 {
		span = time.Millisecond
	}
	seen := make([]bool, len(nodes))
	var walk func(i, level int)
	walk = func(i, level int) {
		if seen[i] { // a cycle of parents in a damaged file
			return
		}
		seen[i] = true
		n := &nodes[i]
		r := n.rec
		off := n.start.Sub(t0)
		row := treeRow{
			Call: r, Level: min(level, maxTreeLevel),
			Start: "+" + human(float64(off)/float64(time.Millisecond)), Duration: human(r.DurationMS),
			X:      1000 * float64(off) / float64(span),
			Failed: r.Outcome.Status != record.StatusOK, Model: modelOf(r),
		}
		row.W = max(1000*r.DurationMS*float64(time.Millisecond)/float64(span), 2)
		row.X = min(row.X, 1000-row.W)
		b.Rows = append(b.Rows, row)
		for _, c := range n.children {
			walk(c, level+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for i := range nodes { // parents in a cycle: drawn at the top level
		if !seen[i] {
			walk(i, 0)
		}
	}
	for _, at := range []int{0, 25, 50, 75, 100} {
		b.Ticks = append(b.Ticks, treeTick{At: at, Label: human(float64(span) * float64(at) / 100 / float64(time.Millisecond))})
	}
	return b
}
