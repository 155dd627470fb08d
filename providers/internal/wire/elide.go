package wire

import (
	"bytes"
	"strconv"
)

// MinElided is the shortest base64 string ElideBase64 replaces.
const MinElided = 512

// ElideBase64 returns raw (valid JSON) with every long base64 string value
// (an image, audio, a file: inline data a record has no use for) replaced
// by a marker that keeps its media type and size:
// "data:image/png;base64,[elided 123456 bytes]" or "[base64 elided:
// 123456 bytes]". It reports whether anything was elided, and returns raw
// itself, not a copy, when nothing was.
func ElideBase64(raw []byte) ([]byte, bool) {
	var out []byte // nil until the first elision
	last := 0
	for i := 0; i < len(raw); {
		k := bytes.IndexByte(raw[i:], '"')
		if k < 0 {
			break
		}
		start := i + k
		end, escaped := stringEnd(raw, start)
		if end < 0 {
			break // not valid JSON: leave the rest alone
		}
		i = end + 1
		body := raw[start+1 : end]
		if len(body) < MinElided {
			continue
		}
		prefix, ok := base64Body(body, escaped)
		if !ok {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(raw)/4+256)
		}
		out = append(out, raw[last:start]...)
		out = append(out, '"')
		if prefix != "" {
			out = append(out, prefix...)
			out = append(out, "[elided "...)
		} else {
			out = append(out, "[base64 elided: "...)
		}
		out = strconv.AppendInt(out, int64(len(body)-len(prefix)), 10)
		out = append(out, " bytes]\""...)
		last = end + 1
	}
	if out == nil {
		return raw, false
	}
	return append(out, raw[last:]...), true
}

// stringEnd returns the index of the quote closing the string that opens
// at raw[i], or -1, and whether the string holds escapes.
func stringEnd(raw []byte, i int) (int, bool) {
	for j := i + 1; ; {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return -1, false
		}
		q := j + k
		slashes := 0
		for p := q - 1; p > i && raw[p] == '\\'; p-- {
			slashes++
		}
		if slashes%2 == 0 { // not itself escaped: the end
			return q, bytes.IndexByte(raw[i+1:q], '\\') >= 0
		}
		j = q + 1
	}
}

// base64Body reports whether a string's body is base64 data, optionally
// behind a data URL's "data:<type>;base64," (returned as prefix). JSON may
// escape '/' as "\/" and wrap lines with "\n".
func base64Body(b []byte, escaped bool) (prefix string, ok bool) {
	if len(b) > 5 && string(b[:5]) == "data:" {
		for k := 5; k < len(b) && k < 200; k++ {
			if b[k] == ',' {
				head := string(b[:k+1])
				if len(head) < 8 || head[len(head)-8:] != ";base64," {
					return "", false
				}
				prefix, b = head, b[k+1:]
				break
			}
		}
		if prefix == "" {
			return "", false
		}
	}
	for j := 0; j < len(b); j++ {
		c := b[j]
		if base64Char[c] {
			continue
		}
		if c == '\\' && escaped && j+1 < len(b) && (b[j+1] == '/' || b[j+1] == 'n' || b[j+1] == 'r') {
			j++
			continue
		}
		return "", false
	}
	return prefix, true
}

// base64Char marks the bytes of standard and URL-safe base64.
var base64Char = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_" {
		t[c] = true
	}
	return t
}()
