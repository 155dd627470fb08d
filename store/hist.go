package store

import (
	"encoding/binary"
	"math"
	"slices"
)

// A latency histogram: durations in logarithmic buckets 1% wide, so that
// a percentile read from it is within half a percent of the exact one.
// Encoded as the sorted non-empty buckets, each the zigzag varint of its
// difference from the one before, then its count as a uvarint.

const histWidth = 0.01

var histLog = math.Log1p(histWidth)

// histBucket is the bucket of a duration in milliseconds (> 0).
func histBucket(ms float64) int64 { return int64(math.Floor(math.Log(ms) / histLog)) }

// histValue is what stands for a bucket: its geometric middle.
func histValue(b int64) float64 { return math.Exp((float64(b) + 0.5) * histLog) }

type histogram map[int64]int64

func (h histogram) add(ms float64) {
	if ms > 0 && !math.IsInf(ms, 0) && ms == ms {
		h[histBucket(ms)]++
	}
}

func (h histogram) merge(o histogram) {
	for b, n := range o {
		h[b] += n
	}
}

func (h histogram) encode() []byte {
	keys := make([]int64, 0, len(h))
	for b, n := range h {
		if n > 0 {
			keys = append(keys, b)
		}
	}
	slices.Sort(keys)
	var out []byte
	var prev int64
	for _, b := range keys {
		out = binary.AppendVarint(out, b-prev)
		out = binary.AppendUvarint(out, uint64(h[b]))
		prev = b
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

func decodeHistogram(h histogram, data []byte) error {
	var prev int64
	for len(data) > 0 {
		d, n := binary.Varint(data)
		if n <= 0 {
			return errBadRefs
		}
		data = data[n:]
		c, m := binary.Uvarint(data)
		if m <= 0 {
			return errBadRefs
		}
		data = data[m:]
		prev += d
		h[prev] += int64(c)
	}
	return nil
}

// percentile is percentile_cont over the histogram's values, each taken
// as its bucket's middle.
func (h histogram) percentile(p float64) float64 {
	keys := make([]int64, 0, len(h))
	var total int64
	for b, n := range h {
		if n > 0 {
			keys = append(keys, b)
			total += n
		}
	}
	if total == 0 {
		return 0
	}
	slices.Sort(keys)
	at := func(rank int64) float64 { // the rank-th value, from 0
		for _, b := range keys {
			if rank < h[b] {
				return histValue(b)
			}
			rank -= h[b]
		}
		return histValue(keys[len(keys)-1])
	}
	pos := p * float64(total-1)
	lo := math.Floor(pos)
	v := at(int64(lo))
	if pos == lo {
		return v
	}
	return v + (pos-lo)*(at(int64(lo)+1)-v)
}
