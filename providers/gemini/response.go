package gemini

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// ParseResponse reads a response: an error body, a GenerateContentResponse,
// a stream of them, or the answer of countTokens, embedContent or
// batchEmbedContents.
func (Provider) ParseResponse(call *providers.Call, resp *providers.Response) providers.Result {
	var method string
	if call != nil {
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
		return errorResult(resp.StatusCode, resp.Body)
	}
	a := assembler{class: valueClass(method), scratch: resp.Scratch}
	a.answer.Lend(a.scratch)
	body := bytes.TrimSpace(resp.Body)
	switch {
	case len(body) > 0 && body[0] == '[':
		// streamGenerateContent without alt=sse: a JSON array of responses.
		if !resp.Truncated && record.ValidJSON(body) {
			wire.Parse(body).ForEach(func(_, v gjson.Result) bool {
				a.chunk(v, wire.View(v.Raw))
				return !a.failed
			})
		} else {
			a.tail(resp.Tail)
		}
	case resp.Stream:
		a.scan(resp.Body)
		if resp.Truncated {
			// The tail starts mid-event: read it from its first frame on.
			if i := wire.FrameStart(resp.Tail); i >= 0 {
				a.scan(resp.Tail[i:])
			}
		}
	case resp.Truncated:
		a.tail(resp.Tail)
	case len(body) > 0 && record.ValidJSON(body):
		a.chunk(wire.Parse(body), body)
		if a.class != classGenerate {
			a.finished = true // countTokens and embeddings have no finish reason
		}
	}
	if a.chunks == 0 && !resp.Truncated && len(body) > 0 {
		// Bytes, but no response in them: genai fails to decode this.
		if resp.Stream {
			return wire.NotJSON(len(body))
		}
		return wire.Undecodable(body)
	}
	res := a.result()
	if resp.Stream && resp.EOF && !a.finished && res.Outcome.OK && a.class == classGenerate {
		// A stream's last chunk carries the finish reason; without it the
		// body ended early (there is no other end marker).
		wire.Unfinished(&res, "the stream ended without a finish reason")
	}
	return res
}

// valueClass is what a successful call of a method returns.
func valueClass(method string) string {
	switch method {
	case MethodCountTokens:
		return "count_tokens_response"
	case MethodEmbedContent:
		return "embed_content_response"
	case MethodBatchEmbedContents:
		return "batch_embed_contents_response"
	}
	return classGenerate
}

const classGenerate = "generate_content_response"

// errorResult reads an error body, {"error": {code, message, status,
// details}}.
func errorResult(status int, body []byte) providers.Result {
	typ, msg := providers.ClassifyError(status, body)
	return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
}

// The enums the parser reads, by number: clients built on the older
// generative-ai-go REST client (langchaingo's googleai among them) ask for
// enum-encoding=int, and get "finishReason": 1 for STOP. The numbers are
// the proto's (google.ai.generativelanguage.v1beta), not the order in
// which the names are listed there: OTHER is 5 and LANGUAGE 6.
var (
	finishReasons = [...]string{
		0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY",
		4: "RECITATION", 5: "OTHER", 6: "LANGUAGE", 7: "BLOCKLIST",
		8: "PROHIBITED_CONTENT", 9: "SPII", 10: "MALFORMED_FUNCTION_CALL", 11: "IMAGE_SAFETY",
	}
	blockReasons = [...]string{
		0: "BLOCK_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER", 3: "BLOCKLIST",
		4: "PROHIBITED_CONTENT", 5: "IMAGE_SAFETY",
	}
)

// enumName reads an enum sent as its name or as its number. An unknown
// number is kept as written, so that nothing is made up; zero (unset in
// proto3) and anything else give "".
func enumName(v gjson.Result, names []string) string {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Number:
		n := v.Int()
		switch {
		case n == 0 || float64(n) != v.Num:
			return ""
		case n > 0 && n < int64(len(names)):
			return names[n]
		}
		return v.Raw
	}
	return ""
}

// blocked reports whether a finish reason means a filter stopped the
// answer.
func blocked(reason string) bool {
	switch reason {
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return true
	}
	return false
}

// assembler builds a Result from one GenerateContentResponse or from the
// chunks of a stream. The strings it holds are views into the body until
// wire.Detach copies them.
type assembler struct {
	class    string
	res      providers.Result
	answer   convert.Builder  // the first candidate's parts, a stream's run together
	scratch  *[]byte          // the recorder's buffer for text, if it lends one
	usage    wire.UsageReader // cumulative in a stream: the last counts
	reason   string           // the first candidate's finish reason
	block    string           // the prompt feedback's block reason
	blockMsg string
	finished bool
	failed   bool
	chunks   int // JSON responses read
}

