package openai

import (
	"bytes"
	"slices"

	"github.com/llmhistory/llmhistory/record"
)

// A chat stream repeats one envelope event after event: the same id,
// model, fingerprint and choice around a few new characters of text (and,
// from OpenAI, an "obfuscation" string of random padding). Walking every
// event member by member costs most of what the recorder adds to a
// stream, so an event that is the envelope of the one before, byte for
// byte but for those strings, is read by comparing it with that one.

// chunkTemplate is a plain text chunk seen in full: its bytes, and where
// its holes are (its content, and its obfuscation when it has one).
type chunkTemplate struct {
	data  []byte    // the event, a view into the body
	holes [2][2]int // [start, end) of each hole's string value, quotes included, in order
	n     int       // holes used
}

// match reports whether data is t's event with other strings in its
// holes, every other byte the same; then data's content is appended to
// c's text, which is all that such an event changes. An event that does
// not match is left to the full walk.
func (t *chunkTemplate) match(c *choiceSet, data []byte, content int) bool {
	if t.data == nil {
		return false
	}
	var holes [2][]byte
	pos, at := 0, 0 // in t.data, in data
	for i := range t.n {
		h := t.holes[i]
		fixed := t.data[pos:h[0]]
		if len(data)-at < len(fixed) || !bytes.Equal(data[at:at+len(fixed)], fixed) {
			return false
		}
		at += len(fixed)
		end := stringEnd(data, at)
		if end < 0 || !record.ValidJSON(data[at:end]) {
			return false
		}
		holes[i] = data[at:end]
		at, pos = end, h[1]
	}
	if !bytes.Equal(data[at:], t.data[pos:]) {
		return false
	}
	c.text = appendJSONText(c.text, holes[content])
	return true
}

// stringEnd returns the index just past the JSON string that opens at
// b[i] (its first quote not escaped), or -1 when there is none.
func stringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
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

// learn makes t the template of data, an event just read in full whose
// fields are f, when it is a plain text chunk: one choice, index 0, a
// delta of text (and perhaps its role), and nothing else that a reader
// of the stream takes from an event (no finish reason, usage, tool call,
// refusal, reasoning or error). Its id, model, tier and fingerprint were
// read with it: an event that repeats them adds nothing. Members the
// parser does not read may be there; whatever they hold, an event matches
// only if it holds the same. It returns the index of the content hole,
// or -1 when data is not such a chunk (t is then emptied).
func (t *chunkTemplate) learn(f *eventFields, data []byte) int {
	t.data = nil
	if f.typ != nil || f.errObj != nil || f.delta != nil || f.response != nil || f.item != nil ||
		f.outIdx != nil || len(f.choices) == 0 || f.usage != nil && string(f.usage) != "null" {
		return -1
	}
	var content []byte
	choices, plain := 0, true
	record.EachValidElement(f.choices, func(ch []byte) bool {
		choices++
		record.EachValidMember(ch, func(k, v []byte) bool {
			switch string(k) {
			case "index":
				plain = plain && string(v) == "0"
			case "logprobs", "finish_reason":
				plain = plain && string(v) == "null"
			case "delta":
				record.EachValidMember(v, func(k, v []byte) bool {
					switch string(k) {
					case "role":
					case "content":
						content = v
					case "refusal":
						plain = plain && string(v) == "null"
					default:
						plain = false
					}
					return plain
				})
			default:
				plain = false
			}
			return plain
		})
		return plain
	})
	if !plain || choices != 1 || len(content) == 0 || content[0] != '"' {
		return -1
	}
	off := func(v []byte) [2]int { o := cap(data) - cap(v); return [2]int{o, o + len(v)} }
	t.holes[0], t.n = off(content), 1
	if len(f.obfuscation) > 0 && f.obfuscation[0] == '"' {
		t.holes[1], t.n = off(f.obfuscation), 2
	}
	holes := t.holes[:t.n]
	for _, h := range holes {
		if h[0] < 0 || h[1] > len(data) {
			return -1 // not a view into data after all
		}
	}
	slices.SortFunc(holes, func(a, b [2]int) int { return a[0] - b[0] })
	t.data = data
	return slices.Index(holes, off(content))
}
