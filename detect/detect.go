package detect

import (
	"strings"
)

// Language is a language the detector reads.
type Language uint8

// The languages. Unknown is code whose language could not be told; it is
// read with the rules of the likeliest one.
const (
	Unknown Language = iota
	Ruby
	Python
	JavaScript // TypeScript too
	Go
)

var languageNames = [...]string{"unknown", "ruby", "python", "javascript", "go"}

func (l Language) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return "unknown"
}

// ParseLanguage reads a fence's language tag or a tool's language field:
// "rb", "ruby", "py", "python3", "js", "ts", "tsx", "typescript", "go",
// "golang"... Anything else is Unknown.
func ParseLanguage(s string) Language {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "rb", "ruby", "irb", "erb":
		return Ruby
	case "py", "python", "python3", "py3", "ipython", "pycon":
		return Python
	case "js", "javascript", "jsx", "mjs", "cjs", "node", "ts", "typescript", "tsx", "mts":
		return JavaScript
	case "go", "golang":
		return Go
	}
	return Unknown
}

// Tag names a way of querying the history. The set is stable: tags are
// stored in records (history_query_patterns) and counted in reports.
type Tag uint8

// The tags, in their stable order.
const (
	Filter  Tag = iota // keep some records: select, filter, a comprehension with if, a range loop with if
	Map                // transform each record: map, collect, a comprehension
	Slice              // take part: first, last, take, h[-3:], slice, at
	Count              // how many: count, size, length, len()
	Group              // group_by, partition, tally, itertools.groupby, Counter, Object.groupBy
	Sort               // sort, sort_by, sorted, min_by, max_by, min, max, reverse
	Reduce             // reduce, inject, sum, functools.reduce
	Search             // find, detect, any?, include?, next(), some, every, IndexFunc
	Iterate            // each, for loops, forEach, range
	numTags
)

var tagNames = [numTags]string{"filter", "map", "slice", "count", "group", "sort", "reduce", "search", "iterate"}

func (t Tag) String() string {
	if t < numTags {
		return tagNames[t]
	}
	return "unknown"
}

// ParseTag returns the tag of a name, and whether it is one.
func ParseTag(name string) (Tag, bool) {
	for i, n := range tagNames {
		if n == name {
			return Tag(i), true
		}
	}
	return 0, false
}

// AllTags returns every tag in its stable order.
func AllTags() []Tag {
	out := make([]Tag, numTags)
	for i := range out {
		out[i] = Tag(i)
	}
	return out
}

// TagSet is a set of tags.
type TagSet uint16

// Has reports whether t is in the set.
func (s TagSet) Has(t Tag) bool { return s&(1<<t) != 0 }

// With returns the set with t added.
func (s TagSet) With(t Tag) TagSet { return s | 1<<t }

// Len returns the number of tags in the set.
func (s TagSet) Len() int {
	n := 0
	for t := Tag(0); t < numTags; t++ {
		if s.Has(t) {
			n++
		}
	}
	return n
}

// Names returns the tags' names in the stable order, or nil for none.
func (s TagSet) Names() []string {
	var out []string
	for t := Tag(0); t < numTags; t++ {
		if s.Has(t) {
			out = append(out, t.String())
		}
	}
	return out
}

func (s TagSet) String() string { return "[" + strings.Join(s.Names(), " ") + "]" }

// Finding is one query of the history: which tag, in which language, and
// where, as lines of the scanned text (1-based): the line where the history
// is named and the line of the operation, so a report can show the span.
type Finding struct {
	Tag      Tag
	Language Language
	Line     int
	EndLine  int
}

// Result is what a scan found.
type Result struct {
	Access    bool       // the code reads or writes the history
	Tags      TagSet     // how it queries it
	Languages []Language // the languages of the code that accessed it, in order found
	Findings  []Finding  // each query, at most maxFindings
}

// maxFindings bounds a result's findings; tags are still all counted.
const maxFindings = 64

