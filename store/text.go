package store

import (
	"strings"
	"unicode"

	"github.com/llmhistory/llmhistory/record"
)

// The full-text index holds, for each record, the text it brought into
// its trace (the words of the messages its args add to its base's, read
// as the message model) and the words of its answer and its error
// message. A search finds the record where a text entered each
// conversation, not every later record that repeats it: that keeps the
// index linear in the conversation, and is the record a reader wants to
// land on.

// appendText appends the text p gives the index.
func appendText(dst []byte, p *prep) []byte {
	for _, el := range p.elems[p.count:] {
		m := record.MessageOf(el)
		dst = m.AppendSearchText(dst)
		if len(dst) > maxTextBytes {
			break
		}
	}
	dst = p.r.Output.AppendSearchText(dst)
	if s := p.r.ErrorMessage; s != "" {
		dst = append(dst, ' ')
		dst = append(dst, s...)
	}
	if len(dst) > maxTextBytes {
		dst = dst[:maxTextBytes]
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
