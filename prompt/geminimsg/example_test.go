package geminimsg_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/prompt/geminimsg"
)

func ExampleSignatureContents() {
	sig := prompt.Signature{
		Instructions: "Answer in one word.",
		Inputs:       []prompt.Field{{Name: "question"}, {Name: "history", Kind: prompt.KindHistory}},
		Outputs:      []prompt.Field{{Name: "answer"}},
	}
	msgs, _ := prompt.LineAdapter{}.Format(sig, nil, map[string]any{
		"question": "And the sky?",
		"history":  prompt.History{Messages: []map[string]any{{"question": "Colour of grass?", "answer": "Green"}}},
	})
	system, contents := geminimsg.SignatureContents(msgs)
	fmt.Println("system:", system.Parts[0].Text)
	for _, c := range contents {
		fmt.Printf("%s: %s\n", c.Role, c.Parts[0].Text)
	}
	// Output:
	// system: Answer in one word.
	// user: Question: Colour of grass?
	// model: Answer: Green
	// user: Question: And the sky?
}
