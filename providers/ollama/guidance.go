package ollama

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

// AddGuidance puts text where Ollama takes system instructions, as one
// insertion that keeps every other byte of the body:
//
//   - chat: a {"role": "system", "content": text} message first in
//     messages;
//   - generate: appended to "system" after "\n\n" (an empty one, which
//     Ollama's Go client always sends, just takes text), or a "system"
//     field added after the last one.
//
// It returns false for an embed, a body cut by the capture limit, or one
// of another shape.
func (Provider) AddGuidance(req *providers.Request, text string) ([]byte, bool) {
	if req == nil || req.BodyTruncated || req.Method != "POST" || req.URL == nil {
		return nil, false
	}
	switch endpoint(req.URL.Path) {
	case MethodChat:
		return wire.EditObject(req.Body, func(obj []byte) []byte { return addSystemMessage(obj, text) })
	case MethodGenerate:
		return wire.EditObject(req.Body, func(obj []byte) []byte { return addSystem(obj, text) })
	}
	return nil, false
}

func addSystemMessage(obj []byte, text string) []byte {
	msgs := wire.Parse(obj).Get("messages")
	if !msgs.IsArray() || msgs.Index <= 0 || msgs.Index >= len(obj) || obj[msgs.Index] != '[' {
		return nil
	}
	turn := wire.JSONText(`{"role":"system","content":`, text, `}`)
	if msgs.Get("#").Int() > 0 {
		turn = append(turn, ',')
	}
	return wire.Splice(obj, msgs.Index+1, turn)
}

func addSystem(obj []byte, text string) []byte {
	sys := wire.Parse(obj).Get("system")
	switch {
	case !sys.Exists():
		out, err := sjson.SetRawBytes(obj, "system", wire.JSONText("", text, ""))
		if err != nil {
			return nil
		}
		return out
	case sys.Type == gjson.String:
		return wire.AppendToString(obj, sys, "\n\n", text)
	}
	return nil
}
