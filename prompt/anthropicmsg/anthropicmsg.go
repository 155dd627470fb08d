// Package anthropicmsg maps assembled prompts and signature messages onto
// the Anthropic SDK's request values (github.com/anthropics/anthropic-sdk-go).
//
// It is a package of its own so that only the programs that build prompts
// for the Anthropic SDK compile it: the recorder and the prompt package
// link no SDK. See package prompt for the assembler and the adapters.
package anthropicmsg

import (
	"github.com/anthropics/anthropic-sdk-go"

	"github.com/llmhistory/llmhistory/prompt"
)

// PromptMessages maps an assembled prompt onto a Messages API request, as
// the seven-section layout is laid out for Anthropic: the System Prompt
// and the Assistant Identity as the system prompt
// ([prompt.Assembled.SystemText]; nil when both are hidden), then one user
// message of the Requesting User, Conversation State / History,
// Constraints, Task and Input, in that order ([prompt.Assembled.UserText]).
// Put them in MessageNewParams.System and .Messages.
func PromptMessages(a prompt.Assembled) (system []anthropic.TextBlockParam, messages []anthropic.MessageParam) {
	if s := a.SystemText(); s != "" {
		system = []anthropic.TextBlockParam{{Text: s}}
	}
	return system, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(a.UserText()))}
}

// SignatureMessages maps the messages a signature adapter formatted onto a
// Messages API request: system messages become the system prompt (the API
// has no system role in its messages), user and assistant messages keep
// their roles, in order.
func SignatureMessages(msgs []prompt.Message) (system []anthropic.TextBlockParam, messages []anthropic.MessageParam) {
	for _, m := range msgs {
		switch m.Role {
		case prompt.RoleSystem:
			system = append(system, anthropic.TextBlockParam{Text: m.Content})
		case prompt.RoleAssistant:
			messages = append(messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		default:
			messages = append(messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		}
	}
	return system, messages
}
