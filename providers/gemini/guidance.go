package gemini

import (
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

var _ providers.GuidanceEditor = Provider{}

// AddGuidance puts text in a generateContent or streamGenerateContent
// call's system instruction: a text part appended to it (under either of
// its spellings), or a system instruction added. The edit is one
// insertion; every other byte of the body is kept. Any other method or
// shape (no contents array, both spellings, parts that are not an array, a
// body cut by the capture) is left alone: false.
func (Provider) AddGuidance(req *providers.Request, text string) ([]byte, bool) {
	if req == nil || req.BodyTruncated || req.Method != "POST" || req.URL == nil {
		return nil, false
	}
	switch method, _ := endpoint(req.URL.Path); method {
	case MethodGenerateContent, MethodStreamGenerateContent:
		return wire.EditObject(req.Body, func(obj []byte) []byte { return addSystemPart(obj, text) })
	}
	return nil, false
}

// addSystemPart appends a text part to the systemInstruction (or its
// snake_case spelling), or adds one.
func addSystemPart(obj []byte, text string) []byte {
	root := wire.Parse(obj)
	if !root.Get("contents").IsArray() {
		return nil
	}
	key := "systemInstruction"
	si := root.Get(key)
	if snake := root.Get("system_instruction"); snake.Exists() {
		if si.Exists() {
			return nil // both: which one the server reads is not ours to guess
		}
		key, si = "system_instruction", snake
	}
	part := wire.JSONText(`{"text":`, text, `}`)
	var out []byte
	var err error
	switch {
	case !si.Exists():
		out, err = sjson.SetRawBytes(obj, key, append(append([]byte(`{"parts":[`), part...), ']', '}'))
	case si.IsObject() && si.Get("parts").IsArray():
		out, err = sjson.SetRawBytes(obj, key+".parts.-1", part)
	case si.IsObject() && !si.Get("parts").Exists():
		out, err = sjson.SetRawBytes(obj, key+".parts", append(append([]byte{'['}, part...), ']'))
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return out
}
