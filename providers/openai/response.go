package openai

import (
	"bytes"
	"slices"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// ParseResponse reads a response: an error body, a completion, a Responses
// API object, an embeddings list, or a stream of any of them.
func (Provider) ParseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	res := parseResponse(call, resp)
	wire.Detach(&res)
	return res
}

func parseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	if resp.StatusCode >= 400 {
		typ, msg := providers.ClassifyError(resp.StatusCode, resp.Body)
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
	}
	if resp.Stream {
		return parseStream(call, resp)
	}
	body := bytes.TrimSpace(resp.Body)
	if resp.Truncated {
		return truncated(call, resp)
	}
	if len(body) == 0 {
		// Empty: the call worked, the detail is lost.
		return providers.Result{Outcome: record.Success(valueClass(call.MethodName))}
	}
	var (
		res                            providers.Result
		object, id, model, status      []byte
		choices, usage, output, errObj []byte
		incomplete, tier, fingerprint  []byte
	)
	// One pass validates the body and finds its members; they are parsed
	// only as they are used.
	valid := wire.Members(body, func(k, v []byte) bool {
		switch string(k) {
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
		case "output":
			output = v
		case "status":
			status = v
		case "error":
			errObj = v
		case "incomplete_details":
			incomplete = v
		case "service_tier":
			tier = v
		case "system_fingerprint":
			fingerprint = v
		}
		return true
	})
	if !valid {
		if expectsJSON(call.MethodName) {
			// No SDK can use it: go-openai and openai-go fail to decode.
			return wire.Undecodable(body)
		}
		return providers.Result{Outcome: record.Success(valueClass(call.MethodName))}
	}
	// Views into the body (wire.Parse), copied once by wire.Detach.
	class := wire.Parse(object).String()
	if class == "" {
		class = valueClass(call.MethodName)
	}
	res.Outcome = record.Success(class)
	res.Outcome.ResponseID = wire.Parse(id).String()
	res.Model = wire.Parse(model).String()
	res.ServiceTier, res.SystemFingerprint = str(tier), str(fingerprint)
	readUsage(&res, wire.Parse(usage))
	res.Finished = true
	switch class {
	case "chat.completion", "text_completion":
		c := choiceSet{scratch: resp.Scratch}
		c.lend()
		record.EachValidElement(choices, func(ch []byte) bool {
			c.message(ch)
			return true
		})
		c.finish(&res)
	case "response":
		res.Output = outputMessage(wire.Parse(output))
		responseStatus(&res, wire.Parse(status).String(), wire.Parse(incomplete), wire.Parse(errObj), body)
	}
	return res
}

// truncated reads a completion too long to keep whole from the ends the
// recorder kept: its id and model open the head, its finish reason and
// usage close the tail (the last occurrence of each key is the last
// choice's, and the top level's usage).
func truncated(call *providers.Call, resp *providers.Response) providers.Result {
	res := providers.Result{Outcome: record.Success(valueClass(call.MethodName))}
	if call.MethodName != MethodChat && call.MethodName != MethodCompletions {
		return res // the detail is lost; the call worked
	}
	head := resp.Body[:min(len(resp.Body), 512)]
	if v := wire.FirstValue(head, `"id"`); len(v) > 0 && v[0] == '"' {
		res.Outcome.ResponseID = wire.Parse(v).String()
	}
	if v := wire.FirstValue(head, `"model"`); len(v) > 0 && v[0] == '"' {
		res.Model = wire.Parse(v).String()
	}
	if v := wire.LastValue(resp.Tail, `"finish_reason"`); len(v) > 0 && v[0] == '"' {
		var c choiceSet
		c.reason = wire.Parse(v).String()
		c.finish(&res)
		res.Finished = true
	}
	if v := wire.LastValue(resp.Tail, `"usage"`); len(v) > 0 && v[0] == '{' {
		readUsage(&res, wire.Parse(v))
	}
	return res
}

// str reads a raw JSON string as a view (wire.Detach copies it); any
// other value, null among them, is "".
func str(v []byte) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	return wire.Parse(v).String()
}

// expectsJSON reports whether a method's successful response is a JSON
// document, so that anything else is a failure to decode.
func expectsJSON(method string) bool {
	switch method {
	case MethodChat, MethodResponses, MethodCompletions, MethodEmbeddings:
		return true
	}
	return false
}

