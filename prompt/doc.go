// Package prompt turns history back into prompts, in two ways, with the
// standard library only.
//
// # The History input of a signature
//
// The rule: a call is described by a signature, and earlier exchanges are
// given to it as one input of a dedicated kind, which the adapter turns
// into real user/assistant turns rather than text pasted into the prompt.
//
//	sig := prompt.Signature{
//		Instructions: "Answer questions about the recorded calls.",
//		Inputs:  []prompt.Field{{Name: "question"}, {Name: "history", Kind: prompt.KindHistory}},
//		Outputs: []prompt.Field{{Name: "answer"}},
//	}
//	msgs, err := prompt.LineAdapter{}.Format(sig, nil, map[string]any{
//		"question": "And yesterday?",
//		"history":  prompt.History{Messages: []map[string]any{{"question": "How many today?", "answer": "12"}}},
//	})
//	// system: "Answer questions about the recorded calls."
//	// user: "Question: How many today?"   assistant: "Answer: 12"
//	// user: "Question: And yesterday?"
//
// A [Signature] has ordered input and output fields; an input field of
// kind [KindHistory] takes a [History], prior turns of the same signature.
// An [Adapter] ([LineAdapter], [JSONAdapter], [MarkerAdapter]) formats a
// call into chat messages in a fixed order: the system message (when the
// adapter uses one), demos as user/assistant pairs, two messages per
// history element (a user message of its inputs, an assistant message of
// its outputs, "Label: value" lines in signature order for the line
// adapter), then the current request, rendered exactly as if the
// signature had no history field. The history field is found by its
// kind, never by its name, and a history element's keys match the
// signature's fields whatever their case or snake/camel spelling; only
// the fields present are rendered, non-strings as compact JSON. Invalid
// history fails with errors that errors.Is matches:
// [ErrInvalidHistoryValue] for a value that is not a History,
// [ErrInvalidHistoryElement] for an element without an input or an
// output field (a *[HistoryError] carrying the failing index).
//
// Three adapters: [LineAdapter] ("Label: value" lines), [JSONAdapter] (one
// JSON object per message) and [MarkerAdapter] (Python DSPy's chat
// adapter, "[[ ## field ## ]]" blocks).
//
// # The seven-section prompt
//
// The rule: a prompt is assembled from seven named sections in a fixed
// order, the conversation so far being one of them, within a budget that
// trims what matters least first and says what it trimmed.
//
// [Assemble] renders a [Spec] in the canonical order of the prompt
// assembly framework v2 (System Prompt, Assistant Identity, Requesting
// User, Conversation State / History, Constraints, Task, Input), each
// section a "## [Label]" heading and a body of "-" bullets, "None
// provided." when empty (unless hidden), constraints and tasks numbered in
// priority order, the user query and transcripts fenced as ~~~text with a
// fence no user text can close. Within a [Budget] (characters and
// estimated tokens, per section and in total) it trims in the layout's
// preservation order: transcript first, then summary, lower-priority tasks
// before higher, the input's context and attachments last; the System
// Prompt and the Constraints are never dropped, and when they alone do not
// fit, Assemble fails with a *[BudgetError] that says by how much. Every
// decision is in [Meta]. The heading level is configurable
// ([Config].HeadingLevel); constraints and tasks without a priority take
// [DefaultPriority], and equal priorities keep their order; a [Budget]
// estimates tokens as a quarter of the characters unless given a
// tokenizer (Budget.Estimate); [Config].Redact runs over the conversation
// state. A worked
// example of the format is pinned byte for byte in
// testdata/v2_example.golden.
//
// # From recorded history
//
// [StateFromRecords] builds a [ConversationState] from the records of one
// conversation: each record gives a user turn (the text of the last user
// message of its args) and an assistant turn (the text of its answer,
// which the recorder keeps unless told not to). Both are read from the
// message model (record.Message), whatever the provider.
//
//	rec := middleware.NewRecorder()
//	// ... calls in a trace ...
//	state := prompt.StateFromRecords(rec.History().Trace("conversation-42"), prompt.Retention{MaxMessages: 8})
//	a, err := prompt.Assemble(prompt.Spec{ConversationState: &state, Task: tasks, Input: input}, prompt.Config{})
//	messages := openaimsg.PromptMessages(a)         // go-openai: system + user
//	system, contents := geminimsg.PromptContents(a) // genai: SystemInstruction + Contents
//
// [Assembled.SystemText] (System Prompt and Assistant Identity) and
// [Assembled.UserText] (the other five sections, in order) split an
// assembled prompt the way providers take it. The SDK mappings live in
// packages of their own, so that a program that only records compiles no
// SDK: prompt/openaimsg (go-openai messages: PromptMessages, and
// SignatureMessages for an adapter's messages), prompt/geminimsg (genai:
// PromptContents and SignatureContents, assistant turns as role "model")
// and prompt/anthropicmsg (the Anthropic SDK's system blocks and
// messages). Each is tested by sending its values through the real SDK to
// a test server and reading the JSON on the wire. They moved there from
// providers/openai and providers/gemini, and StateFromRecords from
// middleware: code that used the old names changes its import path only.
// This package imports record and the standard library only.
package prompt
