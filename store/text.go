package store

import (
	"strings"
	"unicode"

	"github.com/llmhistory/llmhistory/record"
)

// The full-text index holds, for each record, the text it brought into
// its trace (the string values of the messages its args add to its
// base's) and its output and error message. A search finds the record
// where a text entered each conversation, not every later record that
// repeats it: that keeps the index linear in the conversation, and is
// the record a reader wants to land on.

// appendText appends the text p gives the index.
func appendText(dst []byte, p *prep) []byte {
	for _, el := range p.elems[p.count:] {
		dst = appendStrings(dst, el, "")
		if len(dst) > maxTextBytes {
			break
		}
	}
	for _, s := range []string{p.r.Output, p.r.ErrorMessage} {
		if s != "" {
			dst = append(dst, ' ')
			dst = append(dst, s...)
		}
	}
	if len(dst) > maxTextBytes {
		dst = dst[:maxTextBytes]
	}
	return dst
}

// appendStrings appends the string values of the JSON value v, space
// separated, leaving out those that name a shape rather than say
// something ("role", "type") and inline data (data: URLs).
func appendStrings(dst, v []byte, key string) []byte {
	if len(v) == 0 {
		return dst
	}
	switch v[0] {
	case '"':
		if key == "role" || key == "type" {
			return dst
		}
		n := len(dst)
		if len(dst) > 0 {
			dst = append(dst, ' ')
		}
		dst = record.AppendValidString(dst, v)
		if strings.HasPrefix(string(dst[min(n+1, len(dst)):]), "data:") {
			dst = dst[:n]
		}
	case '{':
		record.EachValidMember(v, func(k, val []byte) bool {
			dst = appendStrings(dst, val, string(k))
			return len(dst) <= maxTextBytes
		})
	case '[':
		record.EachValidElement(v, func(val []byte) bool {
			dst = appendStrings(dst, val, key)
			return len(dst) <= maxTextBytes
		})
	}
	return dst
}

// words splits a search text as the index does: into runs of letters
// and digits.
func words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// ftsQuery is text as an FTS5 query that every word must match.
func ftsQuery(text string) string {
	ws := words(text)
	for i, w := range ws {
		ws[i] = `"` + w + `"`
	}
	return strings.Join(ws, " ")
}
