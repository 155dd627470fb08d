package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// A text search reads the files: the index holds no text but the first
// user message of each conversation. It scans each line's JSON for the
// query as the line may spell it (as is, JSON-escaped, with Go's HTML-safe
// escapes, with \u escapes for non-ASCII), ASCII letters in any case, and
// keeps the conversations found, per query, for the next page; growth of
// the files is scanned on the next search with the same query.

// searchCache keeps the latest searches of one index.
type searchCache struct {
	mu      sync.Mutex // one search at a time: they share the disk
	ix      *index
	results []*searchResult // most recent last
}

type searchResult struct {
	query   string
	scanned []int64  // bytes of each segment scanned
	traces  []uint64 // bit set of trace indices found
}

const maxSearches = 8

// searchChunk is how much of a file a search reads at a time.
const searchChunk = 4 << 20

// searchText returns the set of conversations (by trace index in the
// current index) with a record holding text.
func (s *JSONL) searchText(ctx context.Context, text string) (func(int32) bool, *index, error) {
	c := &s.search
	c.mu.Lock()
	defer c.mu.Unlock()

	s.mu.RLock()
	ix := s.ix
	type span struct {
		src  *source
		size int64
	}
	spans := make([]span, len(ix.segs))
	for i, sg := range ix.segs {
		spans[i] = span{sg.src, sg.size}
	}
	s.mu.RUnlock()

	if c.ix != ix {
		c.ix, c.results = ix, nil
	}
	var res *searchResult
	for i, r := range c.results {
		if r.query == text {
			res = r
			c.results = append(slices.Delete(c.results, i, i+1), r)
			break
		}
	}
	if res == nil {
		res = &searchResult{query: text}
		c.results = append(c.results, res)
		if len(c.results) > maxSearches {
			c.results = c.results[1:]
		}
	}
	for len(res.scanned) < len(spans) {
		res.scanned = append(res.scanned, 0)
	}
	needles := needlesFor(text)
	var total int64
	for i, sp := range spans {
		total += sp.size - res.scanned[i]
	}
	buf := make([]byte, 0, min(searchChunk, total))
	lower := make([]byte, 0, min(searchChunk, total))
	for i, sp := range spans {
		for res.scanned[i] < sp.size {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			from := res.scanned[i]
			n := min(int64(searchChunk), sp.size-from)
			buf = buf[:n]
			if _, err := sp.src.r.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
				return nil, nil, fmt.Errorf("view: search %s: %w", sp.src.name, err)
			}
			if from+n < sp.size {
				// Whole lines only; a line longer than a chunk is read
				// whole next time round.
				if k := bytes.LastIndexByte(buf, '\n'); k >= 0 {
					buf = buf[:k+1]
				} else {
					buf = growToLine(sp.src, from, sp.size, buf)
				}
			}
			lower = asciiLower(lower[:0], buf)
			hits := findLines(lower, needles)
			s.mu.RLock()
			if s.ix == ix {
				for _, off := range hits {
					if ti, ok := ix.traceAt(i, from+off); ok {
						res.add(ti)
					}
				}
			}
			s.mu.RUnlock()
			res.scanned[i] = from + int64(len(buf))
		}
	}
	found := slices.Clone(res.traces)
	return func(ti int32) bool {
		w := int(ti) / 64
		return w < len(found) && found[w]&(1<<(uint(ti)%64)) != 0
	}, ix, nil
}

func (r *searchResult) add(ti int32) {
	w := int(ti) / 64
	for len(r.traces) <= w {
		r.traces = append(r.traces, 0)
	}
	r.traces[w] |= 1 << (uint(ti) % 64)
}

// growToLine reads on from `from` until the line that starts there ends.
func growToLine(src *source, from, size int64, buf []byte) []byte {
	for int64(len(buf)) < size-from {
		more := make([]byte, min(int64(searchChunk), size-from-int64(len(buf))))
		n, _ := src.r.ReadAt(more, from+int64(len(buf)))
		if n == 0 {
			break
		}
		if k := bytes.IndexByte(more[:n], '\n'); k >= 0 {
			return append(buf, more[:k+1]...)
		}
		buf = append(buf, more[:n]...)
	}
	return buf
}

// traceAt returns the trace of the record whose line starts at off in
// segment seg.
func (ix *index) traceAt(seg int, off int64) (int32, bool) {
	ents := ix.segs[seg].entries
	k, found := slices.BinarySearchFunc(ents, off, func(id int32, off int64) int {
		switch o := ix.entries.at(id).off; {
		case o < off:
			return -1
		case o > off:
			return 1
		}
		return 0
	})
	if !found {
		return 0, false
	}
	return ix.entries.at(ents[k]).trace, true
}

// findLines returns the offset of the start of every line of b holding
// one of needles.
func findLines(b []byte, needles [][]byte) []int64 {
	var starts []int64
	for _, nd := range needles {
		for i := 0; i < len(b); {
			k := bytes.Index(b[i:], nd)
			if k < 0 {
				break
			}
			at := i + k
			start := bytes.LastIndexByte(b[:at], '\n') + 1
			starts = append(starts, int64(start))
			end := bytes.IndexByte(b[at:], '\n')
			if end < 0 {
				break
			}
			i = at + end + 1
		}
	}
	slices.Sort(starts)
	return slices.Compact(starts)
}

// needlesFor returns the spellings of text a JSON line may hold, with
// ASCII letters in lower case.
func needlesFor(text string) [][]byte {
	var out [][]byte
	add := func(s string) {
		b := asciiLower(nil, []byte(s))
		for _, o := range out {
			if bytes.Equal(o, b) {
				return
			}
		}
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	add(text)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(text)
	add(unquoteBody(plain.Bytes()))
	html, _ := json.Marshal(text)
	add(unquoteBody(html))
	if !isASCII(text) {
		add(asciiEscaped(unquoteBody(plain.Bytes())))
	}
	return out
}

func unquoteBody(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 {
		b = b[1 : len(b)-1]
	}
	return string(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiEscaped writes every non-ASCII rune of s as \uXXXX (a surrogate
// pair beyond the BMP), as Python's json.dumps does by default.
func asciiEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func asciiLower(dst, b []byte) []byte {
	dst = slices.Grow(dst, len(b))
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
