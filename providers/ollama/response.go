package ollama

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// Value classes of a successful call.
const (
	ClassMessage    = "message"    // a chat's answer
	ClassCompletion = "completion" // a generate's answer
	ClassEmbeddings = "embeddings" // an embed's vectors
)

func valueClass(method string) string {
	switch method {
	case MethodGenerate:
		return ClassCompletion
	case MethodEmbed:
		return ClassEmbeddings
	}
	return ClassMessage
}

// ParseResponse reads a response: an error, one JSON object, or a stream
// of them, one a line.
func (Provider) ParseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	method := MethodChat
	if call != nil && call.MethodName != "" {
		method = call.MethodName
	}
	res := parseResponse(method, resp)
	wire.Detach(&res)
	return res
}

func parseResponse(method string, resp *providers.Response) providers.Result {
	if resp == nil {
		return providers.Result{Outcome: record.Success(valueClass(method))}
	}
	if resp.StatusCode >= 400 {
		typ, msg := classify(resp.StatusCode, resp.Body)
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
	}
	a := &answer{class: valueClass(method)}
	body := bytes.TrimSpace(resp.Body)
	switch {
	case resp.Truncated:
		a.lines(resp.Body, false)
		if i := bytes.IndexByte(resp.Tail, '\n'); i >= 0 && !a.failed {
			a.lines(resp.Tail[i+1:], true) // the tail starts mid-line
		} else if !a.failed {
			a.tail(resp.Tail)
		}
	case len(body) == 0:
		// Nothing: read to its end, nothing said the answer was whole.
	case record.ValidJSON(body):
		// One object: an answer not streamed, or a stream of one line.
		a.object(wire.Parse(body), body)
	default:
		if a.lines(resp.Body, true); a.objects == 0 {
			if method == MethodEmbed || !resp.EOF {
				return wire.Undecodable(body)
			}
			return wire.NotJSON(len(resp.Body))
		}
	}
	res := a.result()
	if resp.EOF && !res.Finished && res.Outcome.OK {
		// Read to its end without "done": true: nothing told the caller it
		// had the whole answer.
		wire.Unfinished(&res, `the stream ended without "done": true`)
	}
	return res
}

// answer assembles an answer from its objects: one, or a stream's lines.
// Its strings are views into the body until wire.Detach copies them; the
// text is built in a buffer of its own.
type answer struct {
	class    string
	model    string
	reason   string          // done_reason
	answer   convert.Builder // the message, or a stream's pieces of it run together
	usage    wire.UsageReader
	objects  int
	done     bool
	failed   bool
	errType  string
	errMsg   string
	embedded bool // an embed's answer: whole when it is one object
}

// lines reads newline-delimited JSON objects. A line that is not one (the
// last, cut off) is skipped: the stream's end decides.
func (a *answer) lines(b []byte, last bool) {
	for len(b) > 0 && !a.failed {
		line := b
		i := bytes.IndexByte(b, '\n')
		if i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
			if !last {
				break // the head of a cut capture ends mid-line
			}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' || !record.ValidJSON(line) {
			continue
		}
		a.object(wire.Parse(line), line)
	}
}

// object reads one object of an answer: a whole chat, generate or embed
// answer, or one line of a stream. {"error": ...} ends it as a failure.
func (a *answer) object(root gjson.Result, raw []byte) {
	if !root.IsObject() {
		return
	}
	a.objects++
	if e := root.Get("error"); e.Exists() {
		typ, msg := classify(500, raw)
		a.failed, a.errType, a.errMsg = true, typ, msg
		return
	}
	a.usage.Read(root) // prompt_eval_count and eval_count are top-level
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "model":
			if v.Type == gjson.String {
				a.model = v.Str
			}
		case "message":
			a.message(v)
		case "response":
			if v.Type == gjson.String {
				a.answer.Text(v.String())
			}
		case "thinking":
			if v.Type == gjson.String {
				a.answer.Reasoning(v.String())
			}
		case "done":
			a.done = a.done || v.Type == gjson.True
		case "done_reason":
			if v.Type == gjson.String {
				a.reason = v.Str
			}
		case "embeddings", "embedding":
			a.embedded = true
		}
		return true
	})
}

// message reads a chat message (or a stream's piece of one), as a
// request's message is read (parts).
func (a *answer) message(m gjson.Result) { parts(m, &a.answer) }

// tail reads what the tail of a body the capture cut still holds when it
// is one long object (an embed's vectors): the counts come last.
func (a *answer) tail(b []byte) {
	var obj []byte
	for _, key := range [...]string{"prompt_eval_count", "eval_count"} {
		if v := wire.LastValue(b, `"`+key+`"`); len(v) > 0 {
			if len(obj) == 0 {
				obj = append(obj, '{')
			} else {
				obj = append(obj, ',')
			}
			obj = strconv.AppendQuote(obj, key)
			obj = append(obj, ':')
			obj = append(obj, v...)
		}
	}
	if len(obj) > 0 {
		a.usage.Read(wire.Parse(append(obj, '}')))
	}
	if v := wire.LastValue(b, `"done_reason"`); len(v) > 0 && v[0] == '"' {
		a.reason = wire.Parse(v).String()
	}
	if v := wire.LastValue(b, `"done"`); string(v) == "true" {
		a.done = true
	}
	if t := bytes.TrimSpace(b); a.class == ClassEmbeddings && len(t) > 0 && t[len(t)-1] == '}' {
		// An embed's answer has no "done": one that ends as its object
		// does is whole.
		a.embedded, a.objects = true, a.objects+1
	}
}

func (a *answer) result() providers.Result {
	res := providers.Result{
		Outcome: record.Success(a.class),
		Model:   a.model,
		Output:  a.answer.Message(nil),
		// An embed's answer has no "done": a whole object is the end.
		Finished: a.done || a.failed || a.embedded && a.objects > 0,
	}
	a.usage.Into(&res)
	if a.failed {
		res.Outcome = record.Failure(a.errType)
		res.ErrorMessage = a.errMsg
	}
	res.Outcome.FinishReason = a.reason
	return res
}

// classify reads an Ollama error, {"error": "message"}: the HTTP status
// gives its type (404 for a model that is not pulled, 400 for a bad
// request), which the message refines where it is plain: an input longer
// than the model's context.
func classify(status int, body []byte) (errorType, message string) {
	errorType, message = providers.ClassifyError(status, body)
	m := strings.ToLower(message)
	switch {
	case strings.Contains(m, "context length"), strings.Contains(m, "context window"):
		errorType = record.ErrorContextLength
	case strings.Contains(m, "not found") && strings.Contains(m, "model"):
		errorType = record.ErrorNotFound
	}
	return errorType, message
}
