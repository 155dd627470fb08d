// Package providertest holds what the built-in providers' tests share in
// reading what a provider made of a body: the answer's tool calls and
// refusal, as their tests compare them, and the check that an answer and
// the copy of it the next request sends back are one message
// ([SentBack]).
package providertest

import (
	"strconv"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// Calls returns the tool calls of an answer, their arguments as text
// (canonical JSON, or the text the model wrote when it is not JSON); nil
// when it has none.
func Calls(m record.Message) []providers.ToolCall {
	var out []providers.ToolCall
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Type == record.PartToolCall {
			out = append(out, providers.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.ArgumentsText()})
		}
	}
	return out
}

// Refusal returns the text of an answer's refusals.
func Refusal(m record.Message) string {
	var s string
	for _, p := range m.Parts {
		if p.Type == record.PartRefusal {
			s += p.Content
		}
	}
	return s
}

// SentBack checks the one meaning of a message across a turn: the answer
// first's record kept, converted into the message model from the
// response, is the same message, byte for byte, as the element of
// second's args that the caller sent it back as (the one right after
// first's own messages). It returns what differs, "" when nothing does.
func SentBack(first, second record.Record) string {
	if first.Output == nil {
		return "the first record kept no answer"
	}
	n := len(record.Messages(first.Args))
	msgs := record.Messages(second.Args)
	if len(msgs) <= n {
		return "the second call sent " + strconv.Itoa(len(msgs)) + " messages, not more than the first's " + strconv.Itoa(n)
	}
	var got []byte
	i := 0
	record.EachValidElement(second.Args, func(el []byte) bool {
		if i == n {
			got = el
			return false
		}
		i++
		return true
	})
	want := first.Output.AppendJSON(nil)
	if string(got) != string(want) {
		return "the answer kept:\n  " + string(want) + "\nthe message sent back:\n  " + string(got)
	}
	return ""
}
