package eval

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/llmhistory/llmhistory/store"
)

// Similarity scores "similarity": how close the answer's text is to the
// reference's, as the F1 of their words (runs of letters and digits,
// without regard to case), from 0 (no word in common) to 1 (the same
// words as often). It is a cheap, deterministic stand-in for a judge when
// a dataset's answers are short; a subject without a reference, or
// without an answer, gets no score.
func Similarity() Evaluator { return referenceCheck{"similarity", similarity} }

// ExactMatch scores "exact_match": the answer's text is the reference's,
// spaces at either end aside.
func ExactMatch() Evaluator { return referenceCheck{"exact_match", exactMatch} }

type referenceCheck struct {
	name string
	fn   func(got, want string) (store.Value, string)
}

func (c referenceCheck) Info() Info {
	return Info{Name: c.name, Version: "1", Source: store.SourceCode}
}

func (c referenceCheck) Evaluate(_ context.Context, s Subject) ([]store.Score, error) {
	call := s.Call()
	if s.Reference == nil || call == nil || !call.Outcome.OK || call.Output == nil {
		return nil, nil
	}
	v, comment := c.fn(call.Output.Text(), s.Reference.Text())
	return []store.Score{{Name: c.name, Value: v, Comment: comment}}, nil
}

func exactMatch(got, want string) (store.Value, string) {
	return store.Bool(strings.TrimSpace(got) == strings.TrimSpace(want)), ""
}

func similarity(got, want string) (store.Value, string) {
	g, w := words(got), words(want)
	if len(g) == 0 && len(w) == 0 {
		return store.Number(1), ""
	}
	counts := map[string]int{}
	for _, x := range w {
		counts[x]++
	}
	common := 0
	for _, x := range g {
		if counts[x] > 0 {
			counts[x]--
			common++
		}
	}
	if common == 0 {
		return store.Number(0), "no word in common"
	}
	p, r := float64(common)/float64(len(g)), float64(common)/float64(len(w))
	f1 := 2 * p * r / (p + r)
	return store.Number(float64(int(f1*1000+0.5)) / 1000), fmt.Sprintf("%d of %d words in common", common, len(w))
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
