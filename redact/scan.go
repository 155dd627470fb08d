package redact

import (
	"bytes"
	"slices"
	"sync"
	"unicode/utf8"
)

// minFinding is the length of the shortest value found ("a@b.co"):
// shorter text is not looked at.
const minFinding = 6

// maxKey bounds the JSON key kept as the context of the value after it.
const maxKey = 64

// The scanner reads bytes that may be JSON without parsing them: it
// tells the text inside double quotes (a JSON string: its escapes are
// read) from the text outside, looks for values in each, and replaces
// each value found by a mark. A mark is plain ASCII without quotes or
// backslashes and replaces whole escapes, so a JSON string stays a JSON
// string; a value outside strings that is a JSON number (a card number
// written as a number) becomes a JSON string holding its mark. Bytes that
// are not JSON (plain text, a server-sent event stream) are read the same
// way, and what is found is replaced as well.
type scanner struct {
	r      *Redactor
	in     []byte
	json   bool // in starts as JSON does, with '{' or '['
	line   int  // where the line of in[lineAt] starts
	lineAt int
	edits  []edit
	key    []byte  // the last JSON key read, decoded: the context of the values after it
	dec    []byte  // a string's text, escapes read
	pos    []int   // pos[i]: the offset in the string's raw bytes of dec[i]'s escape or byte; one more for the end
	found  []Match // scratch for find
}

// edit replaces in[start:end] with mark, quoted when it stands for a
// JSON number.
type edit struct {
	start, end int
	mark       string
	quote      bool
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

func (s *scanner) reset(r *Redactor, b []byte) {
	s.r, s.in = r, b
	s.line, s.lineAt = 0, 0
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	s.json = i < len(b) && (b[i] == '{' || b[i] == '[')
	s.edits, s.key = s.edits[:0], s.key[:0]
}

func (s *scanner) scan() {
	b := s.in
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			s.outside(i, len(b))
			break
		}
		q += i
		s.outside(i, q)
		end, escaped := stringEnd(b, q+1)
		isKey := followedByColon(b, end+1)
		if isKey {
			s.inside(q+1, end, escaped, nil)
			s.setKey(q+1, end, escaped)
		} else {
			s.inside(q+1, end, escaped, s.key)
		}
		i = end + 1
	}
}

// release lets go of the caller's bytes and of scratch grown large, so a
// pooled scanner keeps neither.
func (s *scanner) release() {
	s.in, s.r = nil, nil
	if cap(s.dec) > 64<<10 {
		s.dec, s.pos = nil, nil
	}
	if cap(s.edits) > 1024 {
		s.edits = nil
	}
}

// stringEnd returns the offset of the quote that ends the string whose
// text starts at b[i], or len(b) when none does, and whether the text
// holds an escape.
func stringEnd(b []byte, i int) (end int, escaped bool) {
	for {
		j := bytes.IndexAny(b[i:], "\"\\")
		if j < 0 {
			return len(b), escaped
		}
		i += j
		if b[i] == '"' {
			return i, escaped
		}
		escaped = true
		i += 2 // the backslash and the byte it escapes
		if i >= len(b) {
			return len(b), true
		}
	}
}

