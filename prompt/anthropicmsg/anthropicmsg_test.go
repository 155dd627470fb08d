package anthropicmsg_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/prompt/anthropicmsg"
)

type wireMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type wireRequest struct {
	System []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"system"`
	Messages []wireMessage `json:"messages"`
}

// send puts system and messages through the Anthropic SDK to a test
// server and returns the request body it received.
func send(t *testing.T, system []anthropic.TextBlockParam, messages []anthropic.MessageParam) wireRequest {
	t.Helper()
	var got wireRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &got))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
	}))
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithHTTPClient(srv.Client()))
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 64, System: system, Messages: messages,
	})
	require.NoError(t, err)
	return got
}

func TestPromptMessagesOnTheWire(t *testing.T) {
	a, err := prompt.Assemble(prompt.Spec{
		SystemPrompt: &prompt.SystemPrompt{Rules: []string{"Treat [Constraints] as non-negotiable."}},
		Identity:     &prompt.Identity{Summary: "Support engineer"},
		Constraints:  []prompt.Constraint{{Text: "Be brief."}},
		Task:         []prompt.TaskAnnotation{{Instruction: "Explain."}},
		Input:        prompt.InputPayload{UserQuery: "Is it my quota?"},
	}, prompt.Config{})
	require.NoError(t, err)
	system, msgs := anthropicmsg.PromptMessages(a)
	got := send(t, system, msgs)
	require.Len(t, got.System, 1)
	assert.Equal(t, a.SystemText(), got.System[0].Text)
	assert.Equal(t, a.Sections.SystemPrompt+"\n\n"+a.Sections.Identity, got.System[0].Text)
	require.Len(t, got.Messages, 1)
	assert.Equal(t, "user", got.Messages[0].Role)
	assert.Equal(t, a.UserText(), got.Messages[0].Content[0].Text)

	// With both system sections hidden, no system prompt is sent.
	b, err := prompt.Assemble(prompt.Spec{Task: []prompt.TaskAnnotation{{Instruction: "Explain."}}, Input: prompt.InputPayload{UserQuery: "Q"}}, prompt.Config{HideEmptySections: true})
	require.NoError(t, err)
	system, msgs = anthropicmsg.PromptMessages(b)
	assert.Nil(t, system)
	got = send(t, system, msgs)
	assert.Empty(t, got.System)
	assert.Equal(t, b.Text, got.Messages[0].Content[0].Text)
}

func TestSignatureMessagesOnTheWire(t *testing.T) {
	sig := prompt.Signature{
		Instructions: "Answer questions about the recorded calls.",
		Inputs:       []prompt.Field{{Name: "question"}, {Name: "history", Kind: prompt.KindHistory}},
		Outputs:      []prompt.Field{{Name: "answer"}},
	}
	msgs, err := prompt.LineAdapter{}.Format(sig, nil, map[string]any{
		"question": "And yesterday?",
		"history":  prompt.History{Messages: []map[string]any{{"question": "How many calls today?", "answer": "12"}}},
	})
	require.NoError(t, err)
	system, messages := anthropicmsg.SignatureMessages(msgs)
	got := send(t, system, messages)
	require.Len(t, got.System, 1)
	assert.Equal(t, "Answer questions about the recorded calls.", got.System[0].Text)
	var roles, texts []string
	for _, m := range got.Messages {
		roles, texts = append(roles, m.Role), append(texts, m.Content[0].Text)
	}
	assert.Equal(t, []string{"user", "assistant", "user"}, roles, "the system message is the system prompt")
	assert.Equal(t, []string{"Question: How many calls today?", "Answer: 12", "Question: And yesterday?"}, texts)
}
