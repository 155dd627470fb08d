package report

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestMoney(t *testing.T) {
	for usd, want := range map[float64]string{
		0: "$0", 12.34: "$12.34", 1234.5: "$1,234.50", 1_234_567.891: "$1,234,567.89",
		1: "$1.00", 0.9951: "$1.00", 0.994: "$0.994", 0.5: "$0.50", 0.65: "$0.65", 0.123456: "$0.123",
		0.0123: "$0.0123", 0.01: "$0.01", 0.000036: "$0.000036", 0.0000035999: "$0.0000036",
		0.000001: "$0.000001", 0.00000099: "<$0.000001", -1: "–", math.NaN(): "–",
	} {
		if got := money(usd); got != want {
			t.Errorf("money(%v) = %q, want %q", usd, got, want)
		}
	}
}

func TestShareText(t *testing.T) {
	for _, c := range []struct {
		part, whole float64
		want        string
	}{{0.25, 0.65, "38.5%"}, {1, 1, "100%"}, {0.99999, 1, "99.9%"}, {1e-9, 1, "0.1%"}, {0, 1, "0.0%"}, {1, 0, "–"}} {
		if got := shareText(c.part, c.whole); got != c.want {
			t.Errorf("shareText(%v, %v) = %q, want %q", c.part, c.whole, got, c.want)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for v, want := range map[float64]float64{0.3: 0.5, 0.25: 0.25, 0.0007: 0.001, 1.2: 2, 2.1: 2.5, 300: 500, 0.1: 0.1} {
		if got := niceStep(v); math.Abs(got-want) > want*1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", v, got, want)
		}
	}
}

// Every width of the ladder divides the next, so that merging buckets is
// exact.
func TestBucketWidthsDivide(t *testing.T) {
	for i := 1; i < len(bucketWidths); i++ {
		if bucketWidths[i]%bucketWidths[i-1] != 0 {
			t.Errorf("%d ms does not divide %d ms", bucketWidths[i-1], bucketWidths[i])
		}
	}
	// The widest holds any span RFC 3339 can write within the bound.
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMilli()
	if n := buckets(lo, hi, bucketWidths[len(bucketWidths)-1]); n > maxChartBuckets {
		t.Errorf("10,000 years take %d of the widest buckets, more than %d", n, maxChartBuckets)
	}
}

// Whatever the order of the timestamps, and across 1970, the timeline
// puts every record in the bucket of its start at the width the span
// needs: the same buckets as counting the sorted records directly.
func TestTimelineAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC).UnixMilli()
	for _, span := range []int64{50, 3_000, 7_200_000, 400 * 86_400_000} {
		var tl timeline
		type rec struct {
			ms  int64
			usd float64
		}
		var recs []rec
		for range 5000 {
			r := rec{base + rng.Int64N(span+1), float64(rng.IntN(100)) / 1000}
			recs = append(recs, r)
			tl.add(r.ms, r.usd)
		}
		got := tl.report(maxChartBuckets)
		w := int64(math.Round(got.BucketSeconds * 1000))
		if len(got.Buckets) > maxChartBuckets {
			t.Fatalf("span %d ms: %d buckets", span, len(got.Buckets))
		}
		// The width is the narrowest of the ladder that shows the span.
		minT, maxT := recs[0].ms, recs[0].ms
		for _, r := range recs {
			minT, maxT = min(minT, r.ms), max(maxT, r.ms)
		}
		want := bucketWidths[fitLevel(0, minT, maxT, maxChartBuckets)]
		if w != want {
			t.Errorf("span %d ms: width %d ms, want %d", span, w, want)
		}
		records := make([]int64, len(got.Buckets))
		usd := make([]float64, len(got.Buckets))
		lo := floorDiv(minT, w) * w
		for _, r := range recs {
			i := (r.ms - lo) / w
			records[i]++
			usd[i] += r.usd
		}
		for i, b := range got.Buckets {
			if b.Records != records[i] || math.Abs(b.USD-usd[i]) > 1e-9 {
				t.Errorf("span %d ms, bucket %s: %d records $%v, want %d $%v", span, b.Start, b.Records, b.USD, records[i], usd[i])
			}
		}
	}
}

// The lazy heap: whenever a replacement is due, the entry replaced has the
// smallest total, as with a heap kept all along; here checked against a
// brute-force Space-Saving on a random weighted stream.
func TestTopKReplacesTheSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	tk := newTopK[float64](16)
	type ref struct{ count, err float64 }
	brute := map[string]*ref{}
	for range 20000 {
		key := string(rune('a' + rng.IntN(40)))
		w := float64(1+rng.IntN(1000)) / 1000
		if e, ok := brute[key]; ok {
			e.count += w
		} else if len(brute) < 16 {
			brute[key] = &ref{count: w}
		} else {
			var minKey string
			for k, e := range brute {
				if minKey == "" || e.count < brute[minKey].count || (e.count == brute[minKey].count && k < minKey) {
					minKey = k
				}
			}
			m := brute[minKey].count
			// Ties: the heap may pick any of the smallest; follow its pick.
			tkMin := tk.minCount()
			if tkMin != m {
				t.Fatalf("smallest tracked total %v, want %v", tkMin, m)
			}
			tk.add(key, w)
			for k := range brute {
				if _, ok := tk.index[k]; !ok {
					delete(brute, k)
				}
			}
			brute[key] = &ref{count: m + w, err: m}
			continue
		}
		tk.add(key, w)
	}
	for k, e := range brute {
		got, ok := tk.index[k]
		if !ok || math.Abs(got.count-e.count) > 1e-9 || math.Abs(got.err-e.err) > 1e-9 {
			t.Errorf("%s: got %+v, want %+v", k, got, e)
		}
	}
}
