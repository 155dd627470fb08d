// Package providertest holds what the built-in providers' tests share in
// reading what a provider made of a body: the answer's tool calls and
// refusal, as their tests compare them.
package providertest

import (
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
