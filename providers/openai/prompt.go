package openai

import (
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/llmhistory/llmhistory/prompt"
)

// PromptMessages maps an assembled prompt onto chat messages, as the
// prompt assembly framework v2 lays out for OpenAI: a system message of
// the System Prompt and the Assistant Identity, then one user message of
// the Requesting User, Conversation State / History, Constraints, Task and
// Input, in that order. Hidden sections are left out.
func PromptMessages(a prompt.Assembled) []goopenai.ChatCompletionMessage {
	system := joinSections(a.Sections.SystemPrompt, a.Sections.Identity)
	user := joinSections(a.Sections.RequestingUser, a.Sections.ConversationState,
		a.Sections.Constraints, a.Sections.Task, a.Sections.Input)
	var msgs []goopenai.ChatCompletionMessage
	if system != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	return append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: user})
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

// joinSections joins the sections that are shown with a blank line, as
// the assembled text does.
func joinSections(sections ...string) string {
	shown := sections[:0:0]
	for _, s := range sections {
		if s != "" {
			shown = append(shown, s)
		}
	}
	return strings.Join(shown, "\n\n")
}
