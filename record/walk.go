package record

import (
	"bytes"
	"unicode/utf8"
)

// A walk over a JSON document that validates as it goes: the providers read
// the members of a body and learn whether it is valid JSON in one pass,
// instead of validating it first and walking it again.

// EachMember calls fn with each member of the JSON object b holds
// (whitespace around it allowed), in order: the key as written between its
// quotes (escapes decoded only when it has some) and the value's raw
// bytes, which are views into b. It stops when fn returns false. It
// reports whether b is one valid JSON object, having walked all of it;
// false when b is not, or when fn stopped the walk (nothing is then known
// of the rest). Values are validated before fn sees them.
func EachMember(b []byte, fn func(key, value []byte) bool) bool {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(b) && b[s.i] == '}' {
		s.i++
		s.ws()
		return s.i == len(b)
	}
	for {
		s.ws()
		if s.i >= len(b) || b[s.i] != '"' {
			return false
		}
		k0 := s.i
		s.badUTF8 = false
		escaped, err := s.stringEnd()
		if err != nil {
			return false
		}
		key := b[k0+1 : s.i-1]
		if escaped || s.badUTF8 {
			key = []byte(unquote(b[k0:s.i], escaped, s.badUTF8))
		}
		if s.colon() != nil {
			return false
		}
		v0 := s.i
		if s.skipValue() != nil {
			return false
		}
		if !fn(key, b[v0:s.i]) {
			return false
		}
		switch s.next('}') {
		case 0:
			return false
		case '}':
			s.ws()
			return s.i == len(b)
		}
	}
}

// EachElement calls fn with the raw bytes of each element of the JSON
// array b holds, in order, as [EachMember] does for an object's members.
func EachElement(b []byte, fn func(value []byte) bool) bool {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '[' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(b) && b[s.i] == ']' {
		s.i++
		s.ws()
		return s.i == len(b)
	}
	for {
		s.ws()
		v0 := s.i
		if s.skipValue() != nil {
			return false
		}
		if !fn(b[v0:s.i]) {
			return false
		}
		switch s.next(']') {
		case 0:
			return false
		case ']':
			s.ws()
			return s.i == len(b)
		}
	}
}

// next moves past the ',' or the closer that follows a member or an
// element, and returns which it was; 0 when neither follows.
func (s *scanner) next(closer byte) byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	switch c := s.b[s.i]; c {
	case ',', closer:
		s.i++
		return c
	}
	return 0
}

// AppendString appends the JSON string raw (quotes included) decoded as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD), and reports whether raw is a valid JSON string. A plain string
// is appended without an intermediate copy.
func AppendString(dst, raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return dst, false
	}
	s := scanner{b: raw}
	escaped, err := s.stringEnd()
	if err != nil || s.i != len(raw) {
		return dst, false
	}
	if !escaped && !s.badUTF8 {
		return append(dst, raw[1:len(raw)-1]...), true
	}
	return appendUnquoted(dst, raw[1:len(raw)-1], s.badUTF8), true
}

// AppendValidString is [AppendString] for a string already known to be
// valid JSON (handed out by a walk that checked it): a string with no
// escape is appended as it is, without a second look at its bytes. Invalid
// UTF-8 in it stays as it is (a record's encoder repairs it where it is
// written).
func AppendValidString(dst, raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return dst
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return append(dst, body...)
	}
	dst, _ = AppendString(dst, raw)
	return dst
}

// String returns the JSON string raw decoded, and whether raw is one.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	s := scanner{b: raw}
	escaped, err := s.stringEnd()
	if err != nil || s.i != len(raw) {
		return "", false
	}
	return unquote(raw, escaped, s.badUTF8), true
}

// EachValidMember is [EachMember] for a value already known to be valid
// JSON (a value [EachMember] handed out): it does not check again, and
// skips strings with IndexByte alone, so walking a nested value of a
// validated body costs a fraction of its first walk. On bytes that are not
// valid JSON it returns what it makes of them, never panics, and may stop
// early.
func EachValidMember(b []byte, fn func(key, value []byte) bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	for i++; ; {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return // '}' or not valid
		}
		end := validStringEnd(b, i)
		key := b[i+1 : max(end-1, i+1)]
		// Decoded as EachMember decodes it: escapes, and invalid UTF-8
		// repaired (keys are short, so the check costs little).
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			if k, ok := String(b[i:end]); ok {
				key = []byte(k)
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipSpace(b, i+1)
		v := skipValid(b, i)
		if !fn(key, b[i:v]) {
			return
		}
		i = skipSpace(b, v)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// EachValidElement is [EachValidMember] for the elements of an array.
func EachValidElement(b []byte, fn func(value []byte) bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return
	}
	for i++; ; {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] == ']' {
			return
		}
		v := skipValid(b, i)
		if v <= i || !fn(b[i:v]) {
			return
		}
		i = skipSpace(b, v)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// validStringEnd returns the index just past the string that opens at
// b[i]: its first quote not escaped (preceded by an even run of
// backslashes), found with IndexByte.
func validStringEnd(b []byte, i int) int {
	// Short strings end before an IndexByte call would pay off.
	for j := i + 1; j < len(b) && j <= i+shortString; j++ {
		if c := b[j]; c == '"' {
			return j + 1
		} else if c == '\\' {
			break
		}
	}
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return len(b)
		}
		q += j
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValid returns the index just past the valid JSON value that starts
// at b[i].
func skipValid(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = validStringEnd(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
		default:
			if depth == 0 { // a number or a literal: to the next delimiter
				for i < len(b) && !delimiter(b[i]) {
					i++
				}
				return i
			}
		}
		i++
	}
	return i
}

func delimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':'
}
