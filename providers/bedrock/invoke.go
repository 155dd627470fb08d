package bedrock

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// The InvokeModel bodies of the model families other than Claude's
// Messages, as Bedrock's model parameter pages give them. Each family has
// its own shape; what a record needs of it is read from the fields they
// use:
//
//	output text     generation (Meta Llama), outputText and results[].outputText (Amazon Titan),
//	                outputs[].text (Mistral), output.message.content[].text (Amazon Nova),
//	                choices[].message.content or .delta.content (OpenAI's gpt-oss),
//	                text and generations[].text (Cohere), completion (Claude's legacy Text Completions)
//	finish reason   stop_reason, completionReason, stopReason, finish_reason, in the same places
//	usage           the one reader's fields: prompt_token_count and generation_token_count
//	                (Llama), inputTextTokenCount and tokenCount (Titan), usage (Nova, gpt-oss),
//	                and a stream's amazon-bedrock-invocationMetrics, which every family's last
//	                chunk carries and which ends the stream

// modelOutput assembles another model's answer, whole or from its stream's
// chunks.
type modelOutput struct {
	answer   convert.Builder
	reason   string
	usage    wire.UsageReader
	finished bool
	outputs  int // tokenCount summed over Titan's results, when it has them
	titan    bool
	exc      *exceptionFrame
}

// readModelOutput reads a whole InvokeModel answer of a model that is not
// Claude's Messages.
func readModelOutput(resp *providers.Response) providers.Result {
	body := bytes.TrimSpace(resp.Body)
	m := &modelOutput{}
	switch {
	case resp.Truncated:
		// Usage and stop reasons come last in most shapes.
		for _, key := range [...]string{`"usage"`, `"amazon-bedrock-invocationMetrics"`} {
			if v := wire.LastValue(resp.Tail, key); len(v) > 0 && v[0] == '{' {
				m.usage.Read(wire.Parse(v))
			}
		}
		res := m.result(false)
		res.Finished = false
		return res
	case len(body) == 0:
		return providers.Result{Outcome: record.Success(ClassModelOutput)}
	case !record.ValidJSON(body):
		return wire.Undecodable(body)
	}
	m.object(wire.Parse(body))
	m.finished = true // a whole body is the whole answer
	return m.result(false)
}

// object reads one object: a whole answer, or one chunk of a stream.
func (m *modelOutput) object(root gjson.Result) {
	if !root.IsObject() {
		return
	}
	m.usage.Read(root) // Llama's and Titan's counts are top-level fields
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "generation", "outputText", "completion", "text":
			if v.Type == gjson.String {
				m.answer.Text(v.String())
			}
		case "stop_reason", "completionReason", "stopReason", "finish_reason":
			m.setReason(v)
		case "results", "outputs", "generations", "choices":
			v.ForEach(func(_, r gjson.Result) bool {
				m.result1(r)
				return true
			})
		case "output":
			// Amazon Nova: a Converse message.
			blocks(v.Get("message.content"), &m.answer)
		case "usage":
			m.usage.Read(v)
		case "amazon-bedrock-invocationMetrics":
			// The last chunk of every family's stream: Bedrock's own
			// counts, and the end.
			m.usage.Read(v)
			m.finished = true
		// Amazon Nova's stream: Converse's events, each as one chunk.
		case "contentBlockDelta":
			if t := v.Get("delta.text"); t.Type == gjson.String {
				m.answer.Text(t.String())
			}
		case "messageStop":
			m.setReason(v.Get("stopReason"))
			m.finished = true
		case "metadata":
			m.usage.Read(v.Get("usage"))
		}
		return true
	})
}

// result1 reads one element of a list of results, outputs, generations
// or choices.
func (m *modelOutput) result1(r gjson.Result) {
	r.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "outputText", "text":
			if v.Type == gjson.String {
				m.answer.Text(v.String())
			}
		case "message", "delta":
			if c := v.Get("content"); c.Type == gjson.String {
				m.answer.Text(c.String())
			}
		case "stop_reason", "completionReason", "finish_reason", "finishReason":
			m.setReason(v)
		case "tokenCount":
			// Titan's output tokens, per result.
			if n, ok := count(v); ok {
				m.outputs += n
				m.titan = true
			}
		}
		return true
	})
}

func (m *modelOutput) setReason(v gjson.Result) {
	if v.Type == gjson.String && v.Str != "" {
		m.reason = v.String()
	}
}

// count reads a token count as the usage reader would.
func count(v gjson.Result) (int, bool) {
	if v.Type != gjson.Number {
		return 0, false
	}
	n, err := strconv.Atoi(v.Raw)
	return n, err == nil && n >= 0 && n <= wire.MaxTokenCount
}

func (m *modelOutput) result(eof bool) providers.Result {
	if m.titan {
		var b []byte
		b = append(b, `{"outputTokenCount":`...)
		b = strconv.AppendInt(b, int64(m.outputs), 10)
		m.usage.Read(wire.Parse(append(b, '}')))
	}
	res := providers.Result{
		Outcome:  record.Success(ClassModelOutput),
		Output:   m.answer.Message(nil),
		Finished: m.finished || m.exc != nil,
	}
	m.usage.Into(&res)
	res.Outcome.FinishReason = m.reason
	if m.exc != nil {
		res.Outcome = record.Failure(m.exc.typ)
		res.Outcome.FinishReason = m.reason
		res.ErrorMessage = m.exc.msg
		return res
	}
	if eof && !res.Finished {
		wire.Unfinished(&res, "the stream ended without its invocation metrics")
	}
	return res
}

// modelChunks reads an InvokeModelWithResponseStream of a model that is
// not Claude's Messages: each chunk is one of the family's own JSON
// events.
type modelChunks struct{ m modelOutput }

func (c *modelChunks) frame(f frame) bool {
	if exc, ok := exception(f); ok {
		c.m.exc = &exc
		return false
	}
	if data, ok := chunk(f); ok {
		c.m.object(wire.Parse(data))
	}
	return true
}

func (c *modelChunks) result(eof bool) providers.Result { return c.m.result(eof) }
