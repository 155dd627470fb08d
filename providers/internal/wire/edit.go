package wire

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/record"
)

// What the providers share to edit a request body (their AddGuidance, see
// [GuidanceEditor]): an edit is one insertion into the JSON object the
// body holds, every other byte kept, so that what the caller's SDK wrote
// is what is sent.

// EditObject applies edit to the JSON object body holds and returns the
// edited body, and true. sjson rewrites the bytes around a top-level
// object (it drops whitespace before and after it), so edit sees the
// object alone, and the whitespace around it is put back. It returns
// false when body is not one JSON object, or edit returns nil. body is
// never modified.
func EditObject(body []byte, edit func(obj []byte) []byte) ([]byte, bool) {
	start, end := trimSpace(body)
	obj := body[start:end]
	if len(obj) < 2 || obj[0] != '{' || !record.ValidJSON(obj) {
		return nil, false
	}
	edited := edit(obj)
	if edited == nil {
		return nil, false
	}
	if start == 0 && end == len(body) {
		return edited, true // a fresh slice already: the usual case
	}
	out := make([]byte, 0, start+len(edited)+len(body)-end)
	out = append(out, body[:start]...)
	out = append(out, edited...)
	return append(out, body[end:]...), true
}

// JSONText returns prefix, text as a JSON string, suffix.
func JSONText(prefix, text, suffix string) []byte {
	q, _ := json.Marshal(text) // a string always marshals
	out := make([]byte, 0, len(prefix)+len(q)+len(suffix))
	out = append(out, prefix...)
	out = append(out, q...)
	return append(out, suffix...)
}

// Splice returns a copy of b with ins inserted at i.
func Splice(b []byte, i int, ins []byte) []byte {
	out := make([]byte, 0, len(b)+len(ins))
	out = append(out, b[:i]...)
	out = append(out, ins...)
	return append(out, b[i:]...)
}

// AppendToString returns a copy of obj with sep and text added at the end
// of the string value v (a result of parsing obj), inside its closing
// quote, so that the caller's own bytes, escapes and all, stay as they
// were; an empty string takes text without sep. It returns nil when v is
// not a string of obj.
func AppendToString(obj []byte, v gjson.Result, sep, text string) []byte {
	if v.Type != gjson.String || v.Index <= 0 || v.Index+len(v.Raw) > len(obj) {
		return nil
	}
	if v.Raw != `""` {
		text = sep + text
	}
	q := JSONText("", text, "")
	return Splice(obj, v.Index+len(v.Raw)-1, q[1:len(q)-1])
}

// trimSpace returns the bounds of b without JSON whitespace around it.
func trimSpace(b []byte) (start, end int) {
	end = len(b)
	for start < end && isSpace(b[start]) {
		start++
	}
	for end > start && isSpace(b[end-1]) {
		end--
	}
	return start, end
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
