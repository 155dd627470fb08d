package openaimsg_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/prompt/openaimsg"
)

func ExamplePromptMessages() {
	a, _ := prompt.Assemble(prompt.Spec{
		Identity: &prompt.Identity{Summary: "Support engineer"},
		Task:     []prompt.TaskAnnotation{{Instruction: "Explain the 429."}},
		Input:    prompt.InputPayload{UserQuery: "Why was I rate limited?"},
	}, prompt.Config{HideEmptySections: true})
	for _, m := range openaimsg.PromptMessages(a) {
		fmt.Printf("%s:\n%s\n", m.Role, m.Content)
	}
	// Output:
	// system:
	// ## [Assistant Identity]
	// - Role: Support engineer
	// user:
	// ## [Task]
	// - (1) Explain the 429.
	//
	// ## [Input]
	// ~~~text
	// Why was I rate limited?
	// ~~~
}
