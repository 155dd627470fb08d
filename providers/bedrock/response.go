package bedrock

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Value classes of a successful call.
const (
	// ClassMessage is a Converse answer, or Claude's Message through
	// InvokeModel.
	ClassMessage = "message"
	// ClassModelOutput is the body of another model's InvokeModel answer,
	// whatever its family's shape.
	ClassModelOutput = "model_output"
)

// ParseResponse reads a response: an error, a Converse answer, an
// InvokeModel body (Claude's Message, or another model's), or a stream of
// eventstream frames.
func (Provider) ParseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	if call == nil {
		call = &providers.Call{MethodName: MethodConverse}
	}
	res := parseResponse(call, resp)
	wire.Detach(&res)
	return res
}

func parseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	if resp == nil {
		return providers.Result{Outcome: record.Success(ClassMessage)}
	}
	if resp.StatusCode >= 400 {
		typ, msg := classify(resp.StatusCode, errorTypeHeader(resp.Header), resp.Body)
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
	}
	switch call.MethodName {
	case MethodConverseStream:
		c := &converse{}
		return readStream(resp, c.frame, c.streamResult)
	case MethodInvokeModel:
		if isAnthropic(call) {
			res := anthropic.Provider{}.ParseResponse(&providers.Call{MethodName: anthropic.MethodCreate}, resp)
			res.Model = "" // the URL's model ID, which Bedrock bills, names it
			return res
		}
		return readModelOutput(resp)
	case MethodInvokeModelStream:
		if isAnthropic(call) {
			c := &claudeChunks{}
			return readStream(resp, c.frame, c.result)
		}
		c := &modelChunks{}
		return readStream(resp, c.frame, c.result)
	}
	return readConverseBody(resp)
}

// errorTypeHeader returns the X-Amzn-ErrorType header, which names
// Bedrock's exception ("ThrottlingException:http://internal.amazon.com/
// coral/com.amazon.bedrock/"); the recorder gives an error response's
// headers to every provider.
func errorTypeHeader(h http.Header) string { return h.Get("X-Amzn-Errortype") }

// isAnthropic reports whether an InvokeModel call sent Claude a Messages
// body: its kwargs keep the anthropic_version Bedrock asks for. A body
// the capture cut has no kwargs, and the model ID decides.
func isAnthropic(call *providers.Call) bool {
	if gjson.GetBytes(call.Kwargs, "anthropic_version").Exists() {
		return true
	}
	for _, t := range call.Truncated {
		if t == "kwargs" {
			return strings.Contains(call.Model, "anthropic.")
		}
	}
	return false
}

// readConverseBody reads a Converse answer: {"output": {"message":
// {"role", "content": [...]}}, "stopReason", "usage", "metrics"}.
func readConverseBody(resp *providers.Response) providers.Result {
	body := bytes.TrimSpace(resp.Body)
	c := &converse{}
	switch {
	case resp.Truncated:
		// The usage and stop reason may follow the content, in the tail.
		if v := wire.LastValue(resp.Tail, `"usage"`); len(v) > 0 && v[0] == '{' {
			c.usage.Read(wire.Parse(v))
		}
		if v := wire.LastValue(resp.Tail, `"stopReason"`); len(v) > 0 && v[0] == '"' {
			c.reason, c.stopped = wire.Parse(v).String(), true
		}
		if v := wire.FirstValue(resp.Body, `"stopReason"`); len(v) > 0 && v[0] == '"' {
			c.reason, c.stopped = wire.Parse(v).String(), true
		}
		return c.result()
	case len(body) == 0:
		return providers.Result{Outcome: record.Success(ClassMessage)}
	case !record.ValidJSON(body):
		return wire.Undecodable(body)
	}
	wire.Parse(body).ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "output":
			if msg := v.Get("message"); msg.IsObject() {
				c.answer = converseMessage(msg, &c.b)
			}
		case "stopReason":
			if v.Type == gjson.String {
				c.reason, c.stopped = v.String(), true
			}
		case "usage":
			c.usage.Read(v)
		}
		return true
	})
	return c.result()
}

// converse assembles a Converse answer, whole or from a ConverseStream's
// events. Its strings are views into the body until wire.Detach copies
// them; the text and the arguments are built in buffers of their own.
type converse struct {
	b       convert.Builder
	answer  record.Message // a whole answer's message
	blocks  []streamBlock  // a stream's content blocks, in the order they came
	byIndex map[int64]int  // a content block's index -> its place in blocks
	reason  string         // stopReason
	usage   wire.UsageReader
	stopped bool // messageStop, or a whole answer's stopReason
	failed  bool
	errType string
	errMsg  string
}

