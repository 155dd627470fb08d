package view

import (
	"cmp"
	"container/heap"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/internal/quantile"
)

// DefaultLimit is the page size of a [Query] that gives none.
const DefaultLimit = 50

// MaxLimit bounds a page's size whatever a query asks.
const MaxLimit = 500

// cursor is a place in the newest-first order of conversations: after the
// conversation whose last activity is last and whose ID is id.
type cursor struct {
	last int64
	id   string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.last, 10) + "~" + c.id))
}

// ErrBadCursor is the error of a query whose Cursor no page gave.
var ErrBadCursor = errors.New("view: not a page cursor")

func parseCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, ErrBadCursor
	}
	last, id, ok := strings.Cut(string(b), "~")
	n, err := strconv.ParseInt(last, 10, 64)
	if !ok || err != nil {
		return cursor{}, ErrBadCursor
	}
	return cursor{last: n, id: id}, nil
}

// before reports whether a conversation (last, id) comes after c in the
// newest-first order: older, or as old with a greater ID.
func (c cursor) before(last int64, id string) bool {
	return last < c.last || last == c.last && id > c.id
}

// newer orders conversations newest first, then by ID.
func newer(al int64, aid string, bl int64, bid string) bool {
	if al != bl {
		return al > bl
	}
	return aid < bid
}

// topHeap keeps the first n conversations of the newest-first order: its
// root is the last of them, the one to drop.
type topHeap struct {
	ix  *index
	ids []int32
}

func (h *topHeap) Len() int { return len(h.ids) }
func (h *topHeap) Less(i, j int) bool {
	a, b := &h.ix.traces[h.ids[i]], &h.ix.traces[h.ids[j]]
	return newer(b.last, b.id, a.last, a.id)
}
func (h *topHeap) Swap(i, j int) { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *topHeap) Push(x any)    { h.ids = append(h.ids, x.(int32)) }
func (h *topHeap) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}

// conversations answers a query over the index; match, when not nil, is
// the set of conversations a text search found (by trace index).
func (ix *index) conversations(q Query, match func(ti int32) bool) (Page, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var after *cursor
	if q.Cursor != "" {
		c, err := parseCursor(q.Cursor)
		if err != nil {
			return Page{}, err
		}
		after = &c
	}
	f := ix.filter(q)
	h := &topHeap{ix: ix, ids: make([]int32, 0, limit+1)}
	total := 0
	for ti := range ix.traces {
		ti := int32(ti)
		if !ix.matchTrace(&f, ti) || match != nil && !match(ti) {
			continue
		}
		total++
		t := &ix.traces[ti]
		if after != nil && !after.before(t.last, t.id) {
			continue
		}
		if h.Len() < limit+1 {
			heap.Push(h, ti)
			continue
		}
		root := &ix.traces[h.ids[0]]
		if newer(t.last, t.id, root.last, root.id) {
			h.ids[0] = ti
			heap.Fix(h, 0)
		}
	}
	ids := h.ids
	slices.SortFunc(ids, func(a, b int32) int {
		ta, tb := &ix.traces[a], &ix.traces[b]
		if newer(ta.last, ta.id, tb.last, tb.id) {
			return -1
		}
		return 1
	})
	p := Page{Total: total}
	if len(ids) > limit {
		ids = ids[:limit]
		t := &ix.traces[ids[limit-1]]
		p.Next = cursor{last: t.last, id: t.id}.String()
	}
	p.Conversations = make([]Conversation, len(ids))
	for i, ti := range ids {
		p.Conversations[i] = ix.conversation(ti)
	}
	return p, nil
}

// Bucket sizes a series may use: the first that gives at most maxBuckets.
var bucketSizes = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour,
	6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour,
}

const maxBuckets = 60

// BucketFor returns the bucket size a series from first to last uses:
// the smallest of a minute, 5 and 15 minutes, an hour, 3, 6 and 12 hours,
// a day, a week and 30 days that needs at most 60 buckets.
func BucketFor(first, last time.Time) time.Duration {
	span := last.Sub(first)
	for _, b := range bucketSizes {
		if span/b < maxBuckets {
			return b
		}
	}
	return bucketSizes[len(bucketSizes)-1]
}

// Groups listed per dimension; the rest are summed as "(other)".
const maxGroups = 12

type groupAcc struct {
	Group
	// lat and ttfc are the one latency sketch (internal/quantile), as the
	// store's rollups and the report keep it: the same calls, the same
	// p50 and p95.
	lat, ttfc *quantile.Sketch
}

