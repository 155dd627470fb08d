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

	"github.com/llmhistory/llmhistory/middleware"
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
	json   any // the body decoded with UseNumber, when isJSON
	raw    []byte
}

// normalize reduces r under the cassette's matching options.
func (cfg *config) normalize(r *Request) norm {
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
				n.header[k] = v
			}
		}
	}
	if v, ok := decodeJSON(r.Body); ok {
		n.isJSON, n.json = true, v
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
	// ("body.messages.1.content").
	Field string
	// Recorded and Got are the two values, as compact JSON for JSON
	// values, shortened to about 80 bytes and with secrets redacted;
	// "(absent)" when there is none.
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
// body (as JSON when both are) all equal, ignored fields left out.
func (cfg *config) same(got, rec *norm) bool {
	n := 0
	cfg.diff(got, rec, func(Difference) bool { n++; return false })
	return n == 0
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
	case got.isJSON && rec.isJSON:
		w := jsonWalker{ignored: cfg.ignoredFields, emit: emit}
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

// rawValue shows a non-JSON body from where it starts to differ from
// other.
func rawValue(b, other []byte) string {
	if len(b) == 0 {
		return "(absent)"
	}
	i := 0
	for i < len(b) && i < len(other) && b[i] == other[i] {
		i++
	}
	start := max(0, i-20)
	for start > 0 && !utf8.RuneStart(b[start]) {
		start--
	}
	s := strconv.Quote(string(b[start:]))
	if start > 0 {
		s = "…" + s
	}
	return shorten(s)
}

// jsonWalker compares two decoded JSON values leaf by leaf.
type jsonWalker struct {
	ignored [][]string
	emit    func(Difference) bool
	path    []string
	stop    bool
}

func (w *jsonWalker) isIgnored() bool {
	for _, p := range w.ignored {
		if len(p) != len(w.path) {
			continue
		}
		ok := true
		for i, seg := range p {
			if seg != "*" && seg != "#" && seg != w.path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (w *jsonWalker) walk(rec, got any) {
	if w.stop || len(w.ignored) > 0 && w.isIgnored() {
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
				w.path = append(w.path, k)
				w.walk(rv, gv)
				w.path = w.path[:len(w.path)-1]
			}
			return
		}
	case []any:
		if g, ok := got.([]any); ok {
			for i := range max(len(r), len(g)) {
				var rv, gv any = absent{}, absent{}
				if i < len(r) {
					rv = r[i]
				}
				if i < len(g) {
					gv = g[i]
				}
				w.path = append(w.path, strconv.Itoa(i))
				w.walk(rv, gv)
				w.path = w.path[:len(w.path)-1]
			}
			return
		}
	case json.Number:
		if g, ok := got.(json.Number); ok && sameNumber(r, g) {
			return
		}
	case string, bool, nil, absent:
		if rec == got {
			return
		}
	}
	field := "body"
	for _, seg := range w.path {
		field += "." + escapeKey(seg)
	}
	if !w.emit(Difference{field, jsonValue(rec), jsonValue(got)}) {
		w.stop = true
	}
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

// shorten redacts secrets and cuts s to about maxValue bytes.
func shorten(s string) string {
	s = middleware.Redact(s)
	if len(s) <= maxValue {
		return s
	}
	cut := maxValue
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
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
	return middleware.Redact(s)
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