func (r *Result) merge(o Result) {
	r.Access = r.Access || o.Access
	r.Tags |= o.Tags
	for _, l := range o.Languages {
		r.addLanguage(l)
	}
	for _, f := range o.Findings {
		if len(r.Findings) < maxFindings {
			r.Findings = append(r.Findings, f)
		}
	}
}

func (r *Result) addLanguage(l Language) {
	for _, x := range r.Languages {
		if x == l {
			return
		}
	}
	r.Languages = append(r.Languages, l)
}

// DefaultName is the name the history goes by unless told otherwise:
// context[:conversation_history], context["conversation_history"],
// context.conversation_history, or a variable of that name.
const DefaultName = "conversation_history"

// Detector finds history queries. Its zero value is not usable; make one
// with New. It is safe for concurrent use.
type Detector struct {
	names   []string
	anchors []int // per name, the offset of its rarest byte: what mentioned looks for
}

// New returns a detector for the default name and any extra names the
// history goes by in your runtime.
func New(extra ...string) *Detector {
	d := &Detector{names: []string{DefaultName}}
	for _, n := range extra {
		if n != "" && n != DefaultName {
			d.names = append(d.names, n)
		}
	}
	for _, n := range d.names {
		d.anchors = append(d.anchors, rarestByte(n))
	}
	return d
}

var defaultDetector = New()

// Scan scans code in a language with the default detector.
func Scan(code string, lang Language) Result { return defaultDetector.Scan(code, lang) }

// ScanOutput scans a model's whole output with the default detector.
func ScanOutput(output string) Result { return defaultDetector.ScanOutput(output) }

// ScanToolArguments scans a tool call's JSON arguments with the default
// detector.
func ScanToolArguments(args string) Result { return defaultDetector.ScanToolArguments(args) }

// mentioned is the prefilter: no name in the text, nothing to find. It is
// what keeps a scan of text without the history free of allocations.
func (d *Detector) mentioned(s string) bool {
	for i, n := range d.names {
		if containsAt(s, n, d.anchors[i]) {
			return true
		}
	}
	return false
}

// containsAt is strings.Contains(s, name), searching for the byte of name
// at anchor and checking the rest around each one found. strings.Contains
// searches for the first byte: the c of conversation_history is in one
// word of prose in five, and every stop costs a call; its underscore is in
// next to no prose, so a reply that does not name the history is passed
// over in one vectorized search.
func containsAt(s, name string, anchor int) bool {
	c := name[anchor]
	for i := anchor; i < len(s); {
		j := strings.IndexByte(s[i:], c)
		if j < 0 {
			return false
		}
		start := i + j - anchor
		if start+len(name) <= len(s) && s[start:start+len(name)] == name {
			return true
		}
		i += j + 1
	}
	return false
}

// rarestByte returns the offset of name's rarest byte in text and code:
// bytes absent from byteRank (an underscore, a digit, a capital) are
// rarer than any in it, and within it the later the commoner.
func rarestByte(name string) int {
	best, bestRank := 0, len(byteRank)+1
	for i := 0; i < len(name); i++ {
		r := strings.IndexByte(byteRank, name[i]) // -1 when absent: rarest
		if r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// byteRank lists the bytes common in prose and code from the least to the
// most common: lowercase letters by their frequency in English, then
// punctuation and the space.
const byteRank = "zqxjkvbpygfwmucldrhsnioate.,\n "

// Scan scans code in a language (Unknown: guessed). Line numbers count from
// the start of code.
func (d *Detector) Scan(code string, lang Language) Result {
	if !d.mentioned(code) {
		return Result{}
	}
	if lang == Unknown {
		lang = Guess(code)
	}
	return d.scan(code, lang, 0)
}

func (d *Detector) isName(s string) bool {
	for _, n := range d.names {
		if s == n {
			return true
		}
	}
	return false
}
