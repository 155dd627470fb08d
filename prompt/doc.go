// Package prompt turns history back into prompts, in two ways, with the
// standard library only.
//
// # The History input of a signature
//
// A [Signature] has ordered input and output fields; an input field of
// kind [KindHistory] takes a [History], prior turns of the same signature.
// An [Adapter] ([LineAdapter], [JSONAdapter], [MarkerAdapter]) formats a
// call into chat messages in a fixed order: the system message (when the
// adapter uses one), demos as user/assistant pairs, two messages per
// history element (a user message of its inputs, an assistant message of
// its outputs, "Label: value" lines in signature order for the line
// adapter), then the current request, rendered exactly as if the
// signature had no history field. Invalid history fails with errors that
// errors.Is matches: [ErrInvalidHistoryValue], [ErrInvalidHistoryElement]
// (a *[HistoryError] carrying the failing index).
//
// # The seven-section prompt
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
// decision is in [Meta].
//
// [StateFromRecords] builds a [ConversationState] from recorded history.
// [Assembled.SystemText] and [Assembled.UserText] split an assembled prompt
// the way providers take it. The SDK mappings live in packages of their
// own, so that only the programs that use an SDK compile it:
// prompt/openaimsg (go-openai messages), prompt/geminimsg (genai system
// instruction and contents) and prompt/anthropicmsg (the Anthropic SDK's
// system blocks and messages). This package imports record and the
// standard library only.
package prompt
