package record

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// maxInspectRaw caps how much of an invalid raw field is kept as a string.
const maxInspectRaw = 4 << 10

// appendRawContainer appends raw as a JSON container opened by open ('[' or
// '{'), repairing it at this field only; see Record.AppendJSON.
func appendRawContainer(dst, raw []byte, open byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if open == '[' {
			return append(dst, "[]"...)
		}
		return append(dst, "{}"...)
	}
	valid, badUTF8, newline := scanJSON(raw)
	if !valid {
		s := raw
		cut := false
		if len(s) > maxInspectRaw {
			s, cut = s[:maxInspectRaw], true
		}
		str := string(s)
		if cut {
			str += "…[truncated " + strconv.Itoa(len(raw)-maxInspectRaw) + " bytes]"
		}
		if open == '[' {
			dst = append(dst, '[')
			dst = appendString(dst, "<invalid JSON: "+str+">")
			return append(dst, ']')
		}
		dst = append(dst, `{"inspect":`...)
		dst = appendString(dst, "<invalid JSON: "+str+">")
		return append(dst, '}')
	}
	wrap := raw[0] != open
	if wrap {
		if open == '[' {
			dst = append(dst, '[')
		} else {
			dst = append(dst, `{"value":`...)
		}
	}
	dst = appendCompactJSON(dst, raw, badUTF8, newline)
	if wrap {
		if open == '[' {
			dst = append(dst, ']')
		} else {
			dst = append(dst, '}')
		}
	}
	return dst
}

// appendCompactJSON appends valid JSON raw with newlines removed and
// invalid UTF-8 replaced, so it fits on one line of any strict reader.
func appendCompactJSON(dst, raw []byte, badUTF8, newline bool) []byte {
	if badUTF8 {
		// Decoding replaces invalid UTF-8 with U+FFFD; numbers keep their text.
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err == nil {
			return appendSafe(dst, v)
		}
	}
	if !newline {
		return append(dst, raw...)
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		// Unreachable for valid input; keep the line a line regardless.
		return appendString(dst, string(raw))
	}
	return buf.Bytes()
}

// isCompactValid reports whether raw is valid JSON that appendCompactJSON
// would leave unchanged.
func isCompactValid(raw []byte) bool {
	valid, badUTF8, newline := scanJSON(raw)
	return valid && !badUTF8 && !newline
}

const hexDigits = "0123456789abcdef"

// stringWord returns the eight bytes of s at i, little-endian, as
// binary.LittleEndian.Uint64 reads a slice's (the compiler makes it one
// load).
func stringWord(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// control characters and the line separators U+2028 and U+2029 are escaped
// so the result is safe on one line and inside JavaScript.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look: prose is mostly
		// plain ASCII.
		for i+8 <= len(s) && plainWord(stringWord(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendFloat formats a finite float the way encoding/json does.
func appendFloat(dst []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
