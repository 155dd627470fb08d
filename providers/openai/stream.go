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
	choices choiceSet    // chat and legacy completion chunks
	output  outputSet    // Responses API events
	whole   gjson.Result // the output a response.completed repeats (a view)
	chunks  bool         // chat or legacy completion chunks were seen
	events  int          // JSON events read
	failed  bool
	cut     bool // the last event's data was not whole JSON: the body ended inside it
	// chunk is the last plain text chunk read in full; content is the
	// index of its content hole (see chunkTemplate)
	chunk     chunkTemplate
	content   int
	useChunks bool
}

// parseStream reads chat completion chunks (ended by "data: [DONE]"; usage
// comes only in a last chunk with no choices when stream_options asks for
// it, every other chunk has "usage": null) and Responses API events (named
// by "event:" lines and their "type"; no [DONE], the stream ends after
// response.completed). A cut stream is read from its head and, after the
// first whole event, its tail.
func parseStream(call *providers.Call, resp *providers.Response) providers.Result {
	return parseStreamWith(call, resp, true)
}

// parseStreamWith is parseStream; with chunks false every event is walked
// in full, as the chunk templates' tests compare.
func parseStreamWith(call *providers.Call, resp *providers.Response, chunks bool) providers.Result {
	s := &stream{res: providers.Result{Outcome: record.Success(valueClass(call.MethodName))}, useChunks: chunks}
	s.choices.scratch = resp.Scratch
	s.choices.lend()
	s.scan(resp.Body)
	if resp.Truncated {
		if i := wire.FrameStart(resp.Tail); i >= 0 {
			s.scan(resp.Tail[i:]) // the tail starts mid-event
		}
	}
	switch {
	case s.failed:
	case s.events == 0 && !s.res.Finished && !resp.Truncated && len(bytes.TrimSpace(resp.Body)) > 0:
		// Bytes, but not one event: nothing a client could read.
		return wire.NotJSON(len(resp.Body))
	case s.chunks:
		s.choices.finish(&s.res)
	case s.whole.IsArray() && len(s.whole.Array()) > 0:
		// response.completed repeats the output whole: read it as a
		// response's (outputMessage).
		s.res.Output = outputMessage(s.whole)
	default:
		if m := s.output.message(); len(m.Parts) > 0 {
			s.res.Output = m
		}
	}
	// Read to its end without [DONE] (or response.completed): whole only if
	// a finish reason came and the last event is not cut off.
	if resp.EOF && !s.failed && !s.res.Finished && s.res.Outcome.OK && (s.choices.reason == "" || s.cut) {
		wire.Unfinished(&s.res, "the stream ended without [DONE] or a finish reason")
	}
	return s.res
}

func (s *stream) scan(b []byte) {
	wire.ScanSSE(b, func(ev wire.Event) bool {
		data := bytes.TrimSpace(ev.Data)
		if string(data) == "[DONE]" {
			s.res.Finished = true
			return true
		}
		if len(data) == 0 {
			return true
		}
		if s.useChunks && s.chunk.match(&s.choices, data, s.content) {
			s.cut = false
			s.events++
			return true
		}
		// One pass reads the event's fields and validates it: a cut or
		// garbled event is skipped, whatever it began with.
		var f eventFields
		if s.cut = data[0] != '{' || !wire.Members(data, f.take); s.cut {
			return true
		}
		s.events++
		s.event(&f, data)
		if !s.failed {
			s.content = s.chunk.learn(&f, data)
		}
		return !s.failed
	})
}

// eventFields are the raw fields of one stream event the parser reads.
type eventFields struct {
	typ, object, id, model, choices, usage, errObj, delta, response, item, outIdx []byte
	tier, fingerprint                                                             []byte
	obfuscation                                                                   []byte // OpenAI's random padding
}

