package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and inline SVG charts (latency per method, pattern tags, error types),
// no script and no external resource, so it opens offline and can be
// mailed as is. Every text from the records is HTML-escaped by
// html/template, and the page's Content-Security-Policy forbids scripts
// besides.
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	data := htmlData{
		R:            r,
		Provenance:   r.provenance(),
		Summary:      r.summary(),
		Span:         r.spanSentence(),
		HistoryRows:  r.historyRows(),
		CallRows:     r.callRows(),
		MeanHistory:  trimFloat(r.History.MeanHistorySize),
		RetriesText:  r.retriesText(),
		TracesText:   r.tracesText(),
		BadInputText: r.badInputText(),
		LatencyNote:  latencyNote,
		Latency:      latencyChart(r.Latency),
		Patterns:     barChart("chart-patterns", "Records by history query pattern tag", patternBars(r.Patterns)),
		Errors:       barChart("chart-errors", "Records by error type", errorBars(r.Errors)),
	}
	if err := pageTemplate.Execute(bw, data); err != nil {
		return err
	}
	return bw.Flush()
}

type htmlData struct {
	R                                                               *Report
	Provenance, Summary, Span                                       sentence
	HistoryRows, CallRows                                           []row
	MeanHistory, RetriesText, TracesText, BadInputText, LatencyNote string
	Latency, Patterns, Errors                                       chart
}

// chart is an SVG chart laid out in Go, so the template only places it.
type chart struct {
	ID, Title     string
	Width, Height int
	Rows          []chartRow
	Legend        []legendItem
	Grid          []gridLine // a scale's lines, under the bars
	Empty         string     // shown instead of bars when there are none
}

// gridLine is one line of a chart's scale and its label below the plot.
type gridLine struct {
	X, Y1, Y2, LabelY float64
	Label             string
}

type chartRow struct {
	Label          string // shown, cut
	LabelX         float64
	Full           string // in the row's tooltip
	LabelY         float64
	Bars           []chartBar
	Value          string
	ValueX, ValueY float64
}

type chartBar struct {
	Class      string
	X, Y, W, H float64
	Tip        string
	// Label, when set, is written after the bar: the quantile and value.
	Label          string
	LabelX, LabelY float64
}

type legendItem struct {
	Class, Label string
	X, TextX     float64
}

// Chart geometry, in SVG user units.
const (
	chartWidth  = 760
	chartLabelW = 260 // the label column
	chartValueW = 150 // room for the value after the longest bar
	chartTop    = 8
	chartRowH   = 26
	chartLabel  = 36 // runes of a label shown
)

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

type bar struct {
	label string
	value float64
	text  string
}

func patternBars(ps []Pattern) []bar {
	var out []bar
	for _, p := range ps {
		out = append(out, bar{p.Tag, float64(p.Records), num(p.Records)})
	}
	return out
}

func errorBars(es []ErrorType) []bar {
	var out []bar
	for _, e := range es {
		out = append(out, bar{e.Type, float64(e.Count), fmt.Sprintf("%s (%s retriable)", num(e.Count), percent(e.Retriable, e.Count))})
	}
	return out
}

// maxChartRows bounds the rows a chart draws; tables below list all.
const maxChartRows = 30

func barChart(id, title string, bars []bar) chart {
	c := chart{ID: id, Title: title, Width: chartWidth}
	bars = bars[:min(len(bars), maxChartRows)]
	var top float64
	for _, b := range bars {
		top = max(top, b.value)
	}
	plot := float64(chartWidth - chartLabelW - chartValueW)
	for i, b := range bars {
		y := float64(chartTop + i*chartRowH)
		w := 0.0
		if top > 0 {
			w = max(b.value/top*plot, 1)
		}
		c.Rows = append(c.Rows, chartRow{
			Label: cut(b.label, chartLabel), Full: b.label, LabelX: chartLabelW - 8, LabelY: y + 15,
			Bars:  []chartBar{{Class: "bar", X: chartLabelW, Y: y + 3, W: w, H: 16, Tip: b.label + ": " + b.text}},
			Value: b.text, ValueX: chartLabelW + w + 6, ValueY: y + 15,
		})
	}
	c.Height = chartTop*2 + len(bars)*chartRowH
	if len(bars) == 0 {
		c.Empty = "No data."
		c.Height = 40
	}
	return c
}

