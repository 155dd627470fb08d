package prompt_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/prompt"
)

func ExampleAssemble() {
	a, err := prompt.Assemble(prompt.Spec{
		SystemPrompt: &prompt.SystemPrompt{Rules: []string{"Answer from the recorded history only."}},
		ConversationState: &prompt.ConversationState{
			Summary: "The user asked for last week's failures.",
			Transcript: []prompt.ConversationStateItem{
				{Role: "user", Content: "How many calls failed?"},
				{Role: "assistant", Content: "Three, all rate limits."},
			},
			RenderMode: prompt.RenderBoth,
		},
		Constraints: []prompt.Constraint{{Text: "Be brief."}},
		Task:        []prompt.TaskAnnotation{{Instruction: "Answer the question."}},
		Input:       prompt.InputPayload{UserQuery: "Which methods?"},
	}, prompt.Config{HideEmptySections: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Text)
	// Output:
	// ## [System Prompt]
	// - (1) Answer from the recorded history only.
	//
	// ## [Conversation State / History]
	// - The user asked for last week's failures.
	// ~~~text
	// U: How many calls failed?
	// A: Three, all rate limits.
	// ~~~
	//
	// ## [Constraints]
	// - (1) Be brief.
	//
	// ## [Task]
	// - (1) Answer the question.
	//
	// ## [Input]
	// ~~~text
	// Which methods?
	// ~~~
}

func ExampleAssemble_budget() {
	spec := prompt.Spec{
		ConversationState: &prompt.ConversationState{
			Transcript: []prompt.ConversationStateItem{
				{Role: "user", Content: "first question, long ago"},
				{Role: "assistant", Content: "first answer"},
				{Role: "user", Content: "second question"},
			},
			RenderMode: prompt.RenderTranscript,
		},
		Task:  []prompt.TaskAnnotation{{Instruction: "Answer."}},
		Input: prompt.InputPayload{UserQuery: "third question"},
	}
	a, err := prompt.Assemble(spec, prompt.Config{HideEmptySections: true, Budget: prompt.Budget{MaxChars: 160}})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Sections.ConversationState)
	for _, d := range a.Meta.Decisions {
		fmt.Println(d.Section, "-", d.Action)
	}
	// Output:
	// ## [Conversation State / History]
	// ~~~text
	// (last 1 exchanges, truncated)
	// U: second question
	// ~~~
	// Conversation State / History - dropped transcript item
	// Conversation State / History - dropped transcript item
}
