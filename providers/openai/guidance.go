package openai

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

var _ providers.GuidanceEditor = Provider{}

// AddGuidance puts text where the API takes system guidance: a chat
// completion gets a system message first in its messages, a Responses API
// call its instructions (set, or appended after a blank line). The edit is
// one insertion; every other byte of the body is kept. Any other endpoint
// or shape (no messages array, instructions that are not a string, a body
// cut by the capture) is left alone: false.
func (Provider) AddGuidance(req *providers.Request, text string) ([]byte, bool) {
	if req == nil || req.BodyTruncated || req.Method != "POST" || req.URL == nil {
		return nil, false
	}
	switch method, _ := endpoint(req.URL.Path); method {
	case MethodChat:
		return wire.EditObject(req.Body, func(obj []byte) []byte { return insertSystemMessage(obj, text) })
	case MethodResponses:
		return wire.EditObject(req.Body, func(obj []byte) []byte { return addInstructions(obj, text) })
	}
	return nil, false
}

// insertSystemMessage puts a system message first in "messages". sjson
// can only append to an array, and the guidance must come before the
// conversation: splice it in after the bracket.
func insertSystemMessage(obj []byte, text string) []byte {
	msgs := wire.Parse(obj).Get("messages")
	if !msgs.IsArray() || msgs.Index <= 0 {
		return nil
	}
	msg := wire.JSONText(`{"role":"system","content":`, text, `}`)
	at := msgs.Index + 1 // just after '['
	if first := bytes.TrimLeft(obj[at:msgs.Index+len(msgs.Raw)], " \t\r\n"); first[0] != ']' {
		msg = append(msg, ',')
	}
	return wire.Splice(obj, at, msg)
}

// addInstructions sets a Responses API call's instructions, or appends the
// guidance to them after a blank line.
func addInstructions(obj []byte, text string) []byte {
	in := wire.Parse(obj).Get("instructions")
	switch {
	case !in.Exists():
		out, err := sjson.SetRawBytes(obj, "instructions", wire.JSONText("", text, ""))
		if err != nil {
			return nil
		}
		return out
	case in.Type == gjson.String:
		return wire.AppendToString(obj, in, "\n\n", text)
	}
	return nil // null or not a string: not ours to rewrite
}
