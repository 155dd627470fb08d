package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file holds a small JSON scanner: validation without building values,
// and the pieces the record decoder needs. encoding/json spends most of its
// time in reflection and in building values we would throw away; records
// are read and written on hot paths (every call, every line of a report).

// maxNesting matches encoding/json's limit on nested containers.
const maxNesting = 10000

// plainASCII marks bytes that stand for themselves inside a JSON string.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// syntaxError describes invalid JSON found by the scanner.
type syntaxError struct {
	Offset int
	Msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

type scanner struct {
	b       []byte
	i       int
	badUTF8 bool // a string held bytes that are not UTF-8
	newline bool // whitespace held \n or \r
}

func (s *scanner) fail(msg string) error { return &syntaxError{Offset: s.i, Msg: msg} }

func (s *scanner) failEnd() error {
	return &syntaxError{Offset: len(s.b), Msg: "unexpected end of input"}
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t':
		case '\n', '\r':
			s.newline = true
		default:
			return
		}
		s.i++
	}
}

// ValidJSON reports whether b holds exactly one valid JSON value, with the
// same answer as encoding/json's Valid (fuzzed against it) at about three
// times the speed of gjson.ValidBytes on typical bodies: long strings are
// skipped eight bytes at a time. Providers validate every body with it
// before reading fields out of it.
func ValidJSON(b []byte) bool {
	valid, _, _ := scanJSON(b)
	return valid
}

// CutJSON reports whether b is the beginning of a JSON value that ends
// before the value does: every byte so far is valid, and the input ran
// out. A response body like that was cut, not garbled.
func CutJSON(b []byte) bool {
	s := scanner{b: b}
	s.ws()
	if s.i == len(b) {
		return false // nothing at all
	}
	err := s.skipValue()
	se, ok := err.(*syntaxError)
	return ok && se.Offset >= len(b)
}

// scanJSON reports whether b holds exactly one valid JSON value (with
// surrounding whitespace), and whether it needs repair to sit on one line
// of a strict reader: invalid UTF-8 inside strings, or newlines.
func scanJSON(b []byte) (valid, badUTF8, newline bool) {
	s := scanner{b: b}
	s.ws()
	if err := s.skipValue(); err != nil {
		return false, false, false
	}
	s.ws()
	return s.i == len(s.b), s.badUTF8, s.newline
}

// skipString moves past the string starting at s.i.
func (s *scanner) skipString() error {
	_, err := s.stringEnd()
	return err
}

// stringEnd moves past the string starting at s.i and reports whether it
// holds escapes.
func (s *scanner) stringEnd() (escaped bool, err error) {
	b := s.b
	i := s.i + 1
	// Keys, ids and enum values are short: their first bytes are looked at
	// one by one, which costs less than a call to IndexByte.
	for end := min(len(b), i+shortString); i < end; i++ {
		c := b[i]
		if c == '"' {
			s.i = i + 1
			return false, nil
		}
		if c >= utf8.RuneSelf || !plainASCII[c] {
			goto general
		}
	}
	// The common long string has no escape and no byte that needs a look:
	// find its closing quote with IndexByte (vectorized), then check the
	// bytes before it eight at a time. Anything else takes the loop below.
	if q := bytes.IndexByte(b[i:], '"'); q >= 0 && plainRun(b[i:i+q]) {
		s.i = i + q + 1
		return false, nil
	}
general:
	for i < len(b) {
		// Skip eight plain bytes at a time: most of a long string is text
		// with no quote, backslash, control or non-ASCII byte.
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			switch c {
			case '"':
				s.i = i + 1
				return escaped, nil
			case '\\':
				escaped = true
				if i+1 >= len(b) {
					return escaped, s.failEnd()
				}
				switch b[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
				case 'u':
					if i+6 > len(b) {
						return escaped, s.failEnd()
					}
					if _, ok := hex4(b[i+2 : i+6]); !ok {
						s.i = i
						return escaped, s.fail("invalid \\u escape")
					}
					i += 6
				default:
					s.i = i
					return escaped, s.fail("invalid escape")
				}
			default:
				s.i = i
				return escaped, s.fail("control character in string")
			}
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			s.badUTF8 = true
		}
		i += size
	}
	s.i = len(b)
	return escaped, s.failEnd()
}

