package prompt

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// StateFromRecords builds the Conversation State / History section of a
// prompt from recorded history: the records of one conversation (a
// trace, from [record.Memory.Trace]), in order. Each record gives a user
// turn, the last user message of its args, and an assistant turn, its
// output when the recorder stored it (middleware.WithOutput). The retention bounds
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
		if r.Output != "" {
			state.Transcript = append(state.Transcript, ConversationStateItem{Role: "assistant", Content: r.Output, At: r.Timestamp})
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

// lastUserText finds the text of the last user turn in a record's args,
// in the shapes the providers record: chat messages (content a string or
// text parts), Gemini contents (text parts), Responses input items, or a
// bare string.
func lastUserText(args json.RawMessage) string {
	var turns []json.RawMessage
	if json.Unmarshal(args, &turns) != nil {
		return ""
	}
	for i := len(turns) - 1; i >= 0; i-- {
		var s string
		if json.Unmarshal(turns[i], &s) == nil {
			return s
		}
		var t struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Parts   []struct {
				Text string `json:"text"`
			} `json:"parts"`
		}
		if json.Unmarshal(turns[i], &t) != nil || t.Role != "user" {
			continue
		}
		if text := contentText(t.Content); text != "" {
			return text
		}
		var parts []string
		for _, p := range t.Parts {
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return ""
}

// contentText reads a chat message's content: a string, or a list of
// parts whose text ones are joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
