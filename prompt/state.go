package prompt

import (
	"encoding/json"
	"strconv"

	"github.com/llmhistory/llmhistory/record"
)

// StateFromRecords builds the Conversation State / History section of a
// prompt from recorded history: the records of one conversation (a
// trace, from [record.Memory.Trace]), in order. Each record gives a user
// turn, the text of the last user message of its args, and an assistant
// turn, the text of its answer (its Output, which the recorder keeps
// unless told not to). The retention bounds
// what the assembler renders, and it states the truncation; the summary
// counts the calls and their failures.
func StateFromRecords(recs []record.Record, retention Retention) ConversationState {
	state := ConversationState{Retention: retention, RenderMode: RenderBoth}
	failed := 0
	for _, r := range recs {
		if !r.Outcome.OK {
			failed++
		}
		if text := lastUserText(r.Args); text != "" {
			state.Transcript = append(state.Transcript, ConversationStateItem{Role: "user", Content: text, At: r.Timestamp})
		}
		if text := r.Output.Text(); text != "" {
			state.Transcript = append(state.Transcript, ConversationStateItem{Role: "assistant", Content: text, At: r.Timestamp})
		}
	}
	if len(recs) > 0 {
		s := "Recorded calls in this conversation: " + strconv.Itoa(len(recs))
		if failed > 0 {
			s += " (" + strconv.Itoa(failed) + " failed)"
		}
		state.Summary = s
	}
	return state
}

// lastUserText is the text of the last user message of a record's args
// (messages of the message model, whatever the provider), "" when none
// has text.
func lastUserText(args json.RawMessage) string {
	msgs := record.Messages(args)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := &msgs[i]; m.Role == record.RoleUser {
			if text := m.Text(); text != "" {
				return text
			}
		}
	}
	return ""
}
