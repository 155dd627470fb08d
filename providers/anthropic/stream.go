package anthropic

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// stream assembles a streamed Message event by event.
type stream struct {
	m       message
	blocks  []block       // the content blocks, in the order they started
	latest  map[int64]int // a content block's index -> the last of blocks to start with it
	events  int           // JSON events read
	stopped bool          // message_stop was seen
}

// block is a content block being assembled from its deltas.
type block struct {
	typ      string
	start    string // content_block_start's block (a view)
	id, name string
	input    string // content_block_start's input: a call's arguments when no fragment comes
	text     []byte // text, thinking, or a call's partial JSON, so far
}

// parseStream reads a Messages stream: named events, each with a JSON
// "data:" whose "type" repeats the name. message_start carries the
// message's id, model and first usage; content_block_start,
// content_block_delta and content_block_stop build each content block by
// index; message_delta carries the stop reason and the usage so far
// (cumulative: it replaces, never adds); message_stop ends the stream, and
// there is no [DONE]. ping is a keep-alive; an error event in the middle
// of a 200 stream ends it with an error. A cut capture is read from its
// head and, from its first whole frame on, its tail.
func parseStream(resp *providers.Response) providers.Result {
	s := &stream{m: message{class: ClassMessage}}
	s.scan(resp.Body)
	if resp.Truncated {
		if i := wire.FrameStart(resp.Tail); i >= 0 {
			s.scan(resp.Tail[i:]) // the tail starts mid-event
		}
	}
	if body := bytes.TrimSpace(resp.Body); s.events == 0 && !resp.Truncated && len(body) > 0 {
		if body[0] == '{' && record.ValidJSON(body) {
			// A whole Message (or an error object) where a stream was
			// asked for: a server that does not stream said it at once.
			root := wire.Parse(body)
			if t := root.Get("type").String(); t == "message" || t == "error" {
				m := message{class: ClassMessage}
				m.object(root, body)
				return m.result()
			}
		}
		// Bytes, but not one event: nothing a client could read.
		return wire.NotJSON(len(resp.Body))
	}
	return s.result(resp.EOF)
}

func (s *stream) scan(b []byte) {
	wire.ScanSSE(b, func(ev wire.Event) bool {
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			return true
		}
		if data[0] != '{' || !record.ValidJSON(data) {
			return true // a frame cut off, or not an event
		}
		s.events++
		s.event(ev.Name, wire.Parse(data), data)
		return !s.m.failed
	})
}

func (s *stream) event(name string, root gjson.Result, data []byte) {
	var typ, index, delta, contentBlock, msg, usage gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "type":
			typ = v
		case "index":
			index = v
		case "delta":
			delta = v
		case "content_block":
			contentBlock = v
		case "message":
			msg = v
		case "usage":
			usage = v
		}
		return true
	})
	t := typ.String()
	if t == "" {
		t = name
	}
	switch t {
	case "message_start":
		s.messageStart(msg)
	case "content_block_start":
		s.blockStart(index.Int(), contentBlock)
	case "content_block_delta":
		s.blockDelta(index.Int(), delta)
	case "message_delta":
		delta.ForEach(func(k, v gjson.Result) bool {
			switch k.String() {
			case "stop_reason":
				if v.Type == gjson.String {
					s.m.reason = v.String()
				}
			case "stop_details":
				s.m.refusal = stopDetails(v)
			}
			return true
		})
		s.m.usage.Read(usage)
	case "message_stop":
		s.stopped = true
	case "error":
		s.m.fail(classify(500, data))
	}
}

func (s *stream) messageStart(msg gjson.Result) {
	msg.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "id":
			s.m.id = v.String()
		case "model":
			s.m.model = v.String()
		case "usage":
			s.m.usage.Read(v)
		}
		return true
	})
}

func (s *stream) blockStart(index int64, cb gjson.Result) {
	typ, text, id, name, input, thinking := blockFields(cb)
	if s.latest == nil {
		s.latest = make(map[int64]int)
	}
	s.latest[index] = len(s.blocks)
	b := block{typ: typ.String(), start: cb.Raw, id: id.String(), name: name.String(), input: input.Raw}
	switch b.typ {
	case "text":
		b.text = wire.Append(b.text, text.String())
	case "thinking":
		b.text = wire.Append(b.text, thinking.String()) // "" when its deltas follow
	}
	s.blocks = append(s.blocks, b)
}