// streamBlock is a content block a ConverseStream sends a delta at a
// time: text, reasoning, or a tool's use and its input.
type streamBlock struct {
	typ      string // record.PartText, PartReasoning or PartToolCall
	id, name string
	text     []byte
}

// streamBlock returns the block of a contentBlockIndex, started as typ
// when it is new.
func (c *converse) streamBlock(index int64, typ string) *streamBlock {
	if i, ok := c.byIndex[index]; ok {
		return &c.blocks[i]
	}
	if c.byIndex == nil {
		c.byIndex = make(map[int64]int)
	}
	c.byIndex[index] = len(c.blocks)
	c.blocks = append(c.blocks, streamBlock{typ: typ})
	return &c.blocks[len(c.blocks)-1]
}

// frame reads one frame of a ConverseStream, by its :event-type.
func (c *converse) frame(f frame) bool {
	if exc, ok := exception(f); ok {
		c.failed, c.errType, c.errMsg = true, exc.typ, exc.msg
		return false
	}
	p := bytes.TrimSpace(f.payload)
	if len(p) == 0 || p[0] != '{' || !record.ValidJSON(p) {
		return true
	}
	root := wire.Parse(p)
	switch string(f.eventType) {
	case "contentBlockStart":
		if u := root.Get("start.toolUse"); u.IsObject() {
			b := c.streamBlock(root.Get("contentBlockIndex").Int(), record.PartToolCall)
			b.id, b.name = u.Get("toolUseId").String(), u.Get("name").String()
		}
	case "contentBlockDelta":
		d, index := root.Get("delta"), root.Get("contentBlockIndex").Int()
		if t := d.Get("text"); t.Type == gjson.String {
			b := c.streamBlock(index, record.PartText)
			b.text = wire.Append(b.text, t.String())
		} else if in := d.Get("toolUse.input"); in.Type == gjson.String {
			b := c.streamBlock(index, record.PartToolCall)
			b.text = wire.Append(b.text, in.String())
		} else if r := d.Get("reasoningContent"); r.Exists() {
			b := c.streamBlock(index, record.PartReasoning)
			b.text = wire.Append(b.text, r.Get("text").String()) // a signature adds nothing
		}
	case "messageStop":
		if r := root.Get("stopReason"); r.Type == gjson.String {
			c.reason = r.String()
		}
		c.stopped = true
	case "metadata":
		// The last event, after messageStop: it ends the stream too, for
		// a tail the capture kept without messageStop.
		c.usage.Read(root.Get("usage"))
		c.stopped = true
	}
	return true
}

// result settles the outcome. A stop reason of guardrail_intervened or
// content_filtered is a content_filter failure that keeps the usage: the
// answer was blocked, and its tokens were still spent.
func (c *converse) result() providers.Result {
	if len(c.blocks) > 0 {
		// A stream's blocks, read as a whole answer's are (block).
		c.b.Reset()
		for _, b := range c.blocks {
			switch b.typ {
			case record.PartText:
				c.b.Text(wire.Own(b.text))
			case record.PartReasoning:
				c.b.Reasoning(wire.Own(b.text))
			default:
				args := wire.Own(b.text)
				if args == "" {
					args = "{}"
				}
				c.b.Add(providers.ToolCall{ID: b.id, Name: b.name, Arguments: args}.Part())
			}
		}
		c.answer = c.b.Message(nil)
	}
	res := providers.Result{
		Outcome:  record.Success(ClassMessage),
		Output:   c.answer,
		Finished: c.stopped || c.failed,
	}
	c.usage.Into(&res)
	switch {
	case c.failed:
		res.Outcome = record.Failure(c.errType)
		res.ErrorMessage = c.errMsg
	case c.reason == "guardrail_intervened" || c.reason == "content_filtered":
		res.Outcome = record.Failure(record.ErrorContentFilter)
		res.ErrorMessage = "the response was stopped: " + c.reason
	}
	res.Outcome.FinishReason = c.reason
	return res
}

// streamResult settles a ConverseStream's outcome: one read to its end
// (eof) without messageStop is record.ErrorIncomplete.
func (c *converse) streamResult(eof bool) providers.Result {
	res := c.result()
	if eof && !res.Finished && res.Outcome.OK {
		wire.Unfinished(&res, "the stream ended without messageStop")
	}
	return res
}

