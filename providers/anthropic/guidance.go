package anthropic

import (
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
	return wire.EditObject(req.Body, func(obj []byte) []byte { return addSystem(obj, text) })
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
		out, err := sjson.SetRawBytes(obj, "system", wire.JSONText("", text, ""))
		if err != nil {
			return nil
		}
		return out
	case sys.Type == gjson.String:
		return wire.AppendToString(obj, sys, "\n\n", text)
	case sys.IsArray():
		out, err := sjson.SetRawBytes(obj, "system.-1", wire.JSONText(`{"type":"text","text":`, text, `}`))
		if err != nil {
			return nil
		}
		return out
	}
	return nil // null, a number, an object: not ours to rewrite
}
