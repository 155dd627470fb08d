package eval

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/internal/term"
)

// TB is what [Gate] and [RunExperimentTest] need of a *testing.T (or
// *testing.B): this package does not import testing.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Context() context.Context
}

// GateOptions says what an experiment must achieve to pass.
type GateOptions struct {
	// Min is, for a score's name, the least mean each variant may have
	// (booleans count as 0 and 1).
	Min map[string]float64
	// Baseline is an earlier result (the one on main, kept in the
	// repository): each variant's mean of each score may fall at most
	// Tolerance behind that of the baseline's variant of the same name,
	// or of the baseline's first variant when none has it.
	Baseline  *ExperimentResult
	Tolerance float64
	// MaxErrors is how many trials may fail; default none.
	MaxErrors int
}

// Gate checks res against o, tells t of every shortfall (each an error),
// and reports whether it passed: in a go test, a score that drops below
// its threshold, or behind the baseline, fails the test.
func Gate(t TB, res *ExperimentResult, o GateOptions) bool {
	t.Helper()
	ok := true
	means := scoreMeans(res)
	var base map[string]map[string]float64
	if o.Baseline != nil {
		base = scoreMeans(o.Baseline)
	}
	for _, v := range res.Variants {
		errs := 0
		for _, tr := range res.Trials {
			if tr.Variant == v.Name && tr.Error != "" {
				errs++
			}
		}
		if errs > o.MaxErrors {
			t.Errorf("experiment %s, variant %s: %d trials failed (at most %d may)", res.Experiment, v.Name, errs, o.MaxErrors)
			ok = false
		}
		names := make([]string, 0, len(o.Min))
		for name := range o.Min {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			m, scored := means[v.Name][name]
			switch {
			case !scored:
				t.Errorf("experiment %s, variant %s: no %s score to hold to %.3f", res.Experiment, v.Name, name, o.Min[name])
				ok = false
			case m < o.Min[name]:
				t.Errorf("experiment %s, variant %s: %s is %.3f, below its threshold %.3f", res.Experiment, v.Name, name, m, o.Min[name])
				ok = false
			}
		}
		if base == nil {
			continue
		}
		bv, found := base[v.Name]
		if !found && len(o.Baseline.Variants) > 0 {
			bv = base[o.Baseline.Variants[0].Name]
		}
		names = names[:0]
		for name := range bv {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			m, scored := means[v.Name][name]
			switch {
			case !scored:
				t.Errorf("experiment %s, variant %s: no %s score, which the baseline has (%.3f)", res.Experiment, v.Name, name, bv[name])
				ok = false
			case m < bv[name]-o.Tolerance:
				t.Errorf("experiment %s, variant %s: %s fell behind the baseline: %.3f, was %.3f (tolerance %.3f)", res.Experiment, v.Name, name, m, bv[name], o.Tolerance)
				ok = false
			}
		}
	}
	return ok
}

// scoreMeans is, by variant and score name, the mean of the numeric
// (and boolean) scores of its trials.
func scoreMeans(res *ExperimentResult) map[string]map[string]float64 {
	sum := map[string]map[string]float64{}
	n := map[string]map[string]int{}
	for _, tr := range res.Trials {
		for _, s := range tr.Scores {
			f, ok := numeric(s.Value)
			if !ok {
				continue
			}
			if sum[tr.Variant] == nil {
				sum[tr.Variant], n[tr.Variant] = map[string]float64{}, map[string]int{}
			}
			sum[tr.Variant][s.Name] += f
			n[tr.Variant][s.Name]++
		}
	}
	for v, byName := range sum {
		for name := range byName {
			byName[name] /= float64(n[v][name])
		}
	}
	return sum
}

// RunExperimentTest runs e over d in a go test, showing its progress on
// standard error when that is a terminal, logs the comparison of its
// variants (Markdown, with t.Logf: go test -v shows it), and gates the
// result (see [Gate]). It returns the result, to keep as the next
// baseline.
func RunExperimentTest(t TB, d *Dataset, e Experiment, o GateOptions) *ExperimentResult {
	t.Helper()
	line := term.NewStatusLine(os.Stderr)
	start := time.Now()
	progress := e.Progress
	e.Progress = func(done, total int64) {
		if line.Due(done == total) {
			line.Show(term.Progress("experiment "+e.Name, "trials", done, total, time.Since(start)))
		}
		if progress != nil {
			progress(done, total)
		}
	}
	res, err := RunExperiment(t.Context(), d, e)
	line.Clear()
	if err != nil {
		t.Errorf("experiment %s: %v", e.Name, err)
		return res
	}
	if c, err := Compare(CompareOptions{}, res); err == nil {
		var b strings.Builder
		if c.WriteMarkdown(&b) == nil {
			t.Logf("%s", b.String())
		}
	}
	Gate(t, res, o)
	return res
}