// readStream reads the frames of a streamed answer with fn, and settles
// the outcome with result(eof). A damaged frame (a CRC that does not
// match, a length out of bounds) makes the call a decode failure: the
// SDK's reader fails on it too, and nothing after it can be trusted. A
// stream read to its end in the middle of a frame, or without the event
// that ends it, is record.ErrorIncomplete. A capture cut by the recorder
// is read from its head and, from its first whole frame on, its tail.
func readStream(resp *providers.Response, fn func(frame) bool, result func(eof bool) providers.Result) providers.Result {
	frames, stopped := 0, false
	each := func(f frame) bool {
		frames++
		if !fn(f) {
			stopped = true
			return false
		}
		return true
	}
	_, err := scanFrames(resp.Body, each)
	if resp.Truncated && !stopped && (err == nil || errors.Is(err, errShort)) {
		err = nil // the head ends where the capture was cut
		if i := resync(resp.Tail); i >= 0 {
			_, err = scanFrames(resp.Tail[i:], each)
		}
	}
	var damaged *frameError
	if errors.As(err, &damaged) && !stopped {
		res := result(false)
		keep := res.Outcome
		res.Outcome = record.Failure(record.ErrorDecode)
		res.Outcome.ResponseID, res.Outcome.FinishReason = keep.ResponseID, keep.FinishReason
		res.ErrorMessage = damaged.Error()
		res.Finished = true
		return res
	}
	if frames == 0 && len(bytes.TrimSpace(resp.Body)) > 0 && !resp.Truncated && !errors.Is(err, errShort) {
		return wire.NotJSON(len(resp.Body))
	}
	midFrame := errors.Is(err, errShort) && !stopped
	res := result(resp.EOF && !midFrame)
	if midFrame && resp.EOF && res.Outcome.OK {
		// Whatever came before, the last frame was cut: its bytes (the
		// usage, most often) are lost.
		wire.Unfinished(&res, errShort.Error())
	}
	return res
}

// exceptionFrame is what an exception or error frame says.
type exceptionFrame struct{ typ, msg string }

// exception reads a frame whose :message-type is "exception" (the
// exception's name in :exception-type, {"message": ...} as its payload)
// or "error" (:error-code and :error-message).
func exception(f frame) (exceptionFrame, bool) {
	switch string(f.messageType) {
	case "exception":
		_, msg := providers.ClassifyError(500, f.payload)
		if msg == "" {
			msg = string(f.exceptionType)
		}
		typ := exceptionType(string(f.exceptionType), msg)
		if typ == "" {
			typ = record.ErrorServer
		}
		return exceptionFrame{typ: typ, msg: msg}, true
	case "error":
		msg := string(f.errorMessage)
		typ := exceptionType(string(f.errorCode), msg)
		if typ == "" {
			typ = record.ErrorServer
		}
		if msg == "" {
			msg = string(f.errorCode)
		}
		return exceptionFrame{typ: typ, msg: msg}, true
	}
	return exceptionFrame{}, false
}

// chunk returns the JSON an InvokeModelWithResponseStream chunk carries:
// its payload is {"bytes": "<base64 of the model's own event>"}. The JSON
// is decoded into a buffer of its own, which what is read of it may point
// into until the result is detached.
func chunk(f frame) ([]byte, bool) {
	if string(f.eventType) != "chunk" {
		return nil, false
	}
	p := bytes.TrimSpace(f.payload)
	if len(p) == 0 || p[0] != '{' || !record.ValidJSON(p) {
		return nil, false
	}
	b64 := wire.Parse(p).Get("bytes")
	if b64.Type != gjson.String {
		return nil, false
	}
	out, err := base64.StdEncoding.DecodeString(b64.String())
	if err != nil {
		return nil, false
	}
	return out, true
}

// claudeChunks reads an InvokeModelWithResponseStream of Claude: each
// chunk is one event of Anthropic's Messages stream, read by the
// Anthropic provider.
type claudeChunks struct {
	events anthropic.Events
	exc    *exceptionFrame
}

func (c *claudeChunks) frame(f frame) bool {
	if exc, ok := exception(f); ok {
		c.exc = &exc
		return false
	}
	if data, ok := chunk(f); ok {
		return c.events.Add(data)
	}
	return true
}

func (c *claudeChunks) result(eof bool) providers.Result {
	res := c.events.Result(eof)
	res.Model = "" // the URL's model ID names it
	if c.exc != nil {
		keep := res.Outcome
		res.Outcome = record.Failure(c.exc.typ)
		res.Outcome.ResponseID, res.Outcome.FinishReason = keep.ResponseID, keep.FinishReason
		res.ErrorMessage, res.Finished = c.exc.msg, true
	}
	return res
}
