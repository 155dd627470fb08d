package gemini

import (
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// The message model (record.Message) of the Gemini API. A request's
// contents and a response's candidate are read by the same function
// (part), so that an answer and the copy of it the next request sends
// back are one message.

// Content reads one content of a Gemini request ({"role", "parts"}), or a
// candidate's content, as the message model. A user content that only
// returns function responses is the tool's.
func Content(raw []byte) record.Message {
	var b convert.Builder
	return content(gjson.ParseBytes(raw), &b).Clone()
}

// content reads a content into b (reset first) and returns its message,
// whose parts are b's until b is reset.
func content(v gjson.Result, b *convert.Builder) record.Message {
	b.Reset()
	return more(v, b)
}

// more reads a content into b after what b holds: the model's turn that
// an SDK keeps in several contents (genai's chat keeps each chunk of a
// stream as one), read as the one message it is.
func more(v gjson.Result, b *convert.Builder) record.Message {
	role := record.RoleUser
	switch {
	case v.Type == gjson.String: // a bare string: what the SDKs send as one text part
		b.Text(v.String())
	case v.IsObject():
		wire.EachMember(v, func(k string, v gjson.Result) bool {
			switch k {
			case "role":
				role = convert.Role(v.String())
			case "parts":
				if v.IsObject() { // one part, not in a list: read as the API reads it
					part(v, b)
					break
				}
				v.ForEach(func(_, p gjson.Result) bool {
					part(p, b)
					return true
				})
			}
			return true
		})
	default:
		b.Add(convert.Other("content", v.Raw))
	}
	m := b.Message(nil)
	m.Role = role
	if m.Parts == nil {
		m.Parts = []record.Part{}
	}
	convert.Results(&m)
	return m
}

// part reads one part: text (a thought is reasoning), inline data and
// file data (media), a function call and its response, and what the
// model's code execution ran and got, kept as sent. A thought signature
// is the model's own opaque state, not what was said: a part holding
// only that adds nothing.
func part(p gjson.Result, b *convert.Builder) {
	var text, data, file, call, response gjson.Result
	thought, other := false, ""
	if !p.IsObject() {
		b.Add(convert.Other("part", p.Raw))
		return
	}
	wire.EachMember(p, func(key string, v gjson.Result) bool {
		switch key {
		case "text":
			text = v
		case "thought":
			thought = v.Bool()
		case "inlineData", "inline_data":
			data = v
		case "fileData", "file_data":
			file = v
		case "functionCall", "function_call":
			call = v
		case "functionResponse", "function_response":
			response = v
		case "thoughtSignature", "thought_signature", "videoMetadata", "video_metadata", "partMetadata", "part_metadata", "mediaResolution", "media_resolution":
		default:
			if other == "" {
				other = key
			}
		}
		return true
	})
	switch {
	case text.Type == gjson.String && thought:
		b.Reasoning(text.String())
	case text.Type == gjson.String:
		b.Text(text.String())
	case call.IsObject():
		b.Add(convert.Call(call.Get("id").String(), call.Get("name").String(), call.Get("args").Raw))
	case response.IsObject():
		b.Add(record.Part{Type: record.PartToolResult, ID: response.Get("id").String(), Name: response.Get("name").String(),
			Content: convert.ResultText(response.Get("response"))})
	case data.IsObject():
		b.Add(convert.Inline(mime(data), data.Get("data").String()))
	case file.IsObject():
		uri := file.Get("fileUri")
		if !uri.Exists() {
			uri = file.Get("file_uri")
		}
		b.Add(convert.Media(mime(file), uri.String()))
	case other != "":
		b.Add(convert.Other(other, p.Raw))
	}
}

func mime(v gjson.Result) string {
	if m := v.Get("mimeType"); m.Exists() {
		return m.String()
	}
	return v.Get("mime_type").String()
}