// latencyChart draws p50, p90 and p99 of each method on a logarithmic
// scale, so a p50 of 100 ms stays visible beside a p99 of 10 s, with a
// decade grid labelled in human units and each bar labelled with its
// quantile and value.
func latencyChart(ls []Latency) chart {
	c := chart{ID: "chart-latency", Title: "Latency per method: p50, p90 and p99 (logarithmic scale)", Width: chartWidth}
	ls = ls[:min(len(ls), maxChartRows)]
	lo, hi := math.Inf(1), 0.0
	for _, l := range ls {
		for _, v := range []float64{l.P50MS, l.P90MS, l.P99MS} {
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	const (
		rowH   = 58
		barH   = 12
		barGap = 5   // an 11 px label is about 15 px tall: one per bar, apart
		valueW = 110 // room for "p99 12.3 min" after the longest bar
	)
	plot := float64(chartWidth - chartLabelW - valueW)
	y0 := float64(chartTop + 22) // below the legend
	for i, name := range []string{"p50", "p90", "p99"} {
		c.Legend = append(c.Legend, legendItem{Class: name, Label: name, X: chartLabelW + float64(i)*80, TextX: chartLabelW + float64(i)*80 + 16})
	}
	if hi == 0 {
		c.Legend = nil
		c.Empty = "No record carries a duration."
		c.Height = 40
		return c
	}
	// The scale starts a decade below the smallest value, so the smallest
	// bar has a length to compare, and ends at the decade above the largest.
	dlo := math.Floor(math.Log10(lo)) - 1
	dhi := max(math.Ceil(math.Log10(hi)), dlo+2)
	x := func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return max((math.Log10(v)-dlo)/(dhi-dlo)*plot, 2)
	}
	for i, l := range ls {
		y := y0 + float64(i*rowH)
		row := chartRow{Label: cut(l.Method, chartLabel), Full: l.Method, LabelX: chartLabelW - 8, LabelY: y + 28}
		for j, q := range []struct {
			name string
			v    float64
		}{{"p50", l.P50MS}, {"p90", l.P90MS}, {"p99", l.P99MS}} {
			w := x(q.v)
			by := y + 4 + float64(j)*(barH+barGap)
			row.Bars = append(row.Bars, chartBar{
				Class: q.name, X: chartLabelW, Y: by, W: w, H: barH,
				Tip:   fmt.Sprintf("%s %s: %s", l.Method, q.name, human(q.v)),
				Label: q.name + " " + human(q.v), LabelX: chartLabelW + w + 5, LabelY: by + barH - 1,
			})
		}
		c.Rows = append(c.Rows, row)
	}
	height := y0 + float64(len(ls)*rowH)
	for d := dlo; d <= dhi; d++ {
		gx := chartLabelW + (d-dlo)/(dhi-dlo)*plot
		c.Grid = append(c.Grid, gridLine{X: gx, Y1: y0, Y2: height, Label: human(math.Pow(10, d)), LabelY: height + 14})
	}
	c.Height = int(height) + 22
	return c
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"num":     num,
	"percent": percent,
	"human":   human,
	"list":    func(v ...any) []any { return v },
	"f":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"verdict": func(v string) string {
		switch v {
		case Met:
			return "met"
		case NotMet:
			return "notmet"
		}
		return "nodata"
	},
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>LLM call history: evidence report</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2433;background:#f5f6f8;margin:0}
main{max-width:860px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:26px;margin:8px 0 12px}
h2{font-size:19px;margin:32px 0 10px;border-bottom:1px solid #d8dce3;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 8px}
p.summary{font-size:16px;background:#fff;border:1px solid #d8dce3;border-radius:6px;padding:12px 16px}
p.provenance{color:#4a5261;font-size:14px;margin:0 0 10px}
.ts{white-space:nowrap}
table{border-collapse:collapse;width:100%;background:#fff;margin:6px 0 14px;font-size:14px}
th,td{border:1px solid #e1e4ea;padding:5px 9px;text-align:left;vertical-align:top}
th{background:#eef0f4;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td code{font-size:13px;word-break:break-all}
table.narrow{width:auto;min-width:40%}
.v{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:13px;white-space:nowrap}
.v.met{background:#d8f3dc;color:#1b5e20}.v.notmet{background:#fde2e1;color:#8a1c1c}.v.nodata{background:#eceff3;color:#4a5261}
figure{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin:10px 0 16px;padding:10px}
figcaption{font-weight:600;margin:0 0 6px}
svg{display:block;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif;fill:#1d2433}
svg text.q,svg text.tick{font-size:11px;fill:#4a5261}
svg line.grid{stroke:#e1e4ea;stroke-width:1}
svg .bar{fill:#4c78a8}svg .p50{fill:#9ecae9}svg .p90{fill:#4c78a8}svg .p99{fill:#e45756}
.note{color:#4a5261;font-size:14px}
</style>
</head>
<body>
<main>
<h1>LLM call history: evidence report</h1>
<p class="provenance">{{template "sentence" .Provenance}}</p>
{{- if gt (len .R.Provenance.Inputs) 1}}
<table>
<tr><th>Input</th><th class="n">Lines</th><th class="n">Records</th><th class="n">Bad lines</th><th>Torn last line</th></tr>
{{- range .R.Provenance.Inputs}}
<tr><td>{{.Name}}</td><td class="n">{{num .Lines}}</td><td class="n">{{num .Records}}</td><td class="n">{{num .BadLines}}</td><td>{{if .Torn}}yes{{end}}</td></tr>
{{- end}}
</table>
{{- end}}
<p class="summary">{{template "sentence" .Summary}}</p>

<h2>Evidence-review checklist</h2>
<table>
<tr><th>Item</th><th>Figure</th><th>Verdict</th></tr>
{{- range .R.Checklist}}
<tr><td>{{.Item}}</td><td>{{.Figure}}</td><td><span class="v {{verdict .Verdict}}">{{.Verdict}}</span></td></tr>
{{- end}}
</table>

<h2>History telemetry</h2>
<table>
<tr><th>Figure</th><th class="n">Records</th><th class="n">Share</th></tr>
{{- range .HistoryRows}}
<tr><td>{{.Label}}</td><td class="n">{{num .Count}}</td><td class="n">{{.Share}}</td></tr>
{{- end}}
</table>
<p class="note">Conversation history size: at most {{.R.History.MaxHistorySize}}, mean {{.MeanHistory}}.</p>

<h2>History query patterns</h2>
{{template "chart" .Patterns}}
{{- if .R.Patterns}}
<table>
<tr><th>Tag</th><th class="n">Records</th><th class="n">Of access</th><th>Example</th></tr>
{{- range .R.Patterns}}
<tr><td>{{.Tag}}</td><td class="n">{{num .Records}}</td><td class="n">{{percent .Records $.R.History.Access}}</td><td>{{if .Example}}<code>{{.Example}}</code>{{end}}</td></tr>
{{- end}}
</table>
{{- end}}

<h2>Calls</h2>
<table>
<tr><th>Figure</th><th class="n">Count</th></tr>
{{- range .CallRows}}
<tr><td>{{.Label}}</td><td class="n">{{num .Count}}</td></tr>
{{- end}}
</table>
{{- if .Span}}
<p class="note">{{template "sentence" .Span}}</p>
{{- end}}
{{- if .R.Providers}}
<h3>Providers</h3>
<table>
<tr><th>Provider</th><th class="n">Records</th><th class="n">HTTP calls</th><th class="n">Errors</th><th class="n">Input tokens</th><th class="n">Output tokens</th><th class="n">Total tokens</th></tr>
{{- range .R.Providers}}
<tr><td>{{.Name}}</td><td class="n">{{num .Records}}</td><td class="n">{{num .Calls}}</td><td class="n">{{num .Errors}}</td><td class="n">{{num .InputTokens}}</td><td class="n">{{num .OutputTokens}}</td><td class="n">{{num .TotalTokens}}</td></tr>
{{- end}}
</table>
{{- end}}
{{template "counts" (list "Speakers" .R.Speakers .R.Summary.Records)}}
{{template "counts" (list "Methods" .R.Methods .R.Summary.Records)}}
{{template "counts" (list "Models" .R.Models .R.Summary.Records)}}

<h2>Errors</h2>
{{template "chart" .Errors}}
{{- if .R.Errors}}
<table>
<tr><th>Error type</th><th class="n">Records</th><th class="n">Retriable</th><th class="n">Retriable share</th></tr>
{{- range .R.Errors}}
<tr><td>{{.Type}}</td><td class="n">{{num .Count}}</td><td class="n">{{num .Retriable}}</td><td class="n">{{percent .Retriable .Count}}</td></tr>
{{- end}}
</table>
{{- end}}

<h2>Retries</h2>
<p class="note">{{.RetriesText}}</p>
<table class="narrow">
<tr><th class="n">Attempts</th><th class="n">Records</th></tr>
{{- range .R.Retries.Histogram}}
<tr><td class="n">{{.Name}}</td><td class="n">{{num .Count}}</td></tr>
{{- end}}
</table>

<h2>Latency</h2>
{{template "chart" .Latency}}
{{- if .R.Latency}}
<p class="note">{{.LatencyNote}}</p>
<table>
<tr><th>Method</th><th class="n">Records</th><th class="n">p50</th><th class="n">p90</th><th class="n">p99</th><th class="n">max</th></tr>
{{- range .R.Latency}}
<tr><td>{{.Method}}</td><td class="n">{{num .Records}}</td><td class="n">{{human .P50MS}}</td><td class="n">{{human .P90MS}}</td><td class="n">{{human .P99MS}}</td><td class="n">{{human .MaxMS}}</td></tr>
{{- end}}
</table>
{{- end}}

<h2>Tokens</h2>
{{- if .R.Tokens}}
<table>
<tr><th>Model</th><th class="n">Records</th><th class="n">Input</th><th class="n">Output</th><th class="n">Total</th></tr>
{{- range .R.Tokens}}
<tr><td>{{.Model}}</td><td class="n">{{num .Records}}</td><td class="n">{{num .InputTokens}}</td><td class="n">{{num .OutputTokens}}</td><td class="n">{{num .TotalTokens}}</td></tr>
{{- end}}
</table>
{{- else}}
<p class="note">No record carries usage.</p>
{{- end}}

<h2>Depth</h2>
<table class="narrow">
<tr><th class="n">Depth</th><th class="n">Records</th><th class="n">Share</th></tr>
{{- range .R.Depth}}{{if .Count}}
<tr><td class="n">{{.Name}}</td><td class="n">{{num .Count}}</td><td class="n">{{percent .Count $.R.Summary.Records}}</td></tr>
{{- end}}{{end}}
</table>

<h2>Largest traces</h2>
{{- with .R.Traces}}
{{- if .Top}}
<p class="note">{{$.TracesText}}</p>
<table>
<tr><th>Trace</th><th class="n">Records</th>{{if not .Exact}}<th class="n">Overcount at most</th>{{end}}</tr>
{{- $exact := .Exact}}
{{- range .Top}}
<tr><td>{{.TraceID}}</td><td class="n">{{num .Records}}</td>{{if not $exact}}<td class="n">{{num .MaxOvercount}}</td>{{end}}</tr>
{{- end}}
</table>
{{- else}}
<p class="note">No record carries a trace id.</p>
{{- end}}
{{- end}}

<h2>Bad input</h2>
{{- with .R.BadInput}}
{{- if or .GarbledLines .TornTails}}
<p class="note">{{$.BadInputText}}</p>
{{- if .FirstGarbled}}
<table>
<tr><th>Line</th><th>Reason</th></tr>
{{- range .FirstGarbled}}
<tr><td>{{.Source}}:{{.Line}}</td><td>{{.Message}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- range .TornSources}}
<p class="note">Torn last line: {{.}}</p>
{{- end}}
{{- else}}
<p class="note">Every line was a record.</p>
{{- end}}
{{- end}}
{{- if .R.Notes}}

<h2>Notes</h2>
<ul>
{{- range .R.Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</main>
</body>
</html>
{{define "sentence"}}{{range .}}{{if .TS}}<span class="ts">{{.Text}}</span>{{else}}{{.Text}}{{end}}{{end}}{{end}}
{{define "chart"}}
<figure>
<figcaption>{{.Title}}</figcaption>
<svg id="{{.ID}}" class="{{.ID}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img">
<title>{{.Title}}</title>
{{- if .Empty}}
<text x="10" y="24">{{.Empty}}</text>
{{- end}}
{{- range .Grid}}
<line class="grid" x1="{{f .X}}" y1="{{f .Y1}}" x2="{{f .X}}" y2="{{f .Y2}}"></line><text class="tick" x="{{f .X}}" y="{{f .LabelY}}" text-anchor="middle">{{.Label}}</text>
{{- end}}
{{- range .Legend}}
<rect class="{{.Class}} legend" x="{{f .X}}" y="8" width="12" height="12"></rect><text x="{{f .TextX}}" y="18">{{.Label}}</text>
{{- end}}
{{- range .Rows}}
<g><title>{{.Full}}</title>
<text x="{{f .LabelX}}" y="{{f .LabelY}}" text-anchor="end">{{.Label}}</text>
{{- range .Bars}}
<rect class="{{.Class}}" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}"><title>{{.Tip}}</title></rect>
{{- if .Label}}<text class="q" x="{{f .LabelX}}" y="{{f .LabelY}}">{{.Label}}</text>{{end}}
{{- end}}
{{- if .Value}}
<text x="{{f .ValueX}}" y="{{f .ValueY}}">{{.Value}}</text>
{{- end}}
</g>
{{- end}}
</svg>
</figure>
{{- end}}
{{define "counts"}}{{$title := index . 0}}{{$counts := index . 1}}{{$n := index . 2}}
{{- if $counts}}
<h3>{{$title}}</h3>
<table>
<tr><th>Name</th><th class="n">Records</th><th class="n">Share</th></tr>
{{- range $counts}}
<tr><td>{{.Name}}</td><td class="n">{{num .Count}}</td><td class="n">{{percent .Count $n}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- end}}
`