// valueClass is what a successful call of a method returns.
func valueClass(method string) string {
	switch method {
	case MethodChat:
		return "chat.completion"
	case MethodResponses:
		return "response"
	case MethodCompletions:
		return "text_completion"
	case MethodEmbeddings:
		return "list"
	}
	return "json"
}

// readUsage reads chat (prompt/completion) and Responses API (input/output)
// token counts, with their cached and reasoning details, in the one
// meaning of record.Usage, into res. null (every stream chunk's but the
// last) and an object without counts leave res as it was.
func readUsage(res *providers.Result, u gjson.Result) {
	var r wire.UsageReader
	if r.Read(u); r.Usage() != nil || r.OutOfRange() {
		r.Into(res)
	}
}

// choiceSet assembles the choices of a completion (or of its stream).
// Only the first choice is the answer: it is the one the next request of
// a conversation carries.
type choiceSet struct {
	msg     record.Message // a complete response's first message, read whole
	whole   bool           // msg holds it
	text    []byte         // choice 0: what the model said, in a stream or a legacy completion
	scratch *[]byte        // the recorder's buffer for text, if it lends one
	refusal []byte
	// reasoning is what OpenAI-compatible servers send beside the text:
	// reasoning_content (DeepSeek, Moonshot, vLLM, SGLang), or
	// reasoning (OpenRouter, newer vLLM). OpenAI itself sends none.
	reasoning []byte
	calls     []providers.ToolCall
	byIndex   map[int64]int // stream tool-call index -> calls position
	pieces    []callPieces  // a stream's fragments of calls[i], joined by finish
	reason    string
	choices   int
}

// callPieces gathers what a stream sends of a tool call a fragment at a
// time: its arguments, and the legacy function_call's name. Appending to
// the call's strings instead copies all that came before for every
// fragment, which for a 1 MiB stream of argument deltas took a second.
type callPieces struct{ name, args []byte }

// piecesOf returns the fragments gathered for calls[pos].
func piecesOf(pieces *[]callPieces, pos int) *callPieces {
	for len(*pieces) <= pos {
		*pieces = append(*pieces, callPieces{})
	}
	return &(*pieces)[pos]
}

// message reads one choice of a complete response (raw, validated), each
// level walked once: the first choice's message is the answer, read as a
// request's message is (chatMessage).
func (c *choiceSet) message(ch []byte) {
	first := c.choices == 0
	c.choices++
	record.EachValidMember(ch, func(k, v []byte) bool {
		switch string(k) {
		case "finish_reason":
			if v[0] == '"' && c.reason == "" {
				c.reason = wire.Parse(v).String() // a view: Detach copies it
			}
		case "text": // legacy completions
			if v[0] == '"' && first {
				c.text = appendJSONText(c.text, v)
			}
		case "message":
			if first && v[0] == '{' {
				chatMessage(wire.Parse(v), &c.msg)
				c.whole = true
			}
		}
		return true
	})
}

// reasoningOf picks the reasoning of a message or delta: reasoning_content
// when it is a string, else reasoning (a server that sends both sends the
// same text twice); nil when neither is.
func reasoningOf(content, reasoning []byte) []byte {
	switch {
	case len(content) > 0 && content[0] == '"':
		return content
	case len(reasoning) > 0 && reasoning[0] == '"':
		return reasoning
	}
	return nil
}

// delta reads one choice of a stream chunk, its raw bytes (valid JSON:
// the event was validated): text, refusal and tool-call fragments, where
// only a call's first fragment carries its id and name. Only choice 0 is
// assembled; the others add their finish reason. It walks the raw bytes
// once per level (a stream has an event per token: this is its cost).
func (c *choiceSet) delta(ch []byte) {
	index := int64(0)
	var d, reason, text []byte
	record.EachValidMember(ch, func(k, v []byte) bool {
		switch string(k) {
		case "index":
			index = smallInt(v)
		case "finish_reason":
			reason = v
		case "text": // legacy completions
			text = v
		case "delta":
			d = v
		}
		return true
	})
	if len(reason) > 0 && reason[0] == '"' && (c.reason == "" || index == 0) {
		c.reason = wire.Parse(reason).String() // a view: Detach copies it
	}
	if index != 0 {
		return
	}
	if len(text) > 0 {
		c.text = appendJSONText(c.text, text)
	}
	if len(d) == 0 || d[0] != '{' {
		return
	}
	var rContent, rText []byte
	record.EachValidMember(d, func(k, v []byte) bool {
		switch string(k) {
		case "reasoning_content":
			rContent = v
		case "reasoning":
			rText = v
		case "content":
			c.text = appendJSONText(c.text, v)
		case "refusal":
			c.refusal = appendJSONText(c.refusal, v)
		case "tool_calls":
			wire.Parse(v).ForEach(func(_, tc gjson.Result) bool {
				c.fragment(tc)
				return true
			})
		case "function_call":
			if len(c.calls) == 0 {
				c.calls = append(c.calls, providers.ToolCall{})
			}
			fc := wire.Parse(v)
			p := piecesOf(&c.pieces, 0)
			p.name = append(p.name, fc.Get("name").String()...)
			p.args = append(p.args, fc.Get("arguments").String()...)
		}
		return true
	})
	if r := reasoningOf(rContent, rText); len(r) > 0 {
		c.reasoning = appendJSONText(c.reasoning, r)
	}
}

