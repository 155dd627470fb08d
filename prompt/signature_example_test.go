package prompt_test

import (
	"errors"
	"fmt"

	"github.com/llmhistory/llmhistory/prompt"
)

// exampleSignature answers a question, with the conversation so far.
func exampleSignature() prompt.Signature {
	return prompt.Signature{
		Instructions: "Answer the question in one sentence.",
		Inputs: []prompt.Field{
			{Name: "question", Description: "The user's question."},
			{Name: "history", Kind: prompt.KindHistory},
		},
		Outputs: []prompt.Field{{Name: "answer", Description: "A one-sentence answer."}},
	}
}

func printMessages(msgs []prompt.Message) {
	for _, m := range msgs {
		fmt.Printf("[%s]\n%s\n", m.Role, m.Content)
	}
}

// The line adapter renders each history element as a user message and an
// assistant message of "Label: value" lines, before the current request.
func ExampleLineAdapter() {
	msgs, err := prompt.LineAdapter{}.Format(exampleSignature(), nil, map[string]any{
		"question": "And in winter?",
		"history": prompt.History{Messages: []map[string]any{
			{"question": "What is the weather like in Lisbon in summer?", "answer": "Hot and dry."},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	printMessages(msgs)
	// Output:
	// [system]
	// Answer the question in one sentence.
	// [user]
	// Question: What is the weather like in Lisbon in summer?
	// [assistant]
	// Answer: Hot and dry.
	// [user]
	// Question: And in winter?
}

// The marker adapter follows Python DSPy's ChatAdapter: a system message
// describing the fields and the structure, "[[ ## field ## ]]" blocks, and
// "[[ ## completed ## ]]" closing each answer.
func ExampleMarkerAdapter() {
	msgs, err := prompt.MarkerAdapter{}.Format(exampleSignature(), nil, map[string]any{
		"question": "And in winter?",
		"History": &prompt.History{Messages: []map[string]any{
			{"Question": "What is the weather like in Lisbon in summer?", "Answer": "Hot and dry."},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	printMessages(msgs)
	// Output:
	// [system]
	// Your input fields are:
	// 1. `question`: The user's question.
	// Your output fields are:
	// 1. `answer`: A one-sentence answer.
	//
	// All interactions will be structured in the following way, with the appropriate values filled in.
	//
	// [[ ## question ## ]]
	// {question}
	//
	// [[ ## answer ## ]]
	// {answer}
	//
	// [[ ## completed ## ]]
	//
	// In adhering to this structure, your objective is:
	//         Answer the question in one sentence.
	// [user]
	// [[ ## question ## ]]
	// What is the weather like in Lisbon in summer?
	// [assistant]
	// [[ ## answer ## ]]
	// Hot and dry.
	//
	// [[ ## completed ## ]]
	// [user]
	// [[ ## question ## ]]
	// And in winter?
	//
	// Respond with the corresponding output fields, starting with the field `[[ ## answer ## ]]`, and then ending with the marker for `[[ ## completed ## ]]`.
}

// An invalid history element fails the call with a *HistoryError that
// carries the element's index.
func ExampleHistoryError() {
	_, err := prompt.JSONAdapter{}.Format(exampleSignature(), nil, map[string]any{
		"question": "And in winter?",
		"history":  prompt.History{Messages: []map[string]any{{"question": "Hi", "answer": "Hello."}, {"question": "Lisbon?"}}},
	})
	var he *prompt.HistoryError
	if errors.As(err, &he) {
		fmt.Println(errors.Is(err, prompt.ErrInvalidHistoryElement), he.Index)
		fmt.Println(err)
	}
	// Output:
	// true 1
	// prompt: invalid_history_element: field "history" element 1: no signature output field (want one of answer)
}
