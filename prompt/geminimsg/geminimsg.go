// Package geminimsg maps assembled prompts and signature messages onto
// genai contents (google.golang.org/genai).
//
// It is a package of its own so that only the programs that build prompts
// for genai compile genai (and gRPC and cloud auth with it): the recorder
// and the prompt package link no SDK. See package prompt for the assembler
// and the adapters, and prompt/openaimsg for the go-openai mapping.
package geminimsg

import (
	"strings"

	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/prompt"
)

// PromptContents maps an assembled prompt onto a Gemini request, as the
// seven-section layout is laid out for Google: the System Prompt and the
// Assistant Identity as the system instruction
// ([prompt.Assembled.SystemText]), then one user content of the Requesting
// User, Conversation State / History, Constraints, Task and Input, in that
// order ([prompt.Assembled.UserText]). system is nil when both of its
// sections are hidden. Put it in GenerateContentConfig.SystemInstruction.
func PromptContents(a prompt.Assembled) (system *genai.Content, contents []*genai.Content) {
	if s := a.SystemText(); s != "" {
		system = genai.NewContentFromText(s, genai.RoleUser)
	}
	return system, []*genai.Content{genai.NewContentFromText(a.UserText(), genai.RoleUser)}
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