// smallInt reads a JSON number that is a small non-negative integer (an
// index); anything else is 0.
func smallInt(v []byte) int64 {
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' || n > 1<<40 {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func (c *choiceSet) fragment(tc gjson.Result) {
	idx := tc.Get("index").Int()
	pos, ok := c.byIndex[idx]
	if !ok {
		if c.byIndex == nil {
			c.byIndex = make(map[int64]int)
		}
		pos = len(c.calls)
		c.byIndex[idx] = pos
		c.calls = append(c.calls, providers.ToolCall{})
	}
	call, p := &c.calls[pos], piecesOf(&c.pieces, pos)
	if id := tc.Get("id").String(); id != "" {
		call.ID = id
	}
	if name := tc.Get("function.name").String(); name != "" {
		call.Name, p.name = name, p.name[:0] // what came before it is replaced
	}
	p.args = append(p.args, tc.Get("function.arguments").String()...)
}

// lend starts the text in the buffer the recorder lends, if any.
func (c *choiceSet) lend() {
	if c.scratch != nil {
		c.text = (*c.scratch)[:0]
	}
}

func (c *choiceSet) finish(res *providers.Result) {
	if c.whole {
		res.Output = c.msg
	} else {
		// A stream, or a legacy completion: the parts in the order
		// chatMessage reads a message's.
		m := record.Message{Role: record.RoleAssistant}
		if len(c.reasoning) > 0 {
			m.Parts = append(m.Parts, record.Part{Type: record.PartReasoning, Content: ownString(c.reasoning)})
		}
		if len(c.text) > 0 {
			m.Parts = append(m.Parts, record.Part{Type: record.PartText, Content: ownString(c.text)})
		}
		if len(c.refusal) > 0 {
			m.Parts = append(m.Parts, record.Part{Type: record.PartRefusal, Content: ownString(c.refusal)})
		}
		joinPieces(c.calls, c.pieces)
		for _, call := range c.calls {
			m.Parts = append(m.Parts, call.Part())
		}
		if len(m.Parts) > 0 {
			res.Output = m
		}
	}
	if c.scratch != nil && cap(c.text) > 0 {
		*c.scratch = c.text[:0] // grown, for the next call; Detach copies the text out
	}
	res.Outcome.FinishReason = c.reason
	if c.reason == "content_filter" {
		contentFiltered(res)
	}
}

// contentFiltered turns a successful call into one the provider's filter
// blocked, keeping what it says about the response.
func contentFiltered(res *providers.Result) {
	keep := res.Outcome
	res.Outcome = record.Failure(record.ErrorContentFilter)
	res.Outcome.FinishReason, res.Outcome.ResponseID = keep.FinishReason, keep.ResponseID
	res.ErrorMessage = "the response was stopped by a content filter"
}

// outputSet assembles the output items of a Responses API stream, one
// slot per item in the order of their output_index. Slots are pointers:
// a slot's builders must not move when a later item grows the slice, as
// an event may still write to an earlier item.
type outputSet struct {
	slots   []*outputSlot
	byIndex map[int64]int
}

// outputSlot is one output item of a stream: the whole item, once its
// output_item.done came, else what its deltas said.
type outputSlot struct {
	typ       string
	added     string // the item as output_item.added gave it (a view)
	done      string // the whole item (a view)
	text      strings.Builder
	refusal   strings.Builder
	reasoning strings.Builder
	call      providers.ToolCall
	args      []byte
}

