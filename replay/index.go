package replay

import (
	"encoding/json"
	"hash/maphash"
	"math"
	"slices"
	"strings"
)

// Matching a request against every recorded one, each a walk of both
// bodies, is quadratic in the cassette: a cassette of a thousand identical
// calls makes a million walks. The index makes it about linear, with the
// same answers as that comparison (config.same, config.count):
//
//   - Recorded requests are grouped into classes: requests equal in all
//     that matching looks at (ignored fields left out, each number by
//     midNumber). Every request matches all of a class or none of it, and
//     has as many differences from each (sameClass says why), so a class is
//     compared once, through its first request, rep.
//   - Each class has a hash, weak, that two requests the default match
//     finds the same always share (numbers by their float64 value). A
//     request is compared only with the classes of its own weak hash:
//     usually one, the one it matches.
//
// Only the differences of the closest request are listed, in a miss; the
// others are only counted.

// hashSeed seeds the hashes of the index (of this process only).
var hashSeed = maphash.MakeSeed()

// class is the ready entries whose requests are equal in all that
// matching looks at.
type class struct {
	rep     norm
	weak    uint64
	members []*entry // in cassette order
	next    int      // members[:next] have all answered (used > 0)
}

// matchIndex groups the ready entries of a cassette into classes.
type matchIndex struct {
	classes []*class // in the order they were made
	byMid   map[uint64][]*class
	byWeak  map[uint64][]*class
}

// add puts a ready entry in its class.
func (x *matchIndex) add(cfg *config, e *entry) {
	if x.byMid == nil {
		x.byMid, x.byWeak = map[uint64][]*class{}, map[uint64][]*class{}
	}
	weak, mid := cfg.keys(&e.norm)
	var cl *class
	for _, c := range x.byMid[mid] {
		if cfg.sameClass(&c.rep, &e.norm) {
			cl = c
			break
		}
	}
	if cl == nil {
		cl = &class{rep: e.norm, weak: weak}
		x.classes = append(x.classes, cl)
		x.byMid[mid] = append(x.byMid[mid], cl)
		x.byWeak[weak] = append(x.byWeak[weak], cl)
	}
	i, _ := slices.BinarySearchFunc(cl.members, e.index, func(m *entry, index int) int { return m.index - index })
	cl.members = slices.Insert(cl.members, i, e)
	if i < cl.next {
		cl.next = i
	}
	e.class = cl
}

// remove takes an entry that is no longer ready out of its class.
func (x *matchIndex) remove(e *entry) {
	cl := e.class
	if cl == nil {
		return
	}
	e.class = nil
	i := slices.Index(cl.members, e)
	if i < 0 {
		return
	}
	cl.members = slices.Delete(cl.members, i, i+1)
	if i < cl.next {
		cl.next--
	}
}

// firstUnused returns the first member that has not answered, or nil.
func (cl *class) firstUnused() *entry {
	for cl.next < len(cl.members) && cl.members[cl.next].used > 0 {
		cl.next++
	}
	if cl.next < len(cl.members) {
		return cl.members[cl.next]
	}
	return nil
}

// lookup returns, of the ready entries the default match finds the same
// as gn, the first that has not answered and the last.
func (x *matchIndex) lookup(cfg *config, gn *norm) (first, last *entry) {
	weak, _ := cfg.keys(gn)
	for _, cl := range x.byWeak[weak] {
		if len(cl.members) == 0 || !cfg.same(gn, &cl.rep) {
			continue
		}
		if f := cl.firstUnused(); f != nil && (first == nil || f.index < first.index) {
			first = f
		}
		if l := cl.members[len(cl.members)-1]; last == nil || l.index > last.index {
			last = l
		}
	}
	return first, last
}

// leastUsed returns, of the ready entries the default match finds the
// same as gn, the first of those that answered the fewest times.
func (x *matchIndex) leastUsed(cfg *config, gn *norm) *entry {
	weak, _ := cfg.keys(gn)
	var least *entry
	for _, cl := range x.byWeak[weak] {
		if len(cl.members) == 0 || !cfg.same(gn, &cl.rep) {
			continue
		}
		for _, e := range cl.members {
			if least == nil || e.used < least.used || e.used == least.used && e.index < least.index {
				least = e
			}
		}
	}
	return least
}

// sameClass says a and b are equal in all that matching looks at:
// method, path, query, matched headers, whether the body is JSON, and the
// body: as bytes when it is not JSON, else as JSON with ignored fields
// left out and numbers compared by midNumber. A request then matches a
// if and only if it matches b, with as many differences; and a and b
// have the same keys.
//
// Numbers equal by midNumber are not always the same string, and may be
// shown otherwise in a Difference, so the differences listed in a miss
// are those of the request itself, not its class's.
func (cfg *config) sameClass(a, b *norm) bool {
	if a.isJSON != b.isJSON || a.multipart != b.multipart {
		return false
	}
	if !a.isJSON {
		if a.method != b.method || a.path != b.path || string(a.raw) != string(b.raw) {
			return false
		}
		return countValues(a.query, b.query, 0, 1) == 0 && countValues(a.header, b.header, 0, 1) == 0
	}
	return cfg.count(a, b, 1, true) == 0
}

