package openaimsg_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/prompt/openaimsg"
)

// wireMessages sends msgs through go-openai to a test server and returns
// the messages the server received.
func wireMessages(t *testing.T, msgs []goopenai.ChatCompletionMessage) []map[string]any {
	t.Helper()
	var got struct {
		Messages []map[string]any `json:"messages"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &got))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	cfg := goopenai.DefaultConfig("test-key")
	cfg.BaseURL, cfg.HTTPClient = srv.URL+"/v1", srv.Client()
	_, err := goopenai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
	require.NoError(t, err)
	return got.Messages
}

func TestPromptMessagesOnTheWire(t *testing.T) {
	a, err := prompt.Assemble(prompt.Spec{
		SystemPrompt:   &prompt.SystemPrompt{Rules: []string{"Treat [Constraints] as non-negotiable."}},
		Identity:       &prompt.Identity{Summary: "Support engineer"},
		RequestingUser: &prompt.RequestingUser{Handle: "@ana"},
		ConversationState: &prompt.ConversationState{Summary: "Asked about quotas.", RenderMode: prompt.RenderBoth,
			Transcript: []prompt.ConversationStateItem{{Role: "user", Content: "Why 429?"}}},
		Constraints: []prompt.Constraint{{Text: "Be brief."}},
		Task:        []prompt.TaskAnnotation{{Instruction: "Explain."}},
		Input:       prompt.InputPayload{UserQuery: "Is it my quota?"},
	}, prompt.Config{})
	require.NoError(t, err)
	got := wireMessages(t, openaimsg.PromptMessages(a))
	require.Len(t, got, 2)
	assert.Equal(t, "system", got[0]["role"])
	assert.Equal(t, a.Sections.SystemPrompt+"\n\n"+a.Sections.Identity, got[0]["content"])
	assert.Equal(t, "user", got[1]["role"])
	assert.Equal(t, a.Sections.RequestingUser+"\n\n"+a.Sections.ConversationState+"\n\n"+a.Sections.Constraints+"\n\n"+a.Sections.Task+"\n\n"+a.Sections.Input, got[1]["content"],
		"the other five sections, in canonical order")

	// Hidden empty sections leave no gaps; with no system sections there is no system message.
	b, err := prompt.Assemble(prompt.Spec{Task: []prompt.TaskAnnotation{{Instruction: "Explain."}}, Input: prompt.InputPayload{UserQuery: "Q"}}, prompt.Config{HideEmptySections: true})
	require.NoError(t, err)
	got = wireMessages(t, openaimsg.PromptMessages(b))
	require.Len(t, got, 1)
	assert.Equal(t, b.Text, got[0]["content"])
}

func TestSignatureMessagesOnTheWire(t *testing.T) {
	sig := prompt.Signature{
		Instructions: "Answer questions about the recorded calls.",
		Inputs:       []prompt.Field{{Name: "question"}, {Name: "history", Kind: prompt.KindHistory}},
		Outputs:      []prompt.Field{{Name: "answer"}},
	}
	msgs, err := prompt.LineAdapter{}.Format(sig, nil, map[string]any{
		"question": "And yesterday?",
		"history": prompt.History{Messages: []map[string]any{
			{"question": "How many calls today?", "answer": "12"},
		}},
	})
	require.NoError(t, err)
	got := wireMessages(t, openaimsg.SignatureMessages(msgs))
	require.Len(t, got, len(msgs))
	var roles []string
	for i, m := range got {
		roles = append(roles, m["role"].(string))
		assert.Equal(t, msgs[i].Content, m["content"])
	}
	assert.Equal(t, []string{"system", "user", "assistant", "user"}, roles)
	assert.Equal(t, "Question: How many calls today?", got[1]["content"])
	assert.Equal(t, "Answer: 12", got[2]["content"])
	assert.Equal(t, "Question: And yesterday?", got[3]["content"])
}