// shortString is how many bytes of a string are looked at one by one
// before the scanners call IndexByte.
const shortString = 16

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainRun reports whether b holds no backslash, no control character and
// no non-ASCII byte: a string body that needs no decoding nor check.
//
// Eight bytes at a time (SWAR), a subtraction per kind of byte, whose
// result has a byte's high bit set where that byte is one of the kind:
// w^(ones*'\\') - ones where a byte is a backslash (its xor is zero), and
// w - ones*0x20 where a byte is below 0x20. The first also sets the high
// bit of every non-ASCII byte but 0xDC, and the second that of 0xDC (0xBC
// after it): so a non-ASCII byte needs no test of its own. A
// subtraction's borrow changes the next byte up only when the byte below
// it matched. TestPlainWord checks every pair of byte values.
func plainRun(b []byte) bool {
	for len(b) >= 32 { // four words a turn: a quarter of the loop's own cost
		w, x := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		y, z := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		const slashes = ones * '\\'
		if (((w^slashes)-ones)|(w-ones*0x20)|((x^slashes)-ones)|(x-ones*0x20)|
			((y^slashes)-ones)|(y-ones*0x20)|((z^slashes)-ones)|(z-ones*0x20))&highs != 0 {
			return false
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		slash := w ^ (ones * '\\')
		if ((slash-ones)|(w-ones*0x20))&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plainWord reports whether none of the eight bytes of w is a quote, a
// backslash, a control character or a non-ASCII byte, with plainRun's
// subtractions and one for the quote.
func plainWord(w uint64) bool {
	quote := w ^ (ones * '"')
	slash := w ^ (ones * '\\')
	return ((quote-ones)|(slash-ones)|(w-ones*0x20))&highs == 0
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipNumber moves past a number and reports whether it is an integer
// (no fraction, no exponent).
func (s *scanner) skipNumber() (integer bool, err error) {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false, s.failEnd()
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		s.i = i
		return false, s.fail("invalid number")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == start {
			s.i = i
			return false, s.fail("invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == start {
			s.i = i
			return false, s.fail("invalid number")
		}
	}
	s.i = i
	return integer, nil
}

func (s *scanner) literal(word string) error {
	if rest := s.b[s.i:]; len(rest) < len(word) && string(rest) == word[:len(rest)] {
		return s.failEnd() // "tr": cut, not wrong
	}
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

// skipValue moves past one value. It does not recurse, so nesting depth
// costs no stack.
func (s *scanner) skipValue() error {
	var stackBuf [32]byte
	stack := stackBuf[:0] // closers of the open containers
	for {
		// A value.
		s.ws()
		if s.i >= len(s.b) {
			return s.failEnd()
		}
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxNesting {
				return s.fail("nested too deep")
			}
			s.i++
			s.ws()
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			if s.i < len(s.b) && s.b[s.i] == closer {
				s.i++
				break // an empty container is a complete value
			}
			stack = append(stack, closer)
			if c == '{' {
				if err := s.objectKey(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if err := s.skipString(); err != nil {
				return err
			}
		case c == 't':
			if err := s.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
		case c == '-' || '0' <= c && c <= '9':
			if _, err := s.skipNumber(); err != nil {
				return err
			}
		default:
			return s.fail("unexpected character " + strconv.QuoteRune(rune(c)))
		}
		// After a value: close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return nil
			}
			s.ws()
			if s.i >= len(s.b) {
				return s.failEnd()
			}
			top := stack[len(stack)-1]
			c := s.b[s.i]
			if c == top {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				return s.fail("expected ',' or '" + string(top) + "'")
			}
			s.i++
			if top == '}' {
				if err := s.objectKey(); err != nil {
					return err
				}
			}
			break
		}
	}
}

// objectKey moves past `"key" :`.
func (s *scanner) objectKey() error {
	s.ws()
	if s.i >= len(s.b) {
		return s.failEnd()
	}
	if s.b[s.i] != '"' {
		return s.fail("expected a string key")
	}
	if err := s.skipString(); err != nil {
		return err
	}
	return s.colon()
}

func (s *scanner) colon() error {
	s.ws()
	if s.i >= len(s.b) {
		return s.failEnd()
	}
	if s.b[s.i] != ':' {
		return s.fail("expected ':'")
	}
	s.i++
	s.ws()
	return nil
}

// unquote decodes the JSON string b[start:end] (quotes included) exactly as
// encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD.
func unquote(b []byte, escaped, badUTF8 bool) string {
	body := b[1 : len(b)-1]
	if !escaped && !badUTF8 {
		return string(body)
	}
	out := appendUnquoted(make([]byte, 0, len(body)), body, badUTF8)
	return unsafe.String(unsafe.SliceData(out), len(out)) // out is never written again
}

// appendUnquoted appends body, the bytes between the quotes of a valid
// JSON string, decoded: escapes resolved, and when badUTF8 is set its
// invalid UTF-8 (and lone surrogates) replaced by U+FFFD, as encoding/json
// does. Runs of bytes that need nothing are copied whole, so a long text
// with a few escapes costs about a copy.
func appendUnquoted(out, body []byte, badUTF8 bool) []byte {
	for i := 0; i < len(body); {
		j := i
		if badUTF8 {
			for j < len(body) && body[j] != '\\' && body[j] < utf8.RuneSelf {
				j++
			}
		} else if k := bytes.IndexByte(body[i:], '\\'); k >= 0 {
			j = i + k
		} else {
			j = len(body)
		}
		out = append(out, body[i:j]...)
		if i = j; i >= len(body) {
			break
		}
		if c := body[i]; c != '\\' { // not ASCII, and the string has invalid UTF-8
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, body[i:i+size]...)
			}
			i += size
			continue
		}
		switch body[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(body[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if r2, ok := hex4(body[i+2 : i+6]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, body[i+1])
		}
		i += 2
	}
	return out
}
