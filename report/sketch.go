package report

import (
	"hash/maphash"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/internal/quantile"
)

// maxKeyBytes bounds a key kept from a record (a method, a model, a trace
// id): record contents are untrusted, and one 60 MiB method name must not
// stay in memory for the whole run.
const maxKeyBytes = 256

// keyOf returns s cut to maxKeyBytes on a rune boundary; a cut key is a
// copy, so the long original can be freed.
func keyOf(s string) string {
	if len(s) <= maxKeyBytes {
		return s
	}
	cut := maxKeyBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.Clone(s[:cut]) + "…"
}

// counter counts occurrences of at most max distinct keys; occurrences of
// keys that arrive once it is full are counted in other.
type counter struct {
	max   int
	m     map[string]int64
	other int64
}

func newCounter(max int) *counter { return &counter{max: max, m: make(map[string]int64)} }

func (c *counter) add(key string, n int64) {
	key = keyOf(key)
	if _, ok := c.m[key]; ok || len(c.m) < c.max {
		c.m[key] += n
		return
	}
	c.other += n
}

// sorted returns the counts, largest first, ties by name.
func (c *counter) sorted() []Count {
	out := make([]Count, 0, len(c.m))
	for k, n := range c.m {
		out = append(out, Count{Name: k, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// histogram is the one latency sketch (internal/quantile: within 1% of
// the exact nearest-rank quantile, the same rule as the store's and the
// viewer's) and the sum of what it counted, for the mean.
type histogram struct {
	quantile.Sketch
	sum float64
}

func (h *histogram) add(ms float64) {
	n := h.Count()
	h.Sketch.Add(ms)
	if h.Count() > n {
		h.sum += min(ms, quantile.MaxValue)
	}
}

func (h *histogram) quantile(q float64) float64 { return h.Quantile(q) }

// merge adds o's values to h.
func (h *histogram) merge(o *histogram) {
	h.Sketch.Merge(&o.Sketch)
	h.sum += o.sum
}

// topK finds the keys with the largest totals in bounded memory with the
// Space-Saving algorithm (Metwally et al., 2005), in its weighted form:
// it tracks at most cap keys; a new key, once full, replaces the tracked
// key with the smallest total and inherits that total as its possible
// overestimate. While no key was ever replaced the totals are exact.
// Otherwise every total is an upper bound, too high by at most its err;
// since the tracked totals always add up to the whole stream's weight W
// (a replacement keeps the sum), the smallest, and so every err, is at
// most W/cap. N is int64 for counts of records (each weighing 1), float64
// for dollars.
//
// The heap is only needed to find the smallest total for a replacement,
// so it is built the first time one is due: until the counter is full
// (no more keys than cap, the common case) an increment is a map lookup
// and an addition, with no sifting.
type topK[N int64 | float64] struct {
	cap      int
	heap     []*tkEntry[N] // a min-heap on total once heaped
	index    map[string]*tkEntry[N]
	heaped   bool
	replaced bool
}

type tkEntry[N int64 | float64] struct {
	key   string
	count N
	err   N
	pos   int
}

func newTopK[N int64 | float64](cap int) *topK[N] {
	return &topK[N]{cap: cap, index: make(map[string]*tkEntry[N])}
}

// add adds w (> 0) to key's total.
func (t *topK[N]) add(key string, w N) {
	key = keyOf(key)
	if e, ok := t.index[key]; ok {
		e.count += w
		if t.heaped {
			t.down(e.pos)
		}
		return
	}
	if len(t.heap) < t.cap {
		// Never heaped yet: heaped is set only once the counter is full,
		// and it never shrinks.
		e := &tkEntry[N]{key: key, count: w, pos: len(t.heap)}
		t.heap = append(t.heap, e)
		t.index[e.key] = e
		return
	}
	if !t.heaped {
		for i := len(t.heap)/2 - 1; i >= 0; i-- {
			t.down(i)
		}
		t.heaped = true
	}
	t.replaced = true
	e := t.heap[0]
	delete(t.index, e.key)
	e.key = key
	e.err = e.count
	e.count += w
	t.index[e.key] = e
	t.down(0)
}

func (t *topK[N]) less(i, j int) bool { return t.heap[i].count < t.heap[j].count }

func (t *topK[N]) swap(i, j int) {
	t.heap[i], t.heap[j] = t.heap[j], t.heap[i]
	t.heap[i].pos = i
	t.heap[j].pos = j
}

func (t *topK[N]) down(i int) {
	n := len(t.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && t.less(r, l) {
			c = r
		}
		if !t.less(c, i) {
			return
		}
		t.swap(i, c)
		i = c
	}
}

// top returns copies of the k largest, largest first, ties by key.
func (t *topK[N]) top(k int) []tkEntry[N] {
	out := make([]tkEntry[N], 0, len(t.heap))
	for _, e := range t.heap {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].key < out[j].key
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// minCount is the smallest tracked total: the bound on any overestimate.
func (t *topK[N]) minCount() N {
	if len(t.heap) == 0 {
		return 0
	}
	if t.heaped {
		return t.heap[0].count
	}
	m := t.heap[0].count
	for _, e := range t.heap[1:] {
		m = min(m, e.count)
	}
	return m
}

// idSet finds repeated call ids exactly (up to 64-bit hash collisions,
// about one chance in 3·10^7 at a million ids) for the first max distinct
// ids; ids seen after that are not checked.
type idSet struct {
	max       int
	seed      maphash.Seed
	seen      map[uint64]struct{}
	dups      int64
	unchecked int64
}

func newIDSet(max int) *idSet {
	return &idSet{max: max, seed: maphash.MakeSeed(), seen: make(map[uint64]struct{})}
}

func (s *idSet) add(id string) {
	h := maphash.String(s.seed, id)
	if _, ok := s.seen[h]; ok {
		s.dups++
		return
	}
	if len(s.seen) >= s.max {
		s.unchecked++
		return
	}
	s.seen[h] = struct{}{}
}