// blockDelta applies one fragment to its block: text, thinking, or a
// call's partial JSON. A thinking block's signature is none of them.
func (s *stream) blockDelta(index int64, d gjson.Result) {
	var typ, text, partial, thinking gjson.Result
	d.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "type":
			typ = v
		case "text":
			text = v
		case "partial_json":
			partial = v
		case "thinking":
			thinking = v
		}
		return true
	})
	// Looked up, not searched for from the latest block back: a stream
	// that starts many blocks and then sends the first one's fragments
	// would cost the product of the two.
	i, ok := s.latest[index]
	if !ok {
		// A fragment of a block that did not start (its start was lost,
		// or a server skips it): the block its fragment says it is.
		typ := map[string]string{"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "tool_use"}[typ.String()]
		if typ == "" {
			return
		}
		if s.latest == nil {
			s.latest = make(map[int64]int)
		}
		i = len(s.blocks)
		s.latest[index] = i
		s.blocks = append(s.blocks, block{typ: typ})
	}
	b := &s.blocks[i]
	switch typ.String() {
	case "text_delta":
		b.text = wire.Append(b.text, text.String())
	case "thinking_delta":
		b.text = wire.Append(b.text, thinking.String())
	case "input_json_delta":
		b.text = wire.Append(b.text, partial.String())
	}
}

// parts are the blocks as the answer's parts, read as a whole Message's
// content is (contentParts).
func (s *stream) parts() []record.Part {
	var parts []record.Part
	for i := range s.blocks {
		b := &s.blocks[i]
		switch b.typ {
		case "text":
			parts = convert.Text(parts, wire.Own(b.text))
		case "thinking":
			parts = append(parts, record.Part{Type: record.PartReasoning, Content: wire.Own(b.text)})
		case "tool_use", "server_tool_use", "mcp_tool_use":
			args := b.input // "{}" for a call without arguments
			if len(b.text) > 0 {
				args = wire.Own(b.text)
			}
			parts = append(parts, providers.ToolCall{ID: b.id, Name: b.name, Arguments: args}.Part())
		default:
			parts = blockPart(parts, wire.Parse(wire.View(b.start)))
		}
	}
	return parts
}

// Events assembles a Messages stream whose events come one at a time,
// each the JSON of one event (what an SSE frame's "data:" holds), framed
// otherwise than by SSE: Amazon Bedrock's InvokeModelWithResponseStream
// carries each event in an eventstream message of its own
// (providers/bedrock). The events are read as ParseResponse reads a
// stream's. The zero value is ready to use; an Events is not safe for
// concurrent use.
type Events struct {
	s    stream
	init bool
}

// Add reads one event and reports whether the stream may go on: false
// once an error event ended it. data must not change until Result has
// returned: what is kept of it is copied only then.
func (e *Events) Add(data []byte) bool {
	if !e.init {
		e.s.m.class, e.init = ClassMessage, true
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !record.ValidJSON(data) {
		return !e.s.m.failed // not an event: skipped, as a stream's cut frame is
	}
	e.s.events++
	e.s.event("", wire.Parse(data), data)
	return !e.s.m.failed
}

// Events reports how many events were read.
func (e *Events) Events() int { return e.s.events }

// Result settles the outcome of the events read, as ParseResponse settles
// a stream's: message_stop makes it finished, and a stream read to its end
// (eof) without one is record.ErrorIncomplete. The result owns its strings.
func (e *Events) Result(eof bool) providers.Result {
	if !e.init {
		e.s.m.class, e.init = ClassMessage, true
	}
	res := e.s.result(eof)
	wire.Detach(&res)
	return res
}

// result settles the stream's outcome once its events are read.
func (s *stream) result(eof bool) providers.Result {
	s.m.parts = s.parts()
	s.m.finished = s.stopped || s.m.failed
	res := s.m.result()
	if eof && !res.Finished && res.Outcome.OK {
		// Read to its end without message_stop: the caller cannot know it
		// had the whole answer, whatever came before.
		wire.Unfinished(&res, "the stream ended without message_stop")
	}
	return res
}