// number is a JSON number reduced to how it compares. Two numbers equal
// by midNumber compare alike with any third by sameNumber: an integer
// (no '.', 'e' or 'E') equals another integer by its digits (0 and -0
// alike) and anything else by its float64 value; any other number
// equals others by its float64 value, or when that is out of range only
// by its spelling.
type number struct {
	kind byte // 'i': integer, digits; 'f': float64, bits; 's': spelling
	bits uint64
	s    string
}

func midNumber(n json.Number) number {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			s = "0"
		}
		return number{kind: 'i', s: s}
	}
	return weakNumber(n)
}

// weakNumber is the same for any two numbers sameNumber finds equal:
// their float64 value when it is in range, else the spelling (then
// sameNumber only finds the very same spelling equal).
func weakNumber(n json.Number) number {
	f, err := n.Float64()
	if err != nil {
		return number{kind: 's', s: string(n)}
	}
	if f == 0 {
		f = 0 // -0
	}
	return number{kind: 'f', bits: math.Float64bits(f)}
}

// keys hashes n: weak is the same for requests the default match finds
// the same, mid the same for those sameClass does.
func (cfg *config) keys(n *norm) (weak, mid uint64) {
	h := mix(hashString(n.method), hashString(n.path))
	h = mix(h, hashValues(n.query))
	h = mix(h, hashValues(n.header))
	if !n.isJSON {
		h = mix(h, maphash.Bytes(hashSeed, n.raw))
		return h, h
	}
	if n.multipart {
		h = mix(h, tagMultipart)
	}
	hs := hasher{ig: &cfg.ign}
	jw, jm := hs.hash(n.json)
	return mix(h, jw), mix(h, jm)
}

// hashValues hashes query parameters or headers, in any order, a name
// without values as if absent (as slices.Equal compares them).
func hashValues(v map[string][]string) uint64 {
	var sum uint64
	for k, vs := range v {
		if len(vs) == 0 {
			continue
		}
		h := hashString(k)
		for _, s := range vs {
			h = mix(h, hashString(s))
		}
		sum += mix(h, uint64(len(vs)))
	}
	return mix(0x7175657279, sum)
}

func hashNumber(n number) uint64 {
	if n.kind == 'f' {
		return mix(tagNumber, mix(uint64(n.kind), n.bits))
	}
	return mix(tagNumber, mix(uint64(n.kind), hashString(n.s)))
}

func hashString(s string) uint64 { return maphash.String(hashSeed, s) }

// mix combines two hashes.
func mix(a, b uint64) uint64 {
	h := a ^ (b + 0x9e3779b97f4a7c15 + a<<6 + a>>2)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// hasher hashes a decoded JSON value, ignored fields left out, objects in
// any key order.
type hasher struct {
	ig   *ignorer
	path []seg // kept only when ig is active
}

const (
	tagObject uint64 = iota + 1
	tagArray
	tagString
	tagNumber
	tagTrue
	tagFalse
	tagNull
	tagMultipart
)

// hash returns the weak hash of v (numbers by weakNumber) and the mid one
// (by midNumber).
func (h *hasher) hash(v any) (weak, mid uint64) {
	switch v := v.(type) {
	case map[string]any:
		var sw, sm uint64
		for k, x := range v {
			if !h.push(keySeg(k)) {
				continue
			}
			xw, xm := h.hash(x)
			h.pop()
			kh := hashString(k)
			sw += mix(kh, xw)
			sm += mix(kh, xm)
		}
		return mix(tagObject, sw), mix(tagObject, sm)
	case []any:
		weak, mid = tagArray, tagArray
		for i, x := range v {
			if !h.push(seg{i: i}) {
				continue
			}
			xw, xm := h.hash(x)
			h.pop()
			weak = mix(weak, mix(uint64(i), xw))
			mid = mix(mid, mix(uint64(i), xm))
		}
		return mix(weak, tagArray), mix(mid, tagArray)
	case string:
		s := mix(tagString, hashString(v))
		return s, s
	case json.Number:
		return hashNumber(weakNumber(v)), hashNumber(midNumber(v))
	case bool:
		if v {
			return tagTrue, tagTrue
		}
		return tagFalse, tagFalse
	}
	return tagNull, tagNull
}

// push enters the child s, and says whether it is to be hashed: false
// (and not entered) when it is ignored.
func (h *hasher) push(s seg) bool {
	if !h.ig.active() {
		return true
	}
	h.path = append(h.path, s)
	if h.ig.ignored(h.path) {
		h.path = h.path[:len(h.path)-1]
		return false
	}
	return true
}

func (h *hasher) pop() {
	if h.ig.active() {
		h.path = h.path[:len(h.path)-1]
	}
}
