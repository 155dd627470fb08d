package store

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A percentile read from the histogram is within half a percent of the
// exact one, whatever the spread of durations.
func TestHistogramPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, gen := range []func() float64{
		func() float64 { return 300 + rng.Float64()*2000 },
		func() float64 { return rng.ExpFloat64() * 800 },
		func() float64 { return 0.05 + rng.Float64()*3 },
		func() float64 { return 1e6 * rng.Float64() },
	} {
		h := histogram{}
		var exact []float64
		for range 5000 {
			d := gen()
			h.add(d)
			exact = append(exact, d)
		}
		slices.Sort(exact)
		var back histogram = histogram{}
		require.NoError(t, decodeHistogram(back, h.encode()))
		for _, p := range []float64{0, 0.5, 0.95, 1} {
			want := percentileCont(exact, p)
			assert.InEpsilon(t, want, h.percentile(p), 0.005, "p%v", p*100)
			assert.Equal(t, h.percentile(p), back.percentile(p), "encoding keeps it")
		}
	}
	assert.Zero(t, histogram{}.percentile(0.5))
	h := histogram{}
	h.add(0)
	h.add(-1)
	assert.Empty(t, h, "no duration, no value")
}

func FuzzHistogram(f *testing.F) {
	f.Add(histogram{5: 2, -3: 1}.encode())
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		h := histogram{}
		if decodeHistogram(h, b) != nil {
			return
		}
		h.percentile(0.95) // never panics
		again := histogram{}
		require.NoError(t, decodeHistogram(again, h.encode()))
		for k, v := range h {
			if v > 0 { // a count past 2^63 wraps: not data a store writes
				assert.Equal(t, v, again[k])
			}
		}
	})
}
