package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/redact"
)

// MatchFunc says whether a recorded request answers the one being made.
type MatchFunc func(got, recorded *Request) bool

// norm is a request reduced to what matching compares, computed once per
// recorded request.
type norm struct {
	method string
	path   string
	query  url.Values // without secret and ignored parameters
	header http.Header
	isJSON bool
	// multipart says json holds a multipart body's parts (see
	// decodeMultipart), not a JSON body.
	multipart bool
	json      any // the body decoded with UseNumber, when isJSON
	raw       []byte
}

// normalize reduces r under the cassette's matching options.
func (cfg *config) normalize(r *Request) norm {
	if cfg.redactor != nil {
		// A recording made without the redactor matches as one made
		// with it: both are compared redacted.
		c := *r
		cfg.redactRequest(&c)
		r = &c
	}
	n := norm{method: strings.ToUpper(r.Method), raw: r.Body}
	if r.URL != nil {
		n.path = r.URL.EscapedPath()
		n.query = safeURL(r.URL).Query()
		for name := range cfg.ignoredQuery {
			n.query.Del(name)
		}
	}
	if len(cfg.matchedHeaders) > 0 {
		n.header = make(http.Header, len(cfg.matchedHeaders))
		for _, k := range cfg.matchedHeaders {
			if v := r.Header.Values(k); len(v) > 0 {
				if isContentType(k) {
					v = withoutBoundary(v)
				}
				n.header[k] = v
			}
		}
	}
	if v, ok := decodeJSON(r.Body); ok {
		n.isJSON, n.json = true, v
	} else if v, ok := decodeMultipart(r.Header.Get("Content-Type"), r.Body); ok {
		n.isJSON, n.multipart, n.json = true, true, v
	}
	return n
}

