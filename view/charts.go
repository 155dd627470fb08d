package view

import (
	"math"
	"time"
)

// Charts are drawn on the server as SVG: no script draws them, and the
// page's policy allows no inline style, so every position is an
// attribute.

type chart struct {
	ID, Title, Total    string
	W, H                int
	PlotLeft, PlotRight int
	Bars                []chartBar
	YTicks, XTicks      []chartTick
	Empty               bool
	Legend              []chartLegend
}

type chartBar struct {
	X, Y, W, H float64
	Class      string
	Tip        string
}

type chartTick struct {
	X, Y   float64
	Label  string
	Anchor string // text-anchor of an x label: start, middle or end
}

type chartLegend struct {
	Class, Label string
}

// Plot area of a series chart, in viewBox units.
// The viewBox is about as wide as a chart is drawn at a laptop's width in
// three columns and at a phone's in one, so that its text stays near the
// page's size.
const (
	chartW      = 400
	chartH      = 170
	chartLeft   = 46
	chartRight  = 6
	chartTop    = 10
	chartBottom = 24
)

// seriesChart draws one bar per bucket of value, and of over (when not
// nil) in front of it: errors in front of calls.
func seriesChart(id, title, total string, st *Stats, value, over func(Bucket) float64, format func(float64) string, tip func(Bucket) string) chart {
	c := chart{ID: id, Title: title, Total: total, W: chartW, H: chartH, PlotLeft: chartLeft, PlotRight: chartW - chartRight}
	if len(st.Series) == 0 {
		c.Empty = true
		return c
	}
	top := 0.0
	for _, b := range st.Series {
		top = max(top, value(b))
	}
	if top <= 0 {
		c.Empty = true
		return c
	}
	top = niceCeil(top)
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	n := len(st.Series)
	step := plotW / float64(n)
	gap := min(step*0.2, 4)
	y := func(v float64) float64 { return chartTop + plotH - plotH*v/top }
	for i, b := range st.Series {
		x := chartLeft + float64(i)*step + gap/2
		if v := value(b); v > 0 {
			h := math.Max(plotH*v/top, 1)
			c.Bars = append(c.Bars, chartBar{X: x, Y: chartTop + plotH - h, W: step - gap, H: h, Class: "bar", Tip: tip(b)})
		}
		if over != nil {
			if v := over(b); v > 0 {
				h := math.Max(plotH*v/top, 1)
				c.Bars = append(c.Bars, chartBar{X: x, Y: chartTop + plotH - h, W: step - gap, H: h, Class: "bar err", Tip: tip(b)})
			}
		}
	}
	for _, f := range []float64{0, 0.5, 1} {
		c.YTicks = append(c.YTicks, chartTick{X: chartLeft - 6, Y: y(top * f), Label: format(top * f)})
	}
	layout := tickLayout(st.Bucket, st.Series[0].Start, st.Series[n-1].Start)
	ticks := []int{0}
	if n >= 5 {
		ticks = append(ticks, n/2)
	}
	if n > 1 {
		ticks = append(ticks, n-1)
	}
	for _, i := range ticks {
		x := chartLeft + float64(i)*step + step/2
		anchor := "middle"
		switch {
		case i == 0:
			anchor, x = "start", chartLeft
		case i == n-1:
			anchor, x = "end", chartW-chartRight
		}
		c.XTicks = append(c.XTicks, chartTick{X: x, Y: chartH - 6, Label: st.Series[i].Start.UTC().Format(layout), Anchor: anchor})
	}
	return c
}

// tickLayout is how bucket starts are written under a chart.
func tickLayout(bucket time.Duration, first, last time.Time) string {
	switch {
	case bucket >= 24*time.Hour:
		return "Jan 2"
	case last.Sub(first) >= 24*time.Hour || first.YearDay() != last.YearDay():
		return "Jan 2 15:04"
	}
	return "15:04"
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// share is v as a width out of 100 for a bar against the largest, max;
// at least a sliver when v is not 0.
func share(v, max float64) float64 {
	if max <= 0 || v <= 0 {
		return 0
	}
	return math.Max(100*v/max, 0.5)
}