// stats aggregates the calls f selects.
func (ix *index) stats(q Query) Stats {
	f := ix.filter(q)
	var st Stats
	if f.none {
		return st
	}
	sel := make([]int32, 0, 1024)
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range ix.entries.len() {
		e := ix.entries.at(int32(i))
		if !ix.matchEntry(&f, e) {
			continue
		}
		sel = append(sel, int32(i))
		if e.start > 0 {
			first, last = min(first, e.start), max(last, e.start)
		}
	}
	if len(sel) == 0 {
		return st
	}
	var base time.Time
	if first <= last {
		st.Bucket = BucketFor(time.UnixMicro(first), time.UnixMicro(last))
		base = time.UnixMicro(first).UTC().Truncate(st.Bucket)
		n := int(time.UnixMicro(last).Sub(base)/st.Bucket) + 1
		st.Series = make([]Bucket, n)
		for i := range st.Series {
			st.Series[i].Start = base.Add(time.Duration(i) * st.Bucket)
		}
	}
	models := map[int32]*groupAcc{}
	users := map[int32]*groupAcc{}
	tags := map[int32]*groupAcc{}
	provs := map[int32]*groupAcc{}
	acc := func(m map[int32]*groupAcc, id int32, e *entry, latency bool) {
		if id < 0 {
			return
		}
		g := m[id]
		if g == nil {
			g = &groupAcc{}
			if latency {
				g.lat, g.ttfc = &quantile.Sketch{}, &quantile.Sketch{}
			}
			m[id] = g
		}
		g.Calls++
		if e.status != statusOK {
			g.Errors++
		}
		g.Tokens += int64(e.in) + int64(e.out)
		switch {
		case e.flags&flagPriced != 0:
			g.CostUSD += e.usd
		case e.unpriced():
			g.Unpriced++
		}
		if latency {
			g.lat.Add(e.dur)
			if e.flags&flagStreamed != 0 {
				g.ttfc.Add(e.ttfc)
			}
		}
	}
	for _, id := range sel {
		e := ix.entries.at(id)
		st.Calls++
		if e.status != statusOK {
			st.Errors++
		}
		if e.attempts > 1 {
			st.Retried++
		}
		st.InputTokens += int64(e.in)
		st.OutputTokens += int64(e.out)
		switch {
		case e.flags&flagPriced != 0:
			st.CostUSD += e.usd
		case e.unpriced():
			st.Unpriced++
			st.UnpricedTokens += int64(e.in) + int64(e.out)
		}
		if e.start > 0 && st.Series != nil {
			b := &st.Series[int(time.UnixMicro(e.start).Sub(base)/st.Bucket)]
			b.Calls++
			if e.status != statusOK {
				b.Errors++
			}
			b.Tokens += int64(e.in) + int64(e.out)
			if e.flags&flagPriced != 0 {
				b.CostUSD += e.usd
			}
		}
		acc(models, e.model, e, true)
		acc(users, e.user, e, false)
		if e.method >= 0 {
			acc(provs, ix.providerOf[e.method], e, true)
		}
		if e.tagset >= 0 {
			for _, t := range ix.tagsets[e.tagset] {
				acc(tags, t, e, false)
			}
		}
	}
	st.Models = groups(models, ix.models)
	st.Users = groups(users, ix.users)
	st.Tags = groups(tags, ix.tags)
	st.Providers = groups(provs, ix.providers)
	return st
}

// groups sorts a dimension's groups by spend, then calls, then name, and
// sums those past maxGroups as "(other)".
func groups(m map[int32]*groupAcc, tab *strtab) []Group {
	out := make([]Group, 0, len(m))
	for id, g := range m {
		g.Name = tab.name(id)
		if g.lat != nil {
			g.P50MS, g.P95MS = g.lat.Quantile(0.5), g.lat.Quantile(0.95)
			g.FirstChunkP50MS = g.ttfc.Quantile(0.5)
		}
		out = append(out, g.Group)
	}
	slices.SortFunc(out, func(a, b Group) int {
		if c := cmp.Compare(b.CostUSD, a.CostUSD); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(out) > maxGroups {
		other := Group{Name: fmt.Sprintf("(%d others)", len(out)-maxGroups+1)}
		for _, g := range out[maxGroups-1:] {
			other.Calls += g.Calls
			other.Errors += g.Errors
			other.Tokens += g.Tokens
			other.CostUSD += g.CostUSD
			other.Unpriced += g.Unpriced
		}
		out = append(out[:maxGroups-1], other)
	}
	return out
}

// facets lists the values the index knows, sorted, at most limit each.
func (ix *index) facets(limit int) Facets {
	list := func(t *strtab) []string {
		out := slices.Clone(t.names)
		slices.Sort(out)
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return out
	}
	return Facets{Users: list(ix.users), Tags: list(ix.tags), Models: list(ix.models), Providers: list(ix.providers)}
}
