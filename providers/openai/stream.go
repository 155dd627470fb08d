package openai

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// stream assembles a streamed response event by event.
type stream struct {
	res     providers.Result
	choices choiceSet // chat and legacy completion chunks
	output  outputSet // Responses API events
	byItem  map[int64]int
	chunks  bool // chat or legacy completion chunks were seen
	events  int  // JSON events read
	failed  bool
	cut     bool // the last event's data was not whole JSON: the body ended inside it
}

// parseStream reads chat completion chunks (ended by "data: [DONE]"; usage
// comes only in a last chunk with no choices when stream_options asks for
// it, every other chunk has "usage": null) and Responses API events (named
// by "event:" lines and their "type"; no [DONE], the stream ends after
// response.completed). A cut stream is read from its head and, after the
// first whole event, its tail.
func parseStream(call *providers.Call, resp *providers.Response) providers.Result {
	s := &stream{res: providers.Result{Outcome: record.Success(valueClass(call.MethodName))}}
	s.scan(resp.Body)
	if resp.Truncated {
		if i := providers.FrameStart(resp.Tail); i >= 0 {
			s.scan(resp.Tail[i:]) // the tail starts mid-event
		}
	}
	switch {
	case s.failed:
	case s.events == 0 && !s.res.Finished && !resp.Truncated && len(bytes.TrimSpace(resp.Body)) > 0:
		// Bytes, but not one event: nothing a client could read.
		return providers.NotJSON(len(resp.Body))
	case s.chunks:
		s.choices.finish(&s.res)
	default:
		s.output.finish(&s.res)
	}
	// Read to its end without [DONE] (or response.completed): whole only if
	// a finish reason came and the last event is not cut off.
	if resp.EOF && !s.failed && !s.res.Finished && s.res.Outcome.OK && (s.choices.reason == "" || s.cut) {
		providers.Unfinished(&s.res, "the stream ended without [DONE] or a finish reason")
	}
	return s.res
}

func (s *stream) scan(b []byte) {
	providers.ScanSSE(b, func(ev providers.Event) bool {
		data := bytes.TrimSpace(ev.Data)
		if string(data) == "[DONE]" {
			s.res.Finished = true
			return true
		}
		if len(data) == 0 {
			return true
		}
		if s.cut = data[0] != '{' || !record.ValidJSON(data); s.cut {
			return true
		}
		s.events++
		s.event(wire.Parse(data), data)
		return !s.failed
	})
}

func (s *stream) event(root gjson.Result, data []byte) {
	var typ, object, id, model, choices, usage, errObj, delta, response, item, outIdx gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "type":
			typ = v
		case "object":
			object = v
		case "id":
			id = v
		case "model":
			model = v
		case "choices":
			choices = v
		case "usage":
			usage = v
		case "error":
			errObj = v
		case "delta":
			delta = v
		case "response":
			response = v
		case "item":
			item = v
		case "output_index":
			outIdx = v
		}
		return true
	})
	if s.res.Model == "" && model.Type == gjson.String {
		s.res.Model = model.String()
	}
	if s.res.Outcome.ResponseID == "" && id.Type == gjson.String && object.Exists() {
		s.res.Outcome.ResponseID = id.String()
	}
	if errObj.IsObject() {
		// An error in the middle of a 200 stream.
		s.fail(providers.ClassifyError(500, data))
		return
	}
	if choices.Exists() {
		s.chunks = true
		choices.ForEach(func(_, ch gjson.Result) bool {
			s.choices.delta(ch)
			return true
		})
		if u := readUsage(usage); u != nil {
			s.res.Usage = u
		}
		return
	}
	switch typ.String() {
	case "response.created", "response.in_progress":
		s.responseObject(response)
	case "response.output_text.delta":
		s.output.text.WriteString(delta.String())
	case "response.refusal.delta":
		s.output.refusal.WriteString(delta.String())
	case "response.output_item.added":
		if t := item.Get("type").String(); t == "function_call" || t == "custom_tool_call" {
			if s.byItem == nil {
				s.byItem = make(map[int64]int)
			}
			s.byItem[outIdx.Int()] = len(s.output.calls)
			s.output.calls = append(s.output.calls, providers.ToolCall{ID: item.Get("call_id").String(), Name: item.Get("name").String()})
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if pos, ok := s.byItem[outIdx.Int()]; ok {
			s.output.calls[pos].Arguments += delta.String()
		}
	case "response.function_call_arguments.done":
		if pos, ok := s.byItem[outIdx.Int()]; ok {
			s.output.calls[pos].Arguments = root.Get("arguments").String()
		}
	case "response.completed", "response.incomplete", "response.failed":
		s.responseObject(response)
		s.res.Finished = true
		status := response.Get("status").String()
		responseStatus(&s.res, status, response.Get("incomplete_details"), response.Get("error"), nil)
		s.failed = !s.res.Outcome.OK
	case "error":
		s.fail(providers.ClassifyError(500, []byte(`{"error":`+string(data)+`}`)))
	}
}

// responseObject reads the id, model and usage of the response an event
// carries.
func (s *stream) responseObject(r gjson.Result) {
	if !r.IsObject() {
		return
	}
	if id := r.Get("id"); id.Type == gjson.String {
		s.res.Outcome.ResponseID = id.String()
	}
	if m := r.Get("model"); m.Type == gjson.String {
		s.res.Model = m.String()
	}
	if u := readUsage(r.Get("usage")); u != nil {
		s.res.Usage = u
	}
}

func (s *stream) fail(typ, msg string) {
	keep := s.res.Outcome
	s.res.Outcome = record.Failure(typ)
	s.res.Outcome.ResponseID = keep.ResponseID
	s.res.ErrorMessage = msg
	s.res.Finished = true
	s.failed = true
}
