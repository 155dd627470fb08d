// Package quantile is the one latency sketch of llmhistory: the store's
// rollups, the viewer and the report each keep durations in a [Sketch]
// and ask it for quantiles, so that the same calls give the same p50 and
// p95 wherever they are shown.
//
// A Sketch keeps durations in logarithmic buckets in the manner of
// DDSketch (Masson, Rim and Lee, 2019): a value v > 0 lands in bucket
// ceil(log_γ v), with γ = (1+α)/(1-α) and α = 1%, whose representative
// 2γ^i/(γ+1) is within 1% of every value in it. A quantile is the
// nearest-rank value (the ceil(q·n)-th smallest), given as its bucket's
// representative clamped to the exact minimum and maximum: within 1% of
// the exact value, and exact when every value is the same. Sketches merge
// exactly (bucket counts add), so a quantile of merged sketches is the
// quantile of all their values; and they encode to a few bytes a bucket
// ([Sketch.AppendBinary]), for a store to keep per hour.
//
// What counts as a duration is decided here too: [Sketch.Add] takes
// positive finite values (a record's DurationMS of 0 means it has none),
// counts those past 10⁹ ms (11.5 days, damage rather than a call) as 10⁹,
// and those at or below 1 µs in one bucket of their own.
package quantile

import (
	"encoding/binary"
	"errors"
	"math"
)

// Accuracy is the relative error of a quantile: 1%.
const Accuracy = 0.01

// The range a Sketch keeps apart: values at or below MinValue share one
// bucket; values above MaxValue are counted as MaxValue.
const (
	MinValue = 1e-3
	MaxValue = 1e9
)

var (
	gamma    = (1 + Accuracy) / (1 - Accuracy)
	logGamma = math.Log(gamma)
	// minIndex and maxIndex are the buckets of the values just above
	// MinValue and of MaxValue.
	minIndex = index(math.Nextafter(MinValue, math.Inf(1)))
	maxIndex = index(MaxValue)
)

func index(v float64) int32 { return int32(math.Ceil(math.Log(v) / logGamma)) }

// value is bucket i's representative: within Accuracy of every value in
// it.
func value(i int32) float64 { return 2 * math.Pow(gamma, float64(i)) / (gamma + 1) }

// Sketch is a mergeable summary of durations in milliseconds. The zero
// value is an empty sketch, ready to use. It is not safe for concurrent
// use.
type Sketch struct {
	// counts[k] is the count of bucket offset+k: a window over the
	// buckets in use, grown as values arrive (about 320 buckets from
	// 100 ms to a minute).
	counts   []uint64
	offset   int32
	zero     uint64 // values at or below MinValue
	n        uint64
	min, max float64
}

// Add counts a duration in milliseconds. A value that is not positive,
// or not finite, is not a duration and is not counted.
func (s *Sketch) Add(v float64) {
	if !(v > 0) || math.IsInf(v, 1) {
		return
	}
	v = min(v, MaxValue)
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	if v <= MinValue {
		s.zero++
		return
	}
	s.addBucket(index(v), 1)
}

// addBucket adds c to bucket i, growing the window to hold it.
func (s *Sketch) addBucket(i int32, c uint64) {
	i = min(max(i, minIndex), maxIndex)
	if len(s.counts) == 0 {
		s.counts = make([]uint64, 1, 64)
		s.offset = i
	}
	switch {
	case i < s.offset:
		grow := int(s.offset - i)
		counts := make([]uint64, grow+len(s.counts), grow+len(s.counts)+32)
		copy(counts[grow:], s.counts)
		s.counts, s.offset = counts, i
	case int(i-s.offset) >= len(s.counts):
		need := int(i-s.offset) + 1
		if need > cap(s.counts) {
			counts := make([]uint64, len(s.counts), need+need/2)
			copy(counts, s.counts)
			s.counts = counts
		}
		s.counts = s.counts[:need]
	}
	s.counts[i-s.offset] += c
}

// Count returns how many durations were counted.
func (s *Sketch) Count() int64 { return int64(s.n) }

// Min and Max return the smallest and greatest duration counted, exact
// (0 when none was).
func (s *Sketch) Min() float64 { return s.min }

// Max: see [Sketch.Min].
func (s *Sketch) Max() float64 { return s.max }

