package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/record"
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
		LatencyNote:  r.latencyText(),
		LatencyHead:  r.latencyHeader(),
		Latency:      latencyChart(r.Latency),
		Patterns:     barChart("chart-patterns", "Records by history query pattern tag", patternBars(r.Patterns)),
		Errors:       barChart("chart-errors", "Records by error type", errorBars(r.Errors)),
		SpendText:    r.spendText(),
		StalePrices:  r.stalePricesText(),
		SpendRows:    r.spendRows(),
		TraceSpend:   r.traceSpendText(),
		CacheText:    r.cacheText(),
		Unpriced:     r.unpricedRows(),
		Spend:        spendChart(r.Spend.OverTime),
		Nested:       r.nested(),
	}
	for _, l := range r.Latency {
		data.LatencyRows = append(data.LatencyRows, latencyRow{Method: l.Method, Cells: r.latencyCells(l)})
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
	Latency, Patterns, Errors, Spend                                chart
	SpendText, TraceSpend, CacheText, StalePrices                   string
	SpendRows                                                       []spendRow
	Unpriced                                                        []row
	LatencyHead                                                     []string
	LatencyRows                                                     []latencyRow
	Nested                                                          bool // some record is not at depth 0: the Depth section says something
}

// latencyRow is one method's row of the latency table.
type latencyRow struct {
	Method string
	Cells  []string
}

// chart is an SVG chart laid out in Go, so the template only places it.
type chart struct {
	ID, Title     string
	Width, Height int
	Rows          []chartRow
	Legend        []legendItem
	Grid          []gridLine // a scale's lines, under the bars
	Empty         string     // shown instead of bars when there are none

	// A column chart (spend over time) has a horizontal grid, columns and
	// labels of its own instead of rows.
	HGrid []hGridLine
	Cols  []chartBar
	Ticks []chartText
}

// hGridLine is one horizontal line of a column chart's scale and its
// label, left of the plot.
type hGridLine struct {
	X1, X2, Y, LabelX, LabelY float64
	Label                     string
}

// chartText is a label placed on a chart, centred on X.
type chartText struct {
	X, Y float64
	Text string
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
	var timed []Latency // a method whose records are all without a duration has no bar
	for _, l := range ls {
		if l.Records > 0 {
			timed = append(timed, l)
		}
	}
	ls = timed[:min(len(timed), maxChartRows)]
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

// Spend over time: a column per time bucket, on a linear scale of
// dollars with a labelled grid, and the time of some bucket starts below.
const (
	spendPlotH  = 200 // the plot's height
	spendTop    = 10
	spendBelow  = 30  // room under the plot for the times
	spendRight  = 12  // room right of the plot
	spendCharW  = 7.5 // an upper bound on the width of a label's character, at 11 px
	spendTickGp = 18  // the least gap between two time labels
)

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten
// that is at least v.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// tickMoney labels a dollar amount on the scale: as money does, but a
// step too small for a bill still gets a figure of its own.
func tickMoney(v float64) string {
	if v > 0 && v < 1e-6 {
		return "$" + strconv.FormatFloat(v, 'g', 2, 64)
	}
	return money(v)
}

// widthText names a bucket width for people: 100 ms, 10 s, 2 min, 6 h,
// 1 day, 30 days.
func widthText(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		return strconv.FormatInt(ms/1000, 10) + " s"
	case ms < 3_600_000:
		return strconv.FormatInt(ms/60_000, 10) + " min"
	case ms < 86_400_000:
		return strconv.FormatInt(ms/3_600_000, 10) + " h"
	case ms == 86_400_000:
		return "1 day"
	}
	return strconv.FormatInt(ms/86_400_000, 10) + " days"
}

// timeLayout is how the start of a bucket of width ms is shown on the
// chart: to the unit the width counts in, with the date when the chart
// spans more than one day.
func timeLayout(ms int64, days bool) string {
	var l string
	switch {
	case ms >= 86_400_000:
		return "2006-01-02"
	case ms >= 60_000:
		l = "15:04"
	case ms >= 1000:
		l = "15:04:05"
	default:
		l = "15:04:05.000"
	}
	if days {
		l = "01-02 " + l
	}
	return l
}