// decodeJSON decodes a body that is exactly one JSON value.
func decodeJSON(b []byte) (any, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' && b[0] != '[' {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// Difference is one way a request differs from a recorded one.
type Difference struct {
	// Field is what differs: "method", "path", "query.NAME",
	// "header.NAME", "body" (the whole body, when either is not JSON), or
	// "body." and a gjson-style path into a JSON body
	// ("body.messages.1.content") or into the parts of a multipart body
	// ("body.parts.0.header.Content-Disposition", "body.parts.1.content").
	Field string
	// Recorded and Got are the two values, as compact JSON for JSON
	// values, with secrets redacted, shortened to about 80 bytes; "(absent)"
	// when there is none. Two long strings (or bodies) that differ past
	// their first bytes are both shown from just before the first
	// difference, an ellipsis marking what was cut:
	// "…tone: formal and brief.…" against "…tone: casual and brief.…".
	Recorded, Got string
}

func (d Difference) String() string {
	return d.Field + ": recorded " + d.Recorded + ", got " + d.Got
}

// absent stands for a missing value in a difference.
type absent struct{}

// maxValue is how much of a value a difference shows.
const maxValue = 80

// maxDiffs bounds the differences collected against one recorded
// request: enough to rank candidates, cheap on huge bodies.
const maxDiffs = 1000

// same is the default match: method, path, query, matched headers and
// body (as JSON when both are) all equal, ignored fields left out. It
// stops at the first difference and builds none.
func (cfg *config) same(got, rec *norm) bool {
	return cfg.count(got, rec, 1, false) == 0
}

// count counts the differences between got and rec that diff would
// emit, stopping at limit (>= 1): min(len(differences), limit) for
// limit maxDiffs. It builds no Difference, sorts no keys and formats no
// path. mid compares numbers as classes do (see sameClass) instead of by
// sameNumber.
func (cfg *config) count(got, rec *norm, limit int, mid bool) int {
	n := 0
	if got.method != rec.method {
		if n++; n == limit {
			return n
		}
	}
	if got.path != rec.path {
		if n++; n == limit {
			return n
		}
	}
	if n = countValues(rec.query, got.query, n, limit); n == limit {
		return n
	}
	if n = countValues(rec.header, got.header, n, limit); n == limit {
		return n
	}
	switch {
	case got.isJSON && rec.isJSON && got.multipart == rec.multipart:
		w := cmpWalker{ig: &cfg.ign, left: limit - n, mid: mid}
		w.walk(rec.json, got.json)
		n = limit - w.left
	case !bytes.Equal(got.raw, rec.raw):
		n++
	}
	return n
}

// countValues is diffValues counting: n differences so far, up to limit.
func countValues(rec, got map[string][]string, n, limit int) int {
	for k, r := range rec {
		if !slices.Equal(r, got[k]) {
			if n++; n == limit {
				return n
			}
		}
	}
	for k, g := range got {
		if _, ok := rec[k]; !ok && len(g) > 0 {
			if n++; n == limit {
				return n
			}
		}
	}
	return n
}

// differences lists up to maxDiffs differences between got and rec.
func (cfg *config) differences(got, rec *norm) []Difference {
	var out []Difference
	cfg.diff(got, rec, func(d Difference) bool {
		out = append(out, d)
		return len(out) < maxDiffs
	})
	return out
}

// diff calls emit for each difference until it returns false.
func (cfg *config) diff(got, rec *norm, emit func(Difference) bool) {
	if got.method != rec.method && !emit(Difference{"method", rec.method, got.method}) {
		return
	}
	if got.path != rec.path && !emit(Difference{"path", shorten(rec.path), shorten(got.path)}) {
		return
	}
	if !diffValues("query.", rec.query, got.query, emit) {
		return
	}
	if !diffValues("header.", rec.header, got.header, emit) {
		return
	}
	switch {
	case got.isJSON && rec.isJSON && got.multipart == rec.multipart:
		w := jsonWalker{ig: &cfg.ign, emit: emit}
		w.walk(rec.json, got.json)
	case !bytes.Equal(got.raw, rec.raw):
		emit(Difference{"body", rawValue(rec.raw, got.raw), rawValue(got.raw, rec.raw)})
	}
}

// diffValues compares query parameters or headers.
func diffValues(prefix string, rec, got map[string][]string, emit func(Difference) bool) bool {
	keys := slices.Sorted(maps.Keys(rec))
	for k := range got {
		if _, ok := rec[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		r, g := rec[k], got[k]
		if slices.Equal(r, g) {
			continue
		}
		if !emit(Difference{prefix + k, listValue(r), listValue(g)}) {
			return false
		}
	}
	return true
}

func listValue(v []string) string {
	switch len(v) {
	case 0:
		return "(absent)"
	case 1:
		return shorten(strconv.Quote(v[0]))
	}
	b, _ := json.Marshal(v)
	return shorten(string(b))
}

// rawValue shows a non-JSON body, from just before where it differs from
// other when that is past the first bytes.
func rawValue(b, other []byte) string {
	if len(b) == 0 {
		return "(absent)"
	}
	return excerpt(string(b), string(other), strconv.Quote)
}

// lead is how much of a value a difference shows before the first byte
// that differs, when the value is cut at its start.
const lead = 20

// excerpt shows s, a value that differs from other, quoted by quote and
// cut to about maxValue bytes. When the first difference is too far in
// for the head to show it, the excerpt starts lead bytes (quoted) before
// it, an ellipsis marking what was cut: a change in the middle of a long
// system prompt shows the changed part of both values, not the same head
// twice. Both are redacted first, so a cut never leaves part of a secret
// that redaction would no longer recognize.
func excerpt(s, other string, quote func(string) string) string {
	s, other = redact.Secrets(s), redact.Secrets(other)
	i := 0
	for i < len(s) && i < len(other) && s[i] == other[i] {
		i++
	}
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	start := i
	// Quoting never shortens, so a long raw head needs no quoting to know.
	if head := maxValue - 2*lead; i > head || quotedLen(s[:i], quote) > head {
		// Walk back rune by rune while the quoted lead fits.
		for n := 0; start > 0; {
			_, size := utf8.DecodeLastRuneInString(s[:start])
			q := quotedLen(s[start-size:start], quote)
			if n+q > lead {
				break
			}
			n += q
			start -= size
		}
	} else {
		start = 0
	}
	end := min(len(s), start+maxValue) // quoting never shortens: enough to fill the cut
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	v := cut(quote(s[start:end]))
	if start > 0 {
		return "…" + v
	}
	return v
}

// quotedLen is the length of s quoted, without the quotes.
func quotedLen(s string, quote func(string) string) int {
	return len(quote(s)) - 2
}

// seg is one step of a path into a JSON value: the key of an object's
// member, or (i >= 0) the index of an array's element.
type seg struct {
	key string
	i   int
}

func keySeg(k string) seg { return seg{key: k, i: -1} }

// String is the segment as a path shows it.
func (s seg) String() string {
	if s.i >= 0 {
		return strconv.Itoa(s.i)
	}
	return escapeKey(s.key)
}

// ignorer says which paths WithIgnoredFields leaves out: a path is
// ignored when a pattern has as many segments and each is "*", "#", or
// the path's segment (an index as strconv.Itoa writes it).
type ignorer struct {
	pats  []ignorePattern
	byLen []bool // byLen[n]: some pattern has n segments
}

type ignorePattern struct {
	segs []string
	idx  []int // idx[i]: anyIndex for "*" and "#", the index segs[i] names, or -1
}

const anyIndex = -2

func newIgnorer(paths [][]string) ignorer {
	var ig ignorer
	for _, p := range paths {
		ip := ignorePattern{segs: p, idx: make([]int, len(p))}
		for i, s := range p {
			ip.idx[i] = -1
			if s == "*" || s == "#" {
				ip.idx[i] = anyIndex
			} else if n, err := strconv.Atoi(s); err == nil && n >= 0 && strconv.Itoa(n) == s {
				ip.idx[i] = n
			}
		}
		ig.pats = append(ig.pats, ip)
		for len(ig.byLen) <= len(p) {
			ig.byLen = append(ig.byLen, false)
		}
		ig.byLen[len(p)] = true
	}
	return ig
}

// active says some path may be ignored: the walkers keep their path only
// then.
func (ig *ignorer) active() bool { return len(ig.pats) > 0 }

// ignored says whether path is left out. It costs nothing on paths longer
// than every pattern.
func (ig *ignorer) ignored(path []seg) bool {
	if len(path) >= len(ig.byLen) || !ig.byLen[len(path)] {
		return false
	}
	for _, p := range ig.pats {
		if len(p.segs) != len(path) {
			continue
		}
		ok := true
		for i, s := range path {
			switch {
			case p.idx[i] == anyIndex:
			case s.i >= 0:
				ok = p.idx[i] == s.i
			default:
				ok = p.segs[i] == s.key
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// cmpWalker counts the differences between two decoded JSON values, as
// jsonWalker finds them, in no particular order, until left reaches 0.
type cmpWalker struct {
	ig   *ignorer
	path []seg // kept only when ig is active
	left int
	mid  bool // numbers compared by midNumber, not sameNumber
}

// walk returns false once left reaches 0.
func (w *cmpWalker) walk(rec, got any) bool {
	keep := w.ig.active()
	if keep && w.ig.ignored(w.path) {
		return true
	}
	switch r := rec.(type) {
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			for k, rv := range r {
				gv, ok := g[k]
				if !ok {
					gv = absent{}
				}
				if !w.child(keySeg(k), rv, gv, keep) {
					return false
				}
			}
			for k, gv := range g {
				if _, ok := r[k]; !ok && !w.child(keySeg(k), absent{}, gv, keep) {
					return false
				}
			}
			return true
		}
	case []any:
		if g, ok := got.([]any); ok {
			for i := range max(len(r), len(g)) {
				if !w.child(seg{i: i}, elem(r, i), elem(g, i), keep) {
					return false
				}
			}
			return true
		}
	default:
		if sameLeaf(rec, got, w.mid) {
			return true
		}
	}
	w.left--
	return w.left > 0
}

func (w *cmpWalker) child(s seg, rec, got any, keep bool) bool {
	if !keep {
		return w.walk(rec, got)
	}
	w.path = append(w.path, s)
	ok := w.walk(rec, got)
	w.path = w.path[:len(w.path)-1]
	return ok
}

// jsonWalker compares two decoded JSON values leaf by leaf, in order:
// object keys sorted, array elements by index.
type jsonWalker struct {
	ig   *ignorer
	emit func(Difference) bool
	path []seg
	stop bool
}

func (w *jsonWalker) walk(rec, got any) {
	if w.stop || w.ig.ignored(w.path) {
		return
	}
	switch r := rec.(type) {
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			keys := slices.Sorted(maps.Keys(r))
			for k := range g {
				if _, ok := r[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				rv, rok := r[k]
				gv, gok := g[k]
				if !rok {
					rv = absent{}
				}
				if !gok {
					gv = absent{}
				}
				w.path = append(w.path, keySeg(k))
				w.walk(rv, gv)
				w.path = w.path[:len(w.path)-1]
			}
			return
		}
	case []any:
		if g, ok := got.([]any); ok {
			for i := range max(len(r), len(g)) {
				w.path = append(w.path, seg{i: i})
				w.walk(elem(r, i), elem(g, i))
				w.path = w.path[:len(w.path)-1]
			}
			return
		}
	default:
		if sameLeaf(rec, got, false) {
			return
		}
	}
	r, g := jsonPair(rec, got)
	if !w.emit(Difference{w.field(), r, g}) {
		w.stop = true
	}
}

// field is the difference's Field for the current path: "body" and the
// path's segments, each after a dot.
func (w *jsonWalker) field() string {
	var b strings.Builder
	b.WriteString("body")
	for _, s := range w.path {
		b.WriteByte('.')
		b.WriteString(s.String())
	}
	return b.String()
}

// elem is list[i], or absent past its end: arrays of different lengths
// are compared element by element up to the longer one's.
func elem(list []any, i int) any {
	if i < len(list) {
		return list[i]
	}
	return absent{}
}

// sameLeaf says whether rec and got, which are not both objects or both
// arrays, are equal: numbers by sameNumber (by midNumber with mid, as
// classes compare them), strings, booleans, null and absent by value.
func sameLeaf(rec, got any, mid bool) bool {
	switch r := rec.(type) {
	case json.Number:
		g, ok := got.(json.Number)
		return ok && (mid && midNumber(r) == midNumber(g) || !mid && sameNumber(r, g))
	case string, bool, nil, absent:
		return rec == got
	}
	return false
}

// sameNumber compares JSON numbers as numbers: 1, 1.0 and 1e0 are the
// same. Integers are compared exactly, others as float64.
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	isInt := func(s string) bool { return !strings.ContainsAny(s, ".eE") }
	if isInt(string(a)) && isInt(string(b)) {
		return strings.TrimPrefix(string(a), "-") == "0" && strings.TrimPrefix(string(b), "-") == "0"
	}
	fa, err1 := a.Float64()
	fb, err2 := b.Float64()
	return err1 == nil && err2 == nil && fa == fb
}

func jsonValue(v any) string {
	if _, ok := v.(absent); ok {
		return "(absent)"
	}
	b, err := marshal(v)
	if err != nil {
		return "?"
	}
	return shorten(string(b))
}

// jsonPair shows two JSON leaves that differ. Two strings are shown from
// just before where they differ, as rawValue shows bodies.
func jsonPair(rec, got any) (string, string) {
	r, rok := rec.(string)
	g, gok := got.(string)
	if !rok || !gok {
		return jsonValue(rec), jsonValue(got)
	}
	quote := quoteJSON
	if !utf8.ValidString(r) || !utf8.ValidString(g) { // a multipart part's bytes
		quote = strconv.Quote
	}
	return excerpt(r, g, quote), excerpt(g, r, quote)
}

// quoteJSON quotes s as a JSON string, as the cassette writes it.
func quoteJSON(s string) string {
	b, err := marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return string(b)
}

// shorten redacts secrets and cuts s to about maxValue bytes.
func shorten(s string) string {
	return cut(redact.Secrets(s))
}

// cut cuts s to about maxValue bytes, an ellipsis marking the cut.
func cut(s string) string {
	if len(s) <= maxValue {
		return s
	}
	n := maxValue
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// escapeKey escapes a JSON key for a gjson-style path.
func escapeKey(k string) string {
	if !strings.ContainsAny(k, ".*?\\|#@") {
		return k
	}
	var b strings.Builder
	for _, c := range k {
		if strings.ContainsRune(".*?\\|#@", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// splitPath splits a gjson-style path on unescaped dots.
func splitPath(p string) []string {
	var out []string
	var seg strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			seg.WriteByte(p[i])
		case c == '.':
			out = append(out, seg.String())
			seg.Reset()
		default:
			seg.WriteByte(c)
		}
	}
	return append(out, seg.String())
}

// describe names a request in messages: "POST /v1/chat/completions?alt=sse".
func describe(r *Request) string {
	if r.URL == nil {
		return r.Method
	}
	s := r.Method + " " + r.URL.EscapedPath()
	if q := safeURL(r.URL).RawQuery; q != "" {
		s += "?" + q
	}
	return redact.Secrets(s)
}

// ErrMiss is matched (errors.Is) by every [*MissError].
var ErrMiss = errors.New("replay: no recorded answer")

// MissError says a request found no recorded answer, and why: the closest
// recorded request and how it differs.
type MissError struct {
	Cassette string
	Mode     Mode
	Request  Request // the request made, without credentials
	// Closest is the recorded request nearest to Request (same method and
	// path first, then the fewest differences); nil when the cassette is
	// empty. Index is its index in the cassette, Line its line (0 when it
	// was recorded in this run).
	Closest *Request
	Index   int
	Line    int
	// Differences between Closest and Request, at most 1000.
	Differences []Difference
	// UsedUp says Closest matches, but its recorded answers (Answers of
	// them) were all given already: the request was made more times than
	// when it was recorded.
	UsedUp  bool
	Answers int
	// Rejected says Closest matches by the default rules, but the
	// matcher given with WithMatcher turned it down.
	Rejected bool
}

// maxShown is how many differences the message lists.
const maxShown = 8

func (e *MissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay: no recorded answer for %s (cassette %s, mode %s)", describe(&e.Request), e.Cassette, e.Mode)
	switch {
	case e.Closest == nil:
		b.WriteString(": the cassette has no interactions")
	case e.UsedUp:
		fmt.Fprintf(&b, ": its %d recorded answer(s) were all used; the request was made more times than when it was recorded (WithRepeatLast repeats the last answer)", e.Answers)
	default:
		fmt.Fprintf(&b, "\n  closest: interaction %d", e.Index)
		if e.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", e.Line)
		}
		b.WriteString(", " + describe(e.Closest))
		if e.Rejected {
			b.WriteString(", which matches by method, URL and body; the matcher given with WithMatcher turned it down")
			break
		}
		fmt.Fprintf(&b, ", %d difference(s):", len(e.Differences))
		for i, d := range e.Differences {
			if i == maxShown {
				fmt.Fprintf(&b, "\n    … and %d more", len(e.Differences)-maxShown)
				break
			}
			b.WriteString("\n    " + d.String())
		}
	}
	if e.Mode == ModeReplay {
		fmt.Fprintf(&b, "\n  if the change is intended, re-record: %s=record (every call) or %s=once (what is missing)", EnvMode, EnvMode)
	}
	return b.String()
}

func (e *MissError) Is(target error) bool { return target == ErrMiss }
