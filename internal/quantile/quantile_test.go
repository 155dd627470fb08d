package quantile_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/quantile"
)

// nearestRank is the exact ceil(q·n)-th smallest of sorted values.
func nearestRank(sorted []float64, q float64) float64 {
	r := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

// Every quantile is within 1% of the exact nearest-rank value, whatever
// the distribution.
func TestAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dist := range []struct {
		name string
		gen  func() float64
	}{
		{"lognormal", func() float64 { return math.Exp(rng.NormFloat64()*1.5 + 5) }},
		{"uniform", func() float64 { return rng.Float64() * 30000 }},
		{"tiny", func() float64 { return 0.002 + rng.Float64()*0.01 }},
		{"bimodal", func() float64 { return []float64{40, 9000}[rng.IntN(2)] + rng.Float64() }},
	} {
		var s quantile.Sketch
		all := make([]float64, 20000)
		for i := range all {
			all[i] = dist.gen()
			s.Add(all[i])
		}
		slices.Sort(all)
		for _, q := range []float64{0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1} {
			assert.InEpsilon(t, nearestRank(all, q), s.Quantile(q), quantile.Accuracy+1e-9, "%s q=%v", dist.name, q)
		}
		assert.Equal(t, all[0], s.Min(), dist.name)
		assert.Equal(t, all[len(all)-1], s.Max(), dist.name)
		assert.EqualValues(t, len(all), s.Count())
	}
}

// A value repeated, or a single one, comes back exact; an empty sketch
// gives 0.
func TestExactWhenAlike(t *testing.T) {
	var s quantile.Sketch
	assert.Zero(t, s.Quantile(0.5))
	s.Add(812.25)
	assert.Equal(t, 812.25, s.Quantile(0.5))
	assert.Equal(t, 812.25, s.Quantile(0.95))
	for range 10 {
		s.Add(812.25)
	}
	assert.Equal(t, 812.25, s.Quantile(0.01))
	assert.Equal(t, 812.25, s.Quantile(1))
}

// What is not a duration is not counted; damage past 10⁹ ms counts as
// 10⁹; durations at or below 1 µs share a bucket.
func TestOddValues(t *testing.T) {
	var s quantile.Sketch
	for _, v := range []float64{0, -5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		s.Add(v)
	}
	assert.Zero(t, s.Count())
	s.Add(1e308)
	s.Add(1e308)
	assert.EqualValues(t, 2, s.Count())
	assert.Equal(t, 1e9, s.Quantile(0.5))
	assert.Equal(t, 1e9, s.Max())

	var tiny quantile.Sketch
	tiny.Add(1e-9)
	tiny.Add(5e-4)
	tiny.Add(2)
	assert.Equal(t, 1e-9, tiny.Quantile(0.3), "the zero bucket answers with the minimum")
	assert.Equal(t, 2.0, tiny.Quantile(1))
}

// Merging sketches gives what adding every value to one gives, and so
// does decoding their encodings into one.
func TestMergeAndEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var all, merged, decoded quantile.Sketch
	for part := range 20 {
		var s quantile.Sketch
		for range rng.IntN(300) {
			v := math.Exp(rng.NormFloat64()*2 + float64(part%5))
			if rng.IntN(50) == 0 {
				v = 1e-4
			}
			s.Add(v)
			all.Add(v)
		}
		merged.Merge(&s)
		enc := s.AppendBinary(nil)
		require.NoError(t, decoded.MergeBinary(enc))
		var again quantile.Sketch
		require.NoError(t, again.MergeBinary(enc))
		assert.Equal(t, enc, again.AppendBinary(nil), "an encoding decodes to itself")
	}
	want := all.AppendBinary(nil)
	assert.Equal(t, want, merged.AppendBinary(nil))
	assert.Equal(t, want, decoded.AppendBinary(nil))
	for _, q := range []float64{0.5, 0.95} {
		assert.Equal(t, all.Quantile(q), merged.Quantile(q))
		assert.Equal(t, all.Quantile(q), decoded.Quantile(q))
	}
	merged.Reset()
	assert.Zero(t, merged.Count())
	assert.Equal(t, []byte{0}, merged.AppendBinary(nil))
}

// A few calls take a few bytes: what a store keeps per rollup row.
func TestEncodingIsSmall(t *testing.T) {
	var s quantile.Sketch
	for _, v := range []float64{812, 830, 1250} {
		s.Add(v)
	}
	assert.LessOrEqual(t, len(s.AppendBinary(nil)), 17+1+3*3)
}

func TestBadEncodings(t *testing.T) {
	var good quantile.Sketch
	good.Add(10)
	good.Add(20)
	enc := good.AppendBinary(nil)
	for name, b := range map[string][]byte{
		"empty":          {},
		"version":        append([]byte{2}, enc[1:]...),
		"short":          enc[:10],
		"cut varint":     append(enc[:len(enc)-1:len(enc)-1], 0x80),
		"no values":      enc[:18:18],
		"zero count":     append(enc[:len(enc)-1:len(enc)-1], 0),
		"repeat bucket":  append(enc, 0, 1),
		"past the range": append(enc, 0xff, 0xff, 0xff, 0x0f, 1),
	} {
		var s quantile.Sketch
		assert.ErrorIs(t, s.MergeBinary(b), quantile.ErrEncoding, name)
		assert.Zero(t, s.Count(), "%s: nothing added", name)
	}
}

// Whatever bytes it is given, MergeBinary does not panic, and what it
// takes encodes back to bytes it takes again with the same figures.
func FuzzMergeBinary(f *testing.F) {
	var s quantile.Sketch
	for _, v := range []float64{1e-4, 3, 300, 3000, 3e8} {
		s.Add(v)
	}
	f.Add(s.AppendBinary(nil))
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0x90, 0x4, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s quantile.Sketch
		if s.MergeBinary(data) != nil {
			return
		}
		enc := s.AppendBinary(nil)
		var again quantile.Sketch
		require.NoError(t, again.MergeBinary(enc))
		assert.Equal(t, s.Count(), again.Count())
		assert.Equal(t, s.Quantile(0.5), again.Quantile(0.5))
		assert.Equal(t, s.Quantile(0.95), again.Quantile(0.95))
	})
}

func BenchmarkAdd(b *testing.B) {
	var s quantile.Sketch
	rng := rand.New(rand.NewPCG(1, 1))
	vs := make([]float64, 1024)
	for i := range vs {
		vs[i] = math.Exp(rng.NormFloat64() + 6)
	}
	for i := 0; b.Loop(); i++ {
		s.Add(vs[i&1023])
	}
}

func BenchmarkMergeBinary(b *testing.B) {
	var s quantile.Sketch
	rng := rand.New(rand.NewPCG(1, 1))
	for range 30 {
		s.Add(math.Exp(rng.NormFloat64() + 6))
	}
	enc := s.AppendBinary(nil)
	var into quantile.Sketch
	b.ReportAllocs()
	for b.Loop() {
		if err := into.MergeBinary(enc); err != nil {
			b.Fatal(err)
		}
	}
}
