package anthropic

import (
	"encoding/json"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

// AddGuidance puts text into the system prompt of a Messages call
// (count_tokens takes none: it is not a conversation). The edit is one
// insertion; every other byte of the body is kept:
//
//   - no "system": "system": text is added, a string, after the last
//     field;
//   - a string: "\n\n" and text are appended inside it, before its closing
//     quote, so the caller's own escapes stay as they were (an empty
//     string just takes text);
//   - an array of blocks: a {"type": "text", "text": text} block is
//     appended, after any cache_control breakpoint the caller set, which
//     therefore still caches only the caller's own prefix.
//
// It returns false, leaving the body alone, for any other request or
// shape: a body cut by the capture limit, not a JSON object, no
// "messages" array, a system of another type.
func (Provider) AddGuidance(req *providers.Request, text string) ([]byte, bool) {
	if req == nil || req.BodyTruncated || req.Method != "POST" || req.URL == nil {
		return nil, false
	}
	if method, _, _ := endpoint(req.URL.Path); method != MethodCreate {
		return nil, false
	}
	body := req.Body
	// sjson rewrites the bytes around a top-level object (it drops the
	// whitespace before and after it): edit the object alone.
	start, end := trimSpace(body)
	obj := body[start:end]
	if len(obj) < 2 || obj[0] != '{' || !gjson.ValidBytes(obj) {
		return nil, false
	}
	edited := addSystem(obj, text)
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

// addSystem returns a copy of obj with text in its system prompt, or nil.
func addSystem(obj []byte, text string) []byte {
	root := wire.Parse(obj)
	if !root.Get("messages").IsArray() {
		return nil
	}
	sys := root.Get("system")
	switch {
	case !sys.Exists():
		out, err := sjson.SetRawBytes(obj, "system", marshalText("", text, ""))
		if err != nil {
			return nil
		}
		return out
	case sys.Type == gjson.String && sys.Index > 0:
		// Inside the string, before its closing quote.
		add := text
		if sys.Raw != `""` {
			add = "\n\n" + text
		}
		q := marshalText("", add, "")
		return splice(obj, sys.Index+len(sys.Raw)-1, q[1:len(q)-1])
	case sys.IsArray():
		out, err := sjson.SetRawBytes(obj, "system.-1", marshalText(`{"type":"text","text":`, text, `}`))
		if err != nil {
			return nil
		}
		return out
	}
	return nil // null, a number, an object: not ours to rewrite
}

// marshalText returns prefix, text as a JSON string, suffix.
func marshalText(prefix, text, suffix string) []byte {
	q, _ := json.Marshal(text) // a string always marshals
	out := make([]byte, 0, len(prefix)+len(q)+len(suffix))
	out = append(out, prefix...)
	out = append(out, q...)
	return append(out, suffix...)
}

// splice returns a copy of b with ins inserted at i.
func splice(b []byte, i int, ins []byte) []byte {
	out := make([]byte, 0, len(b)+len(ins))
	out = append(out, b[:i]...)
	out = append(out, ins...)
	return append(out, b[i:]...)
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