// Quantile returns the nearest-rank q-quantile (0 < q ≤ 1): the
// ceil(q·n)-th smallest duration, within 1%, clamped to the exact minimum
// and maximum (the n-th is the maximum itself); 0 for an empty sketch.
func (s *Sketch) Quantile(q float64) float64 {
	if s.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.n)))
	rank = min(max(rank, 1), s.n)
	if rank == s.n {
		return s.max
	}
	seen := s.zero
	if seen >= rank {
		return s.min
	}
	for k, c := range s.counts {
		seen += c
		if seen >= rank {
			return min(max(value(s.offset+int32(k)), s.min), s.max)
		}
	}
	return s.max
}

// Merge adds o's durations to s.
func (s *Sketch) Merge(o *Sketch) {
	if o.n == 0 {
		return
	}
	s.merge(o.n, o.zero, o.min, o.max)
	for k, c := range o.counts {
		if c > 0 {
			s.addBucket(o.offset+int32(k), c)
		}
	}
}

func (s *Sketch) merge(n, zero uint64, lo, hi float64) {
	if s.n == 0 || lo < s.min {
		s.min = lo
	}
	if s.n == 0 || hi > s.max {
		s.max = hi
	}
	s.n += n
	s.zero += zero
}

// Reset empties s, keeping its memory.
func (s *Sketch) Reset() {
	clear(s.counts)
	s.counts = s.counts[:0]
	s.offset, s.zero, s.n, s.min, s.max = 0, 0, 0, 0, 0
}

// The encoding, version 1: a zero byte for an empty sketch; otherwise the
// byte 1, the minimum and the maximum (float64, little endian), the count
// of values at or below MinValue (uvarint), then each non-empty bucket:
// its distance from the previous one (the first from minIndex) and its
// count, both uvarints. A bucket of a rollup of a few calls takes two or
// three bytes.
const encodingV1 = 1

// ErrEncoding is the error of [Sketch.MergeBinary] for bytes that are not
// a sketch.
var ErrEncoding = errors.New("quantile: not an encoded sketch")

// AppendBinary appends s's encoding to dst.
func (s *Sketch) AppendBinary(dst []byte) []byte {
	if s.n == 0 {
		return append(dst, 0)
	}
	dst = append(dst, encodingV1)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.min))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.max))
	dst = binary.AppendUvarint(dst, s.zero)
	prev := minIndex
	for k, c := range s.counts {
		if c == 0 {
			continue
		}
		i := s.offset + int32(k)
		dst = binary.AppendUvarint(dst, uint64(i-prev))
		dst = binary.AppendUvarint(dst, c)
		prev = i
	}
	return dst
}

// MergeBinary adds the durations of an encoded sketch to s. Bytes that
// are not one leave s unchanged and return [ErrEncoding].
func (s *Sketch) MergeBinary(data []byte) error {
	if len(data) == 1 && data[0] == 0 {
		return nil
	}
	if len(data) < 17 || data[0] != encodingV1 {
		return ErrEncoding
	}
	lo := math.Float64frombits(binary.LittleEndian.Uint64(data[1:]))
	hi := math.Float64frombits(binary.LittleEndian.Uint64(data[9:]))
	rest := data[17:]
	zero, k := binary.Uvarint(rest)
	if k <= 0 || !(lo > 0) || !(hi >= lo) || hi > MaxValue {
		return ErrEncoding
	}
	rest = rest[k:]
	// Checked whole before anything is added: a damaged sketch adds
	// nothing. Buckets come in increasing order, the first possibly at
	// minIndex itself.
	n := zero
	i := int64(minIndex)
	for p, firstBucket := rest, true; len(p) > 0; firstBucket = false {
		d, k1 := binary.Uvarint(p)
		if k1 <= 0 || (d == 0 && !firstBucket) {
			return ErrEncoding
		}
		c, k2 := binary.Uvarint(p[k1:])
		if k2 <= 0 || c == 0 || d > uint64(maxIndex-minIndex) {
			return ErrEncoding
		}
		i += int64(d)
		if i > int64(maxIndex) || n+c < n {
			return ErrEncoding
		}
		n += c
		p = p[k1+k2:]
	}
	if n == 0 {
		return ErrEncoding
	}
	s.merge(n, zero, lo, hi)
	prev := minIndex
	for len(rest) > 0 {
		d, k1 := binary.Uvarint(rest)
		c, k2 := binary.Uvarint(rest[k1:])
		prev += int32(d)
		s.addBucket(prev, c)
		rest = rest[k1+k2:]
	}
	return nil
}
