package view_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lheval "github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/view"
)

// comparison is two variants of one item: the baseline right, the other
// wrong.
func comparison(t *testing.T) *lheval.Comparison {
	item := lheval.Item{
		Input:     []record.Message{record.TextMessage(record.RoleUser, "Capital of Spain?")},
		Params:    map[string]json.RawMessage{"model": json.RawMessage(`"gpt-4o-mini"`)},
		Reference: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: "Madrid."}}},
	}
	item.ID = item.ContentID()
	trial := func(variant, answer string, right bool) lheval.Trial {
		out := record.TextMessage(record.RoleAssistant, answer)
		return lheval.Trial{Item: item.ID, Variant: variant, Output: &out, InputTokens: 12, OutputTokens: 3, CostUSD: 0.00001, Priced: true,
			Scores: []store.Score{{Name: "exact_match", Value: store.Bool(right)}}}
	}
	res := &lheval.ExperimentResult{Experiment: "swap", Dataset: "capitals",
		Variants: []lheval.Variant{{Name: "mini", Model: "gpt-4o-mini"}, {Name: "nano", Model: "gpt-4.1-nano"}},
		Items:    []lheval.Item{item},
		Trials:   []lheval.Trial{trial("mini", "Madrid.", true), trial("nano", "Barcelona <b>?</b>", false)}}
	c, err := lheval.Compare(lheval.CompareOptions{NoLatency: true}, res)
	require.NoError(t, err)
	return c
}

// The experiment page shows the comparison in the viewer's layout,
// styled from a file of its own under the viewer's CSP, at a laptop's
// width and a phone's; a model's text stays text.
func TestExperimentPageInChromium(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "h.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	src, err := view.OpenJSONL([]string{empty}, view.JSONLOptions{})
	require.NoError(t, err)
	defer src.Close()
	h := view.NewHandler(src, view.Options{Experiment: comparison(t), ExperimentCSS: lheval.CompareCSS})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close() // ends live pages' event streams, before the server waits for them

	b := newBrowser(t)
	for _, width := range []int64{1280, 390} {
		b.do(t,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(srv.URL+"/experiment"),
			chromedp.WaitVisible(chromedp.CSS("main .cmp")),
		)
		text := eval[string](t, b, `document.querySelector("main .cmp").innerText`)
		assert.Contains(t, text, "Baseline mini")
		assert.Contains(t, text, "Barcelona <b>?</b>", "the answer is text, not markup")
		assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll("main .cmp b + b, main .cmp .c-out b").length`))
		// The loss is drawn in the viewer's error colour: the stylesheet
		// loaded, and its variables are the viewer's.
		lossColor := eval[string](t, b, `getComputedStyle(document.querySelector(".c-loss")).color`)
		errColor := eval[string](t, b, `(() => { const s = document.createElement("span"); s.className = "err"; document.body.append(s); return getComputedStyle(s).color })()`)
		assert.Equal(t, errColor, lossColor)
		assert.Equal(t, "page", eval[string](t, b, `document.querySelector('nav a[href$="experiment"]').getAttribute("aria-current")`))
		// Nothing is wider than the screen: a phone scrolls down, not across.
		assert.LessOrEqual(t, eval[int](t, b, `document.documentElement.scrollWidth`), int(width))
	}
	_, problems := b.reported()
	assert.Empty(t, problems, "no CSP violation, no error")

	// Without an experiment there is no page, and no tab.
	ph := view.NewHandler(src, view.Options{})
	plain := httptest.NewServer(ph)
	defer plain.Close()
	defer ph.Close()
	b.do(t, chromedp.Navigate(plain.URL+"/"), chromedp.WaitVisible(chromedp.CSS("nav")))
	assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll('nav a[href$="experiment"]').length`))
}