func spendChart(ot SpendOverTime) chart {
	c := chart{ID: "chart-spend", Title: "Spend over time", Width: chartWidth}
	var top float64
	for _, b := range ot.Buckets {
		top = max(top, b.USD)
	}
	if top == 0 {
		c.Empty = "No record has a cost."
		c.Height = 40
		return c
	}
	w := int64(math.Round(ot.BucketSeconds * 1000))
	c.Title = "Spend per " + widthText(w) + " (UTC)"

	step := niceStep(top / 4)
	lines := int(math.Ceil(top/step - 1e-9))
	yTop := step * float64(lines)
	var widest int
	var labels []string
	for k := 0; k <= lines; k++ {
		l := tickMoney(step * float64(k))
		labels = append(labels, l)
		widest = max(widest, utf8.RuneCountInString(l))
	}
	left := float64(widest)*spendCharW + 14
	plotW := chartWidth - left - spendRight
	bottom := float64(spendTop + spendPlotH)
	for k, l := range labels {
		y := bottom - float64(k)/float64(lines)*spendPlotH
		c.HGrid = append(c.HGrid, hGridLine{X1: left, X2: chartWidth - spendRight, Y: y, LabelX: left - 6, LabelY: y + 4, Label: l})
	}

	first, _ := record.ParseTime(ot.Buckets[0].Start)
	last, _ := record.ParseTime(ot.Buckets[len(ot.Buckets)-1].Start)
	layout := timeLayout(w, first.YearDay() != last.YearDay() || first.Year() != last.Year())
	bw := plotW / float64(len(ot.Buckets))
	gap := min(bw*0.15, 2)
	for i, b := range ot.Buckets {
		if b.USD <= 0 {
			continue
		}
		h := max(b.USD/yTop*spendPlotH, 1)
		start, _ := record.ParseTime(b.Start)
		c.Cols = append(c.Cols, chartBar{
			Class: "bar", X: left + float64(i)*bw + gap, Y: bottom - h, W: max(bw-2*gap, 1), H: h,
			Tip: fmt.Sprintf("%s UTC, %s: %s (%s)", start.UTC().Format("2006-01-02 15:04:05.000"), widthText(w), money(b.USD), plural(b.Records, "record", "records")),
		})
	}
	// Time labels at bucket starts, far enough apart not to touch, and
	// only where the whole label fits on the chart.
	labelW := float64(len(layout)) * spendCharW
	every := max(1, int(math.Ceil((labelW+spendTickGp)/bw)))
	for i := 0; i < len(ot.Buckets); i += every {
		x := left + float64(i)*bw
		if x-labelW/2 < 0 || x+labelW/2 > chartWidth {
			continue
		}
		start, _ := record.ParseTime(ot.Buckets[i].Start)
		// Low enough to clear the "$0" of the scale, which ends where
		// the first label begins.
		c.Ticks = append(c.Ticks, chartText{X: x, Y: bottom + 21, Text: start.UTC().Format(layout)})
	}
	c.Height = int(bottom) + spendBelow
	return c
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"num":     num,
	"percent": percent,
	"human":   human,
	"money":   money,
	"share":   shareText,
	"list":    func(v ...any) []any { return v },
	"f":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"ms":      msText,
	"attributed": func(v any) bool {
		g, _ := v.([]Group)
		return attributed(g)
	},
	"verdict": func(v string) string {
		switch v {
		case Met:
			return "met"
		case NotMet:
			return "notmet"
		}
		return "nodata"
	},
}).Parse(scrollingTables(pageHTML + scoresHTML)))

