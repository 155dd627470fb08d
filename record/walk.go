package record

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
	return append(dst, unquote(raw, escaped, s.badUTF8)...), true
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
