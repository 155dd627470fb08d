package prompt_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/record"
)

// Recorded history back into a prompt: the records of one conversation
// (rec.History().Trace(id)), their messages and the answers the recorder
// kept, become its Conversation State / History section.
func ExampleStateFromRecords() {
	answer := record.TextMessage(record.RoleAssistant, "Three, all rate limits on gemini.models.generateContent.")
	trace := []record.Record{
		{
			CallID: "c1", TraceID: "conversation-42", Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			Args:       record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, "Which calls failed today?")}),
			Outcome:    record.Success("chat.completion"),
			Output:     &answer,
		},
		{
			CallID: "c2", TraceID: "conversation-42", Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			Args: record.AppendMessages(nil, []record.Message{
				record.TextMessage(record.RoleUser, "Which calls failed today?"),
				answer,
				record.TextMessage(record.RoleUser, "Were they retried?")}),
			Outcome:   record.Failure(record.ErrorRateLimit),
			ErrorType: record.ErrorRateLimit,
		},
	}
	state := prompt.StateFromRecords(trace, prompt.Retention{MaxMessages: 8})
	a, err := prompt.Assemble(prompt.Spec{
		ConversationState: &state,
		Task:              []prompt.TaskAnnotation{{Instruction: "Answer from the history."}},
		Input:             prompt.InputPayload{UserQuery: "Were they retried?"},
	}, prompt.Config{HideEmptySections: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Sections.ConversationState)
	// Output:
	// ## [Conversation State / History]
	// - Recorded calls in this conversation: 2 (1 failed)
	// ~~~text
	// U: Which calls failed today?
	// A: Three, all rate limits on gemini.models.generateContent.
	// U: Were they retried?
	// ~~~
}

// SystemText and UserText split an assembled prompt the way providers
// take it: a system message, then one user message (prompt/openaimsg,
// prompt/geminimsg and prompt/anthropicmsg map them to SDK values).
func ExampleAssembled_SystemText() {
	a, err := prompt.Assemble(prompt.Spec{
		SystemPrompt: &prompt.SystemPrompt{Rules: []string{"Answer from the recorded history only."}},
		Task:         []prompt.TaskAnnotation{{Instruction: "Count the failed calls."}},
		Input:        prompt.InputPayload{UserQuery: "How many today?"},
	}, prompt.Config{HideEmptySections: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("system:\n%s\n\nuser:\n%s\n", a.SystemText(), a.UserText())
	// Output:
	// system:
	// ## [System Prompt]
	// - (1) Answer from the recorded history only.
	//
	// user:
	// ## [Task]
	// - (1) Count the failed calls.
	//
	// ## [Input]
	// ~~~text
	// How many today?
	// ~~~
}

// The JSON adapter renders each message as one JSON object of the
// signature's fields, the history's turns included.
func ExampleJSONAdapter() {
	msgs, err := prompt.JSONAdapter{}.Format(exampleSignature(), nil, map[string]any{
		"question": "And in winter?",
		"history": prompt.History{Messages: []map[string]any{
			{"Question": "What is the weather like in Lisbon in summer?", "answer": "Hot and dry."},
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
	// Each user message is a JSON object of the input fields, keyed by field name. Answer with one JSON object whose keys are the output field names: `answer`. Write nothing outside the object.
	//
	// In adhering to this structure, your objective is:
	//         Answer the question in one sentence.
	// [user]
	// {"question":"What is the weather like in Lisbon in summer?"}
	// [assistant]
	// {"answer":"Hot and dry."}
	// [user]
	// {"question":"And in winter?"}
}