// scan reads the events of a server-sent stream: each "data:" line holds a
// GenerateContentResponse; an error in the middle of the stream comes as
// a bare JSON object, not an SSE field.
func (a *assembler) scan(b []byte) {
	wire.ScanSSE(b, func(ev wire.Event) bool {
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			data = bytes.TrimSpace(ev.Raw)
		}
		if len(data) == 0 || data[0] != '{' || !record.ValidJSON(data) {
			return true
		}
		a.chunk(wire.Parse(data), data)
		return !a.failed
	})
}

// chunk reads one GenerateContentResponse, or an object holding an error,
// raw being its bytes, in one pass over its top level.
func (a *assembler) chunk(root gjson.Result, raw []byte) {
	a.chunks++
	var candidates, usage, feedback, errObj gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "candidates":
			candidates = v
		case "usageMetadata":
			usage = v
		case "promptFeedback":
			feedback = v
		case "modelVersion":
			if v.Type == gjson.String {
				a.res.Model = v.String()
			}
		case "responseId":
			if v.Type == gjson.String {
				a.res.Outcome.ResponseID = v.String()
			}
		case "error":
			errObj = v
		}
		return true
	})
	if errObj.IsObject() {
		a.fail(errObj, raw)
		return
	}
	a.usage.Read(usage)
	if feedback.IsObject() {
		feedback.ForEach(func(k, v gjson.Result) bool {
			switch k.String() {
			case "blockReason":
				a.block = enumName(v, blockReasons[:])
			case "blockReasonMessage":
				a.blockMsg = v.String()
			}
			return true
		})
	}
	candidates.ForEach(func(_, c gjson.Result) bool {
		return !a.candidate(c)
	})
}

// candidate reads a candidate if it is the first (index 0, which proto3
// JSON leaves out), and reports whether it was.
func (a *assembler) candidate(c gjson.Result) bool {
	var content, reason gjson.Result
	first := true
	c.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "content":
			content = v
		case "finishReason":
			reason = v
		case "index":
			first = v.Int() == 0
		}
		return true
	})
	if !first {
		return false
	}
	if r := enumName(reason, finishReasons[:]); r != "" {
		a.reason, a.finished = r, true
	}
	content.Get("parts").ForEach(func(_, p gjson.Result) bool {
		part(p, &a.answer)
		return true
	})
	return true
}

// fail ends the outcome with an error object the response carried: the
// bare JSON error Gemini sends in the middle of a 200 stream. Its code
// stands for the HTTP status the error would have had.
func (a *assembler) fail(errObj gjson.Result, raw []byte) {
	status := 500
	if code := errObj.Get("code").Int(); code >= 400 && code < 600 {
		status = int(code)
	}
	typ, msg := providers.ClassifyError(status, raw) // raw is {"error": ...}
	id := a.res.Outcome.ResponseID
	a.res.Outcome = record.Failure(typ)
	a.res.Outcome.ResponseID = id
	a.res.ErrorMessage = msg
	a.failed, a.finished = true, true
}

// tail reads what the end of a body cut by the recorder still holds: the
// usage, model, response id and finish reason come after the candidates'
// content, so a long answer (an inline image) keeps them there. The last
// occurrence of each key is the top level's, which ends the body.
func (a *assembler) tail(b []byte) {
	if v := wire.LastValue(b, `"usageMetadata"`); len(v) > 0 && v[0] == '{' {
		a.usage.Read(wire.Parse(v))
	}
	if v := wire.LastValue(b, `"modelVersion"`); len(v) > 0 && v[0] == '"' {
		a.res.Model = wire.Parse(v).String()
	}
	if v := wire.LastValue(b, `"responseId"`); len(v) > 0 && v[0] == '"' {
		a.res.Outcome.ResponseID = wire.Parse(v).String()
	}
	if v := wire.LastValue(b, `"finishReason"`); len(v) > 0 {
		if r := enumName(wire.Parse(v), finishReasons[:]); r != "" {
			a.reason, a.finished = r, true
		}
	}
}

// result settles the outcome.
func (a *assembler) result() providers.Result {
	res := a.res
	res.Finished = a.finished
	a.usage.Into(&res)
	res.Output = a.answer.Message(a.scratch) // the parts of a stream's chunks, run together
	switch {
	case a.failed:
		// fail set the outcome.
	case a.block != "":
		res.Outcome = record.Failure(record.ErrorContentFilter)
		res.ErrorMessage = "prompt blocked: " + a.block
		if a.blockMsg != "" {
			res.ErrorMessage += " (" + a.blockMsg + ")"
		}
		res.Finished = true
	case blocked(a.reason):
		res.Outcome = record.Failure(record.ErrorContentFilter)
		res.ErrorMessage = "blocked: " + a.reason
	default:
		res.Outcome = record.Success(a.class)
	}
	res.Outcome.ResponseID = a.res.Outcome.ResponseID
	res.Outcome.FinishReason = a.reason
	return res
}
