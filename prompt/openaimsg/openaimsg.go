// Package openaimsg maps assembled prompts and signature messages onto
// go-openai chat messages (github.com/sashabaranov/go-openai).
//
// It is a package of its own so that only the programs that build prompts
// for go-openai compile go-openai: the recorder and the prompt package
// link no SDK. See package prompt for the assembler and the adapters, and
// prompt/geminimsg for the genai mapping.
package openaimsg

import (
	goopenai "github.com/sashabaranov/go-openai"

	"github.com/llmhistory/llmhistory/prompt"
)

// PromptMessages maps an assembled prompt onto chat messages, as the
// seven-section layout is laid out for OpenAI: a system message of the
// System Prompt and the Assistant Identity ([prompt.Assembled.SystemText]),
// then one user message of the Requesting User, Conversation State /
// History, Constraints, Task and Input, in that order
// ([prompt.Assembled.UserText]). Hidden sections are left out, and so is
// the system message when both of its sections are.
func PromptMessages(a prompt.Assembled) []goopenai.ChatCompletionMessage {
	var msgs []goopenai.ChatCompletionMessage
	if system := a.SystemText(); system != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	return append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: a.UserText()})
}

// SignatureMessages maps the messages a signature adapter formatted (the
// system message, demos, history pairs and the current request) onto chat
// messages, role for role.
func SignatureMessages(msgs []prompt.Message) []goopenai.ChatCompletionMessage {
	out := make([]goopenai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	return out
}
