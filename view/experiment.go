package view

import (
	"bytes"
	"html/template"
	"io"
	"net/http"
)

// Experiment is what the viewer's experiment page shows: a comparison of
// an experiment's runs (eval.Comparison is one), drawn by its own
// template, and the style its classes need.
type Experiment interface {
	ExecuteHTMLBody(w io.Writer) error
}

// experimentPage draws Options.Experiment inside the viewer's layout.
func (h *Handler) experimentPage(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if err := h.opts.Experiment.ExecuteHTMLBody(&b); err != nil {
		h.fail(w, r, http.StatusInternalServerError, "The experiment could not be drawn.")
		return
	}
	p := h.newPage("Experiment", "experiment", template.HTML(b.String())) // the comparison's html/template escaped it
	p.ExtraCSS = h.opts.Prefix + "experiment.css"
	h.render(w, r, "experiment", p)
}

// experimentCSS serves Options.ExperimentCSS: the page's style comes from
// a file of the viewer, as its Content-Security-Policy wants.
func (h *Handler) experimentCSS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, h.opts.ExperimentCSS)
}
