package redact

import (
	"bytes"
	"slices"
	"strconv"
)

// Frames redacts the frames of a streamed body (server-sent events, JSON
// Lines), as [Redactor.Bytes] does each, and finds too the values a
// stream splits across frames: a model streams its answer a few
// characters per event, and "jane@example.com" may come as "jane",
// "@example" and ".com". The JSON strings at one path of the frames'
// JSON (choices.0.delta.content, delta.text) are read as one text, in
// order; a value found across several is replaced by its mark in the
// first and taken out of the others. Each frame stays what it was (valid
// JSON stays valid). It returns frames itself when it finds nothing,
// else a new slice; the frames given are never changed.
func (r *Redactor) Frames(frames [][]byte) [][]byte {
	out := frames
	for i, f := range frames {
		if g := r.Bytes(f); len(g) != len(f) || !bytes.Equal(g, f) {
			if &out[0] == &frames[0] {
				out = slices.Clone(frames)
			}
			out[i] = g
		}
	}
	if len(out) < 2 {
		return out
	}
	edits := r.acrossFrames(out)
	if len(edits) == 0 {
		return out
	}
	if &out[0] == &frames[0] {
		out = slices.Clone(frames)
	}
	for i := range out {
		if len(edits[i]) > 0 {
			s := scanner{in: out[i], edits: edits[i]}
			out[i] = s.apply()
		}
	}
	return out
}

// piece is a JSON string of a frame: where its text is in the frame, and
// that text with its escapes read.
type piece struct {
	frame      int
	start, end int // the string's raw text: frames[frame][start:end]
	text       []byte
	pos        []int // as scanner.pos: the raw offset of each byte of text, one more for the end
}

// acrossFrames returns, frame by frame, the edits that take out the
// values found across the strings of one path.
func (r *Redactor) acrossFrames(frames [][]byte) [][]edit {
	paths := map[string][]piece{}
	var order []string
	for i, f := range frames {
		for _, doc := range jsonLines(f) {
			walkStrings(f, doc[0], doc[1], func(path string, start, end int) {
				var s scanner
				s.in = f
				s.decode(start, end)
				if _, ok := paths[path]; !ok {
					order = append(order, path)
				}
				paths[path] = append(paths[path], piece{frame: i, start: start, end: end, text: s.dec, pos: s.pos})
			})
		}
	}
	var edits [][]edit
	for _, path := range order {
		ps := paths[path]
		if len(ps) < 2 {
			continue
		}
		var text []byte
		at := make([]int, len(ps)+1) // where each piece starts in text
		for k, p := range ps {
			at[k] = len(text)
			text = append(text, p.text...)
		}
		at[len(ps)] = len(text)
		key := []byte(path[bytes.LastIndexByte([]byte(path), '.')+1:])
		for _, m := range r.find(text, key, false, nil) {
			first := true
			// The pieces the match covers, from the one it starts in.
			k0, _ := slices.BinarySearch(at, m.Start+1)
			for k := max(k0-1, 0); k < len(ps) && at[k] < m.End; k++ {
				p := ps[k]
				a, z := max(m.Start, at[k]), min(m.End, at[k+1])
				if a >= z {
					continue
				}
				if first && k+1 < len(ps) && m.End <= at[k+1] {
					break // within one piece: the frame's own redaction saw it
				}
				mark := ""
				if first {
					mark = r.mark(m.Kind, text[m.Start:m.End])
					first = false
				}
				if edits == nil {
					edits = make([][]edit, len(frames))
				}
				edits[p.frame] = append(edits[p.frame], edit{start: p.start + p.pos[a-at[k]], end: p.start + p.pos[z-at[k]], mark: mark})
			}
		}
	}
	return edits
}

// jsonLines returns where the JSON documents of a frame are: each line
// that starts with '{' or '[', after "data:" in an event stream.
func jsonLines(f []byte) [][2]int {
	var docs [][2]int
	for i := 0; i < len(f); {
		end := bytes.IndexByte(f[i:], '\n')
		if end < 0 {
			end = len(f)
		} else {
			end += i
		}
		j := i
		for j < end && (f[j] == ' ' || f[j] == '\t') {
			j++
		}
		if bytes.HasPrefix(f[j:end], []byte("data:")) {
			j += len("data:")
			for j < end && f[j] == ' ' {
				j++
			}
		}
		if j < end && (f[j] == '{' || f[j] == '[') {
			docs = append(docs, [2]int{j, end})
		}
		i = end + 1
	}
	return docs
}

// walkStrings calls fn with the path ("choices.0.delta.content") and the
// raw text of each string value of the JSON in f[start:end]. It reads
// leniently: what is not JSON ends the walk.
func walkStrings(f []byte, start, end int, fn func(path string, start, end int)) {
	type level struct {
		array bool
		index int
		key   string
	}
	var stack []level
	expectKey := false
	path := func() string {
		var b []byte
		for k, l := range stack {
			if k > 0 {
				b = append(b, '.')
			}
			if l.array {
				b = strconv.AppendInt(b, int64(l.index), 10)
			} else {
				b = append(b, l.key...)
			}
		}
		return string(b)
	}
	for i := start; i < end; i++ {
		switch c := f[i]; c {
		case '{':
			stack = append(stack, level{})
			expectKey = true
		case '[':
			stack = append(stack, level{array: true})
			expectKey = false
		case '}', ']':
			if len(stack) == 0 {
				return
			}
			stack = stack[:len(stack)-1]
		case ',':
			if len(stack) == 0 {
				return
			}
			if l := &stack[len(stack)-1]; l.array {
				l.index++
			} else {
				expectKey = true
			}
		case '"':
			e, _ := stringEnd(f[:end], i+1)
			if e >= end {
				return
			}
			if expectKey && len(stack) > 0 {
				var s scanner
				s.in = f
				s.decode(i+1, e)
				stack[len(stack)-1].key = string(s.dec)
				expectKey = false
			} else {
				fn(path(), i+1, e)
			}
			i = e
		}
	}
}
