package view

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// How figures read on the pages: durations in the unit a person reads them
// in, money to the cent or to four significant digits below it, counts
// with thousands separated.

// human writes milliseconds to three significant digits: 200 µs, 40.9 ms,
// 5.6 s, 2 min 5 s.
func human(ms float64) string {
	switch {
	case math.IsNaN(ms) || ms < 0:
		return "–"
	case ms == 0:
		return "0 s"
	}
	if us := sig3(ms * 1000); us < 1000 {
		return trimFloat(us) + " µs"
	}
	if v := sig3(ms); v < 1000 {
		return trimFloat(v) + " ms"
	}
	if s := sig3(ms / 1000); s < 60 {
		return trimFloat(s) + " s"
	}
	secs := int64(math.Round(ms / 1000))
	if secs < 3600 {
		return fmt.Sprintf("%d min %d s", secs/60, secs%60)
	}
	mins := int64(math.Round(ms / 60000))
	if mins < 48*60 {
		return fmt.Sprintf("%d h %d min", mins/60, mins%60)
	}
	return fmt.Sprintf("%d days %d h", mins/(24*60), mins%(24*60)/60)
}

func sig3(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// usd writes dollars: $1,234.56, $0.42, and below a cent four significant
// digits ($0.0004515).
func usd(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v == 0:
		return "$0"
	case math.Abs(v) < 0.01:
		// Four significant digits, never an exponent: $0.0000072.
		digits := 3 - int(math.Floor(math.Log10(math.Abs(v))))
		s := strconv.FormatFloat(v, 'f', digits, 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return "$" + s
	}
	cents := int64(math.Round(v * 100))
	return "$" + group(cents/100) + fmt.Sprintf(".%02d", cents%100)
}

// group writes n with its thousands separated by commas.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// short writes a count in at most four figures: 950, 12.3k, 4.5M.
func short(n int64) string {
	f := float64(n)
	switch {
	case n < 10_000:
		return group(n)
	case n < 1_000_000:
		return trimFloat(sig3(f/1000)) + "k"
	case n < 1_000_000_000:
		return trimFloat(sig3(f/1e6)) + "M"
	}
	return trimFloat(sig3(f/1e9)) + "G"
}

// when writes a time for people, in UTC, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// clock writes a time of day, to the millisecond.
func clock(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("15:04:05.000")
}

// percent writes n of d as a percentage: 12%, 0.4%, "–" when d is 0.
func percent(n, d int64) string {
	if d == 0 {
		return "–"
	}
	p := 100 * float64(n) / float64(d)
	switch {
	case p == 0:
		return "0%"
	case p < 1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return group(int64(n)) + " " + many
}

// usdTick writes a dollar amount on a chart's scale: to three significant
// digits, so that $0.025 is not shown as $0.03.
func usdTick(v float64) string {
	if v == 0 || v >= 1000 {
		return usd(v)
	}
	s := strconv.FormatFloat(sig3(v), 'f', -1, 64)
	return "$" + s
}
