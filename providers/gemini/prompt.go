package gemini

import (
	"strings"

	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/prompt"
)

// PromptContents maps an assembled prompt onto a Gemini request, as the
// prompt assembly framework v2 lays out for Google: the System Prompt and
// the Assistant Identity as the system instruction, then one user content
// of the Requesting User, Conversation State / History, Constraints, Task
// and Input, in that order. system is nil when both are hidden. Put it in
// GenerateContentConfig.SystemInstruction.
func PromptContents(a prompt.Assembled) (system *genai.Content, contents []*genai.Content) {
	if s := joinSections(a.Sections.SystemPrompt, a.Sections.Identity); s != "" {
		system = genai.NewContentFromText(s, genai.RoleUser)
	}
	user := joinSections(a.Sections.RequestingUser, a.Sections.ConversationState,
		a.Sections.Constraints, a.Sections.Task, a.Sections.Input)
	return system, []*genai.Content{genai.NewContentFromText(user, genai.RoleUser)}
}

// SignatureContents maps the messages a signature adapter formatted onto
// a Gemini request: a system message becomes the system instruction, user
// messages user contents, and assistant messages contents of the role
// "model", in order.
func SignatureContents(msgs []prompt.Message) (system *genai.Content, contents []*genai.Content) {
	var sys []string
	for _, m := range msgs {
		switch m.Role {
		case prompt.RoleSystem:
			sys = append(sys, m.Content)
		case prompt.RoleAssistant:
			contents = append(contents, genai.NewContentFromText(m.Content, genai.RoleModel))
		default:
			contents = append(contents, genai.NewContentFromText(m.Content, genai.RoleUser))
		}
	}
	if len(sys) > 0 {
		system = genai.NewContentFromText(strings.Join(sys, "\n\n"), genai.RoleUser)
	}
	return system, contents
}

func joinSections(sections ...string) string {
	shown := sections[:0:0]
	for _, s := range sections {
		if s != "" {
			shown = append(shown, s)
		}
	}
	return strings.Join(shown, "\n\n")
}