// slot returns the slot of the item at output index i, creating it.
func (o *outputSet) slot(i int64) *outputSlot {
	if pos, ok := o.byIndex[i]; ok {
		return o.slots[pos]
	}
	if o.byIndex == nil {
		o.byIndex = make(map[int64]int)
	}
	o.byIndex[i] = len(o.slots)
	sl := new(outputSlot)
	o.slots = append(o.slots, sl)
	return sl
}

// joinPieces appends to each call what its fragments gathered: views of
// the pieces' own buffers, which nothing writes again (the parse's Detach
// copies them with the result's other strings).
func joinPieces(calls []providers.ToolCall, pieces []callPieces) {
	for i := range pieces {
		c, p := &calls[i], &pieces[i]
		if len(p.name) > 0 {
			c.Name += ownString(p.name)
		}
		if len(p.args) > 0 {
			c.Arguments += ownString(p.args)
		}
	}
}

// reasoningPart starts a part of the reasoning: a blank line after the
// one before, as OpenAI shows a summary's parts (reasoningText).
func (sl *outputSlot) reasoningPart() {
	if sl.reasoning.Len() > 0 {
		sl.reasoning.WriteString("\n\n")
	}
}

// message returns the answer the stream's items make, read as a request's
// items are (outputMessage) when they came whole.
func (o *outputSet) message() record.Message {
	m := record.Message{Role: record.RoleAssistant}
	for _, sl := range o.slots {
		if sl.done != "" {
			itemMessage(wire.Parse(wire.View(sl.done)), &m)
			m.Role = record.RoleAssistant
			continue
		}
		switch sl.typ {
		case "message":
			if sl.text.Len() > 0 {
				m.Parts = convert.Text(m.Parts, sl.text.String())
			}
			if sl.refusal.Len() > 0 {
				m.Parts = append(m.Parts, record.Part{Type: record.PartRefusal, Content: sl.refusal.String()})
			}
		case "reasoning":
			m.Parts = append(m.Parts, record.Part{Type: record.PartReasoning, Content: sl.reasoning.String()})
		case "function_call", "custom_tool_call":
			c := sl.call
			c.Arguments += ownString(sl.args)
			m.Parts = append(m.Parts, c.Part())
		default:
			if sl.added != "" {
				m.Parts = append(m.Parts, convert.Other(sl.typ, sl.added))
			}
		}
	}
	return m
}

// outputMessage reads a response's output items as one message: they
// are one turn of the assistant.
func outputMessage(output gjson.Result) record.Message {
	m := record.Message{Role: record.RoleAssistant}
	responsesItems(output, func(one *record.Message) {
		m.Parts = append(m.Parts, one.Parts...)
	})
	if len(m.Parts) == 0 {
		return record.Message{}
	}
	return m
}

// responseStatus applies a Responses API status: "completed", "incomplete"
// (a success cut short: its reason is the finish reason) or "failed".
func responseStatus(res *providers.Result, status string, incomplete, errObj gjson.Result, body []byte) {
	switch status {
	case "", "completed":
		res.Outcome.FinishReason = status
	case "incomplete":
		reason := incomplete.Get("reason").String()
		res.Outcome.FinishReason = reason
		if reason == "content_filter" {
			contentFiltered(res)
		}
	case "failed", "cancelled":
		keep := res.Outcome
		typ, msg := providers.ClassifyError(500, []byte(`{"error":`+orNull(errObj.Raw)+`}`))
		if status == "cancelled" {
			typ = record.ErrorCanceled
		}
		res.Outcome = record.Failure(typ)
		res.Outcome.ResponseID = keep.ResponseID
		res.Outcome.FinishReason = status
		res.ErrorMessage = msg
	default:
		res.Outcome.FinishReason = status // queued, in_progress: a background response
	}
}

func orNull(raw string) string {
	if raw == "" {
		return "null"
	}
	return raw
}

// ownString returns b as a string without copying it; b must never be
// written again.
func ownString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// room returns b with room for n more bytes, growing it by doubling:
// append grows a large slice by only 1.25×, which for a long streamed
// answer allocated about five times its length.
func room(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	return slices.Grow(b, max(n, cap(b)))
}

// appendJSONText appends the JSON string raw (of a body already
// validated) decoded, growing b by doubling.
func appendJSONText(b, raw []byte) []byte {
	return record.AppendValidString(room(b, len(raw)), raw)
}