func (f *eventFields) take(k, v []byte) bool {
	switch string(k) {
	case "type":
		f.typ = v
	case "object":
		f.object = v
	case "id":
		f.id = v
	case "model":
		f.model = v
	case "choices":
		f.choices = v
	case "usage":
		f.usage = v
	case "error":
		f.errObj = v
	case "delta":
		f.delta = v
	case "response":
		f.response = v
	case "item":
		f.item = v
	case "output_index":
		f.outIdx = v
	case "service_tier":
		f.tier = v
	case "system_fingerprint":
		f.fingerprint = v
	case "obfuscation":
		f.obfuscation = v
	}
	return true
}

func (s *stream) event(f *eventFields, data []byte) {
	// The raw fields are read as they are needed: a chat chunk, the
	// common event, needs only its choices.
	// Views into the body, copied once by wire.Detach.
	if s.res.Model == "" && len(f.model) > 0 && f.model[0] == '"' {
		s.res.Model = wire.Parse(f.model).String()
	}
	if s.res.Outcome.ResponseID == "" && len(f.id) > 0 && f.id[0] == '"' && len(f.object) > 0 {
		s.res.Outcome.ResponseID = wire.Parse(f.id).String()
	}
	if len(f.errObj) > 0 && f.errObj[0] == '{' {
		// An error in the middle of a 200 stream.
		s.fail(providers.ClassifyError(500, data))
		return
	}
	// Every chunk of a chat stream repeats them: the first says it.
	if s.res.ServiceTier == "" {
		s.res.ServiceTier = str(f.tier)
	}
	if s.res.SystemFingerprint == "" {
		s.res.SystemFingerprint = str(f.fingerprint)
	}
	if len(f.choices) > 0 {
		s.chunks = true
		record.EachValidElement(f.choices, func(ch []byte) bool {
			s.choices.delta(ch)
			return true
		})
		if len(f.usage) > 0 && f.usage[0] == '{' {
			readUsage(&s.res, wire.Parse(f.usage))
		}
		return
	}
	// Responses API events.
	p := wire.Parse
	typ, delta, response, item, outIdx := p(f.typ), p(f.delta), p(f.response), p(f.item), p(f.outIdx)
	switch typ.String() {
	case "response.created", "response.in_progress":
		s.responseObject(response)
	case "response.output_text.delta":
		s.output.slot(outIdx.Int()).text.WriteString(delta.String())
	case "response.refusal.delta":
		s.output.slot(outIdx.Int()).refusal.WriteString(delta.String())
	case "response.reasoning_summary_part.added":
		s.output.slot(outIdx.Int()).reasoningPart()
	case "response.content_part.added":
		if p(data).Get("part.type").String() == "reasoning_text" {
			s.output.slot(outIdx.Int()).reasoningPart()
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		s.output.slot(outIdx.Int()).reasoning.WriteString(delta.String())
	case "response.output_item.added":
		sl := s.output.slot(outIdx.Int())
		sl.typ, sl.added = item.Get("type").String(), item.Raw
		sl.call = providers.ToolCall{ID: item.Get("call_id").String(), Name: item.Get("name").String()}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		sl := s.output.slot(outIdx.Int())
		sl.args = append(sl.args, delta.String()...)
	case "response.function_call_arguments.done":
		sl := s.output.slot(outIdx.Int())
		sl.call.Arguments, sl.args = wire.Parse(data).Get("arguments").String(), sl.args[:0] // the deltas before it are replaced
	case "response.output_item.done":
		s.output.slot(outIdx.Int()).done = item.Raw
	case "response.completed", "response.incomplete", "response.failed":
		s.responseObject(response)
		s.res.Finished = true
		s.whole = response.Get("output")
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
	if t := r.Get("service_tier"); t.Type == gjson.String {
		// The last says what served it: response.created repeats the
		// request's "auto", response.completed names the tier.
		s.res.ServiceTier = t.String()
	}
	if u := r.Get("usage"); u.IsObject() {
		readUsage(&s.res, u)
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