// scrollingTables wraps every table of a page in a box that scrolls
// sideways, so a wide table scrolls inside itself on a narrow screen and
// the page never does.
func scrollingTables(page string) string {
	return strings.NewReplacer("<table", `<div class="wide"><table`, "</table>", "</table></div>").Replace(page)
}

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
.wide{overflow-x:auto;max-width:100%;margin:6px 0 14px}.wide table{margin:0}
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
.warn{border-left:4px solid #b8860b;background:#fff8e1;padding:6px 10px;font-size:14px}
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
<tr><th>Verdict</th><th>Item</th><th>Figure</th></tr>
{{- range .R.Checklist}}
<tr><td><span class="v {{verdict .Verdict}}">{{.Verdict}}</span></td><td>{{.Item}}</td><td>{{.Figure}}</td></tr>
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
{{template "groups" (list "Users" "User" .R.Users)}}
{{template "groups" (list "Tags" "Tag" .R.Tags)}}
{{template "scores" .R.Scores}}

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
{{- range .R.Retries.Histogram}}{{if .Count}}
<tr><td class="n">{{.Name}}</td><td class="n">{{num .Count}}</td></tr>
{{- end}}{{end}}
</table>

<h2>Latency</h2>
{{template "chart" .Latency}}
{{- if .R.Latency}}
<p class="note">{{.LatencyNote}}</p>
<table>
<tr><th>Method</th>{{range .LatencyHead}}<th class="n">{{.}}</th>{{end}}</tr>
{{- range .LatencyRows}}
<tr><td>{{.Method}}</td>{{range .Cells}}<td class="n">{{.}}</td>{{end}}</tr>
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

<h2>Spend</h2>
{{- if not .R.Summary.Records}}
<p class="note">No records.</p>
{{- else}}
<p class="note">{{.SpendText}}</p>
{{- with .StalePrices}}
<p class="warn"><strong>Warning.</strong> {{.}}</p>
{{- end}}
{{template "chart" .Spend}}
{{- with .R.Spend}}
{{- if .PricedRecords}}
<table>
<tr><th>Records</th><th class="n">Count</th><th class="n">Priced</th><th class="n">Spend</th><th class="n">Share of spend</th></tr>
{{- range $.SpendRows}}
<tr><td>{{.Label}}</td><td class="n">{{num .Records}}</td><td class="n">{{num .Priced}}</td><td class="n">{{money .USD}}</td><td class="n">{{.Share}}</td></tr>
{{- end}}
</table>
{{template "spendBy" (list "Spend by model" "Model" .Models .USD)}}
{{template "spendBy" (list "Spend by speaker" "Speaker" .Speakers .USD)}}
<h3>Most expensive traces</h3>
{{- if .Traces.Top}}
<p class="note">{{$.TraceSpend}}</p>
<table>
<tr><th>Trace</th><th class="n">Spend</th><th class="n">Share</th>{{if not .Traces.Exact}}<th class="n">Overcount at most</th>{{end}}</tr>
{{- $exact := .Traces.Exact}}{{$total := .USD}}
{{- range .Traces.Top}}
<tr><td>{{.TraceID}}</td><td class="n">{{money .USD}}</td><td class="n">{{share .USD $total}}</td>{{if not $exact}}<td class="n">{{money .MaxOvercountUSD}}</td>{{end}}</tr>
{{- end}}
</table>
{{- else}}
<p class="note">No priced record carries a trace id.</p>
{{- end}}
{{- end}}
<h3>Input served from cache</h3>
<p class="note">{{$.CacheText}}</p>
{{- if or .Cache.CachedTokens .Cache.CacheWriteTokens}}
<table>
<tr><th>Model</th><th class="n">Input tokens</th><th class="n">Read from cache</th><th class="n">Share</th><th class="n">Written to cache</th></tr>
{{- range $.R.Tokens}}{{if .InputTokens}}
<tr><td>{{.Model}}</td><td class="n">{{num .InputTokens}}</td><td class="n">{{num .CachedTokens}}</td><td class="n">{{percent .CachedTokens .InputTokens}}</td><td class="n">{{num .CacheWriteTokens}}</td></tr>
{{- end}}{{end}}
</table>
{{- end}}
<h3>Unpriced calls</h3>
{{- if or .UnpricedRecords .NoUsageRecords .LocalRecords}}
<table>
<tr><th>Reason</th><th class="n">Records</th><th class="n">Share of records</th></tr>
{{- range $.Unpriced}}{{if .Count}}
<tr><td>{{.Label}}</td><td class="n">{{num .Count}}</td><td class="n">{{.Share}}</td></tr>
{{- end}}{{end}}
</table>
{{- if .UnpricedModels}}
<table>
<tr><th>Model most often unpriced</th><th class="n">Records</th></tr>
{{- range .UnpricedModels}}
<tr><td>{{.Name}}</td><td class="n">{{num .Count}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- else}}
<p class="note">Every record was priced.</p>
{{- end}}
{{- end}}
{{- end}}

{{- if .Nested}}
<h2>Depth</h2>
<table class="narrow">
<tr><th class="n">Depth</th><th class="n">Records</th><th class="n">Share</th></tr>
{{- range .R.Depth}}{{if .Count}}
<tr><td class="n">{{.Name}}</td><td class="n">{{num .Count}}</td><td class="n">{{percent .Count $.R.Summary.Records}}</td></tr>
{{- end}}{{end}}
</table>
{{- end}}

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
{{- range .HGrid}}
<line class="grid" x1="{{f .X1}}" y1="{{f .Y}}" x2="{{f .X2}}" y2="{{f .Y}}"></line><text class="tick" x="{{f .LabelX}}" y="{{f .LabelY}}" text-anchor="end">{{.Label}}</text>
{{- end}}
{{- range .Cols}}
<rect class="{{.Class}}" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}"><title>{{.Tip}}</title></rect>
{{- end}}
{{- range .Ticks}}
<text class="tick" x="{{f .X}}" y="{{f .Y}}" text-anchor="middle">{{.Text}}</text>
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
{{define "spendBy"}}{{$title := index . 0}}{{$col := index . 1}}{{$rows := index . 2}}{{$total := index . 3}}
<h3>{{$title}}</h3>
<table>
<tr><th>{{$col}}</th><th class="n">Priced records</th><th class="n">Spend</th><th class="n">Share</th></tr>
{{- range $rows}}
<tr><td>{{.Name}}</td><td class="n">{{num .Records}}</td><td class="n">{{money .USD}}</td><td class="n">{{share .USD $total}}</td></tr>
{{- end}}
</table>
{{- end}}
{{define "groups"}}{{$title := index . 0}}{{$col := index . 1}}{{$groups := index . 2}}
{{- if attributed $groups}}
<h3>{{$title}}</h3>
<table>
<tr><th>{{$col}}</th><th class="n">Records</th><th class="n">Errors</th><th class="n">Tokens</th><th class="n">Spend</th><th class="n">p50</th><th class="n">p95</th></tr>
{{- range $groups}}
<tr><td>{{.Name}}</td><td class="n">{{num .Records}}</td><td class="n">{{num .Errors}}</td><td class="n">{{num .TotalTokens}}</td><td class="n">{{money .USD}}</td><td class="n">{{ms .P50MS}}</td><td class="n">{{ms .P95MS}}</td></tr>
{{- end}}
</table>
{{- end}}
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