func followedByColon(b []byte, i int) bool {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// setKey keeps the string b[start:end] as the key of the values that
// follow.
func (s *scanner) setKey(start, end int, escaped bool) {
	s.key = s.key[:0]
	if end-start > maxKey {
		return
	}
	if !escaped {
		s.key = append(s.key, s.in[start:end]...)
		return
	}
	s.decode(start, end)
	s.key = append(s.key, s.dec...)
}

// outside looks for values in in[start:end], text outside JSON strings.
func (s *scanner) outside(start, end int) {
	if end-start >= minFinding {
		s.plain(start, end, s.key, true)
	}
}

// plain looks for values in in[start:end], whose raw bytes are its text:
// outside JSON strings, or a JSON string without escapes.
func (s *scanner) plain(start, end int, key []byte, outside bool) {
	s.found = s.r.find(s.in[start:end], key, !outside, s.found[:0])
	for _, m := range s.found {
		a, z := start+m.Start, start+m.End
		if outside && nearMark(s.in, Match{m.Kind, a, z}) {
			// Glued to a mark in the string beside it, which the finder
			// did not see: "+1000000000:\"[CARD]\"" was one token,
			// "+1000000000:4111111111111111", whose card number, a JSON
			// number, became a string. A second pass leaves it so.
			continue
		}
		e := edit{start: a, end: z, mark: s.r.mark(m.Kind, s.in[a:z])}
		if outside {
			e.start, e.quote = s.number(a, z)
		}
		s.edits = append(s.edits, e)
	}
}

// number reports whether in[start:end] is a JSON number, digits alone
// where a value goes in JSON (a JSON document, or a line of JSON Lines or
// of a server-sent event's data), and where it starts: before its minus
// sign, if it has one, so that the sign goes with it.
func (s *scanner) number(start, end int) (int, bool) {
	for _, c := range s.in[start:end] {
		if c < '0' || c > '9' {
			return start, false
		}
	}
	if !s.json && !s.jsonLine(start) && !s.whole(start, end) {
		return start, false
	}
	from := start
	if from > 0 && s.in[from-1] == '-' {
		from--
	}
	i := from - 1
	for i >= 0 && isSpace(s.in[i]) {
		i--
	}
	if i >= 0 && s.in[i] != ':' && s.in[i] != '[' && s.in[i] != ',' {
		return start, false
	}
	j := end
	for j < len(s.in) && isSpace(s.in[j]) {
		j++
	}
	if j == len(s.in) || s.in[j] == ',' || s.in[j] == ']' || s.in[j] == '}' {
		return from, true
	}
	return start, false
}

// whole reports whether in[start:end], with the minus sign before it,
// is all of in but spaces: a JSON document that is one number.
func (s *scanner) whole(start, end int) bool {
	if start > 0 && s.in[start-1] == '-' {
		start--
	}
	return len(bytes.TrimSpace(s.in[:start])) == 0 && len(bytes.TrimSpace(s.in[end:])) == 0
}

// jsonLine reports whether the line in[i] is on is JSON: it starts with
// '{' or '[', after "data:" in an event stream. The start of the line is
// found by reading forward from the last one found, as the edits come in
// order: each byte is read once.
func (s *scanner) jsonLine(i int) bool {
	if i < s.lineAt {
		s.lineAt, s.line = 0, 0
	}
	for ; s.lineAt < i; s.lineAt++ {
		if s.in[s.lineAt] == '\n' {
			s.line = s.lineAt + 1
		}
	}
	line := s.in[s.line:i]
	line = bytes.TrimLeft(line, " \t")
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		line = bytes.TrimLeft(rest, " ")
	}
	return len(line) > 0 && (line[0] == '{' || line[0] == '[')
}

// inside looks for values in the JSON string whose raw text is
// in[start:end].
func (s *scanner) inside(start, end int, escaped bool, key []byte) {
	if end-start < minFinding {
		return
	}
	if !escaped {
		s.plain(start, end, key, false)
		return
	}
	s.decode(start, end)
	if len(s.dec) < minFinding {
		return
	}
	s.found = s.r.find(s.dec, key, true, s.found[:0])
	for _, m := range s.found {
		a, z := start+s.pos[m.Start], start+s.pos[m.End]
		s.edits = append(s.edits, edit{start: a, end: z, mark: s.r.mark(m.Kind, s.dec[m.Start:m.End])})
	}
}

// decode reads the escapes of the JSON string text in[start:end] into
// s.dec, and where each decoded byte came from into s.pos. An escape that
// is not one is kept as it is.
func (s *scanner) decode(start, end int) {
	b := s.in[start:end]
	s.dec, s.pos = s.dec[:0], s.pos[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			s.dec, s.pos = append(s.dec, c), append(s.pos, i)
			i++
			continue
		}
		n, r := 2, rune(-1)
		switch b[i+1] {
		case '"', '\\', '/':
			r = rune(b[i+1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			if h, ok := hex4(b[i+2:]); ok {
				n, r = 6, h
				if utf16IsHigh(h) {
					if len(b) >= i+12 && b[i+6] == '\\' && b[i+7] == 'u' {
						if l, ok := hex4(b[i+8:]); ok && utf16IsLow(l) {
							n, r = 12, (h-0xD800)<<10+(l-0xDC00)+0x10000
						}
					}
				}
				if r >= 0xD800 && r < 0xE000 {
					r = utf8.RuneError // a lone surrogate, as encoding/json reads it
				}
			}
		}
		if r < 0 {
			s.dec, s.pos = append(s.dec, c), append(s.pos, i) // not an escape
			i++
			continue
		}
		k := len(s.dec)
		s.dec = utf8.AppendRune(s.dec, r)
		for range len(s.dec) - k {
			s.pos = append(s.pos, i)
		}
		i += n
	}
	s.pos = append(s.pos, len(b))
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func utf16IsHigh(r rune) bool { return r >= 0xD800 && r < 0xDC00 }
func utf16IsLow(r rune) bool  { return r >= 0xDC00 && r < 0xE000 }

// apply returns the input with the edits made.
func (s *scanner) apply() []byte {
	slices.SortFunc(s.edits, func(x, y edit) int { return x.start - y.start })
	n := len(s.in)
	for _, e := range s.edits {
		n += len(e.mark) + 2 - (e.end - e.start)
	}
	out := make([]byte, 0, max(n, 0))
	last := 0
	for _, e := range s.edits {
		if e.start < last {
			continue // cannot happen: the edits are apart; never write a byte twice
		}
		out = append(out, s.in[last:e.start]...)
		if e.quote {
			out = append(out, '"')
		}
		out = append(out, e.mark...)
		if e.quote {
			out = append(out, '"')
		}
		last = e.end
	}
	return append(out, s.in[last:]...)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
