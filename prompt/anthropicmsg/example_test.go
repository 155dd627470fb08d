package anthropicmsg_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/prompt/anthropicmsg"
)

func ExampleSignatureMessages() {
	sig := prompt.Signature{
		Instructions: "Answer in one word.",
		Inputs:       []prompt.Field{{Name: "question"}, {Name: "history", Kind: prompt.KindHistory}},
		Outputs:      []prompt.Field{{Name: "answer"}},
	}
	msgs, _ := prompt.LineAdapter{}.Format(sig, nil, map[string]any{
		"question": "And the sky?",
		"history":  prompt.History{Messages: []map[string]any{{"question": "Colour of grass?", "answer": "Green"}}},
	})
	system, messages := anthropicmsg.SignatureMessages(msgs)
	fmt.Println("system:", system[0].Text)
	for _, m := range messages {
		fmt.Printf("%s: %s\n", m.Role, m.Content[0].OfText.Text)
	}
	// Output:
	// system: Answer in one word.
	// user: Question: Colour of grass?
	// assistant: Answer: Green
	// user: Question: And the sky?
}
