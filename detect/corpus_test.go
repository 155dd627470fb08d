package detect_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/detect"
)

// The corpus (testdata/corpus.txt) was labelled by hand, by written rules,
// independently of the detector: see its entries' notes. Each entry is
//
//	=====8<===== id
//	kind: snippet <lang> | output | toolargs
//	access: true|false
//	tags: <tags> | -
//	note: what it tests
//	---
//	<text>
type entry struct {
	id, kind, note, text string
	lang                 detect.Language
	access               bool
	tags                 detect.TagSet
}

const separator = "=====8<===== "

func loadCorpus(t testing.TB, name string) []entry {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	defer f.Close()
	var (
		out    []entry
		cur    *entry
		inText bool
		text   strings.Builder
	)
	flush := func() {
		if cur != nil {
			cur.text = strings.TrimRight(text.String(), "\n")
			out = append(out, *cur)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, separator); ok {
			flush()
			cur, inText = &entry{id: strings.TrimSpace(id)}, false
			text.Reset()
			continue
		}
		if cur == nil {
			continue
		}
		if inText {
			text.WriteString(line)
			text.WriteByte('\n')
			continue
		}
		if line == "---" {
			inText = true
			continue
		}
		key, val, _ := strings.Cut(line, ":")
		val = strings.TrimSpace(val)
		switch key {
		case "kind":
			kind, lang, _ := strings.Cut(val, " ")
			cur.kind, cur.lang = kind, detect.ParseLanguage(lang)
		case "access":
			cur.access = val == "true"
		case "tags":
			for _, n := range strings.Fields(val) {
				if n == "-" {
					continue
				}
				tag, ok := detect.ParseTag(n)
				require.True(t, ok, "entry %s: unknown tag %q", cur.id, n)
				cur.tags = cur.tags.With(tag)
			}
		case "note":
			cur.note = val
		}
	}
	require.NoError(t, sc.Err())
	flush()
	return out
}

func scanEntry(e entry) detect.Result {
	switch e.kind {
	case "output":
		return detect.ScanOutput(e.text)
	case "toolargs":
		return detect.ScanToolArguments(e.text)
	}
	return detect.Scan(e.text, e.lang)
}

// naive is the first, regex-only design: a regex for the name anywhere, and
// regexes for common Ruby enumerable operators, for its five tags.
var (
	naiveAccess = regexp.MustCompile(`conversation_history`)
	naiveTags   = map[detect.Tag]*regexp.Regexp{
		detect.Filter: regexp.MustCompile(`\.(select|filter|reject|find_all)\b`),
		detect.Map:    regexp.MustCompile(`\.(map|collect|flat_map)\b`),
		detect.Slice:  regexp.MustCompile(`\.(first|last|take|drop)\b|\[-?\d+\.\.`),
		detect.Count:  regexp.MustCompile(`\.(count|size|length)\b`),
		detect.Group:  regexp.MustCompile(`\.(group_by|partition|tally)\b`),
	}
)

func naive(e entry) detect.Result {
	var r detect.Result
	if !naiveAccess.MatchString(e.text) {
		return r
	}
	r.Access = true
	for tag, re := range naiveTags {
		if re.MatchString(e.text) {
			r.Tags = r.Tags.With(tag)
		}
	}
	return r
}

// score counts, per label (access and each tag), entries where it was
// found rightly (tp), wrongly (fp) and missed (fn).
type score struct{ tp, fp, fn int }

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

func (s *score) add(want, got bool) {
	switch {
	case want && got:
		s.tp++
	case got:
		s.fp++
	case want:
		s.fn++
	}
}

type scores struct {
	access score
	tags   [9]score
	all    score // every tag decision together (micro average)
}

func evaluate(corpus []entry, scan func(entry) detect.Result, onMiss func(entry, detect.Result)) scores {
	var s scores
	for _, e := range corpus {
		r := scan(e)
		s.access.add(e.access, r.Access)
		ok := e.access == r.Access
		for _, tag := range detect.AllTags() {
			want, got := e.tags.Has(tag), r.Tags.Has(tag)
			s.tags[tag].add(want, got)
			s.all.add(want, got)
			ok = ok && want == got
		}
		if !ok && onMiss != nil {
			onMiss(e, r)
		}
	}
	return s
}

// TestCorpus measures the detector on the labelled corpus: precision and
// recall for access, for each tag and over all tags must be at least 0.95.
// It prints the naive regex baseline on the same corpus beside it.
func TestCorpus(t *testing.T) { measure(t, "corpus.txt", 150) }

// TestHoldout measures the detector on a second corpus, written by the
// same rules by someone who saw neither the detector nor the first corpus,
// and added after the detector was tuned on the first: how well the rules
// generalize.
func TestHoldout(t *testing.T) { measure(t, "holdout.txt", 100) }

func measure(t *testing.T, file string, min int) {
	corpus := loadCorpus(t, file)
	require.GreaterOrEqual(t, len(corpus), min, "%s must hold at least %d snippets", file, min)
	langs := map[string]int{}
	for _, e := range corpus {
		k := e.kind
		if k == "snippet" {
			k = e.lang.String()
		}
		langs[k]++
	}
	t.Logf("%s: %d entries %v", file, len(corpus), langs)

	ours := evaluate(corpus, scanEntry, func(e entry, r detect.Result) {
		t.Logf("miss %s (%s): want access=%v tags=%v, got access=%v tags=%v", e.id, e.note, e.access, e.tags, r.Access, r.Tags)
	})
	base := evaluate(corpus, naive, nil)

	var b strings.Builder
	fmt.Fprintf(&b, "\n| label | support | precision | recall | naive precision | naive recall |\n|---|---|---|---|---|---|\n")
	row := func(name string, o, n score) {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", name, o.tp+o.fn, o.precision(), o.recall(), n.precision(), n.recall())
	}
	row("access", ours.access, base.access)
	for _, tag := range detect.AllTags() {
		row(tag.String(), ours.tags[tag], base.tags[tag])
	}
	row("all tags", ours.all, base.all)
	t.Log(b.String())

	check := func(name string, s score) {
		if s.precision() < 0.95 || s.recall() < 0.95 {
			t.Errorf("%s: precision %.3f, recall %.3f; both must be at least 0.95", name, s.precision(), s.recall())
		}
	}
	check("access", ours.access)
	for _, tag := range detect.AllTags() {
		check(tag.String(), ours.tags[tag])
	}
	check("all tags", ours.all)
}
