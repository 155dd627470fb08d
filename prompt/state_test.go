package prompt_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/record"
)

// A conversation recorded through the real recorder comes back as the
// Conversation State / History section.
func TestStateFromRecordedConversation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"Four."},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	ctx := middleware.WithTrace(context.Background(), "conv-9")
	for _, q := range []string{"What is 2+2?", "And 3+3?", "Thanks"} {
		body := `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"` + q + `"}]}]}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recs := rec.History().Trace("conv-9")
	require.Len(t, recs, 3)
	assert.Equal(t, "Four.", recs[0].Output.Text(), "the answer is kept")

	state := prompt.StateFromRecords(recs, prompt.Retention{MaxMessages: 4})
	a, err := prompt.Assemble(prompt.Spec{
		ConversationState: &state,
		Task:              []prompt.TaskAnnotation{{Instruction: "Answer."}},
		Input:             prompt.InputPayload{UserQuery: "And 4+4?"},
	}, prompt.Config{})
	require.NoError(t, err)
	assert.Equal(t, "## [Conversation State / History]\n- Recorded calls in this conversation: 3\n"+
		"~~~text\n(last 4 exchanges, truncated)\nU: And 3+3?\nA: Four.\nU: Thanks\nA: Four.\n~~~", a.Sections.ConversationState)
}

// A user turn is the last user message with text, whatever came after
// it; a tool's result is no user turn.
func TestStateFromRecordsMessages(t *testing.T) {
	args := func(msgs ...record.Message) []byte { return record.AppendMessages(nil, msgs) }
	recs := []record.Record{
		{Args: args(record.TextMessage(record.RoleUser, "first turn"), record.TextMessage(record.RoleAssistant, "x")), Outcome: record.Success("x")},
		{Args: args(record.TextMessage(record.RoleUser, "a bare input string"),
			record.Message{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartMedia, MIMEType: "image/png", Size: 10}}}), Outcome: record.Failure(record.ErrorServer)},
		{Args: args(record.Message{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartToolResult, ID: "c1", Content: "42"}}}), Outcome: record.Success("x")},
	}
	state := prompt.StateFromRecords(recs, prompt.Retention{})
	assert.Equal(t, "Recorded calls in this conversation: 3 (1 failed)", state.Summary)
	require.Len(t, state.Transcript, 2)
	assert.Equal(t, "first turn", state.Transcript[0].Content)
	assert.Equal(t, "a bare input string", state.Transcript[1].Content)
	assert.Equal(t, prompt.RenderBoth, state.RenderMode)
	assert.Empty(t, prompt.StateFromRecords(nil, prompt.Retention{}).Summary)
}
