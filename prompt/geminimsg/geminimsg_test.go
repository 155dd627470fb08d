package geminimsg_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/prompt"
	"github.com/llmhistory/llmhistory/prompt/geminimsg"
)

type wireContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text string `json:"text"`
	} `json:"parts"`
}

// wireRequest sends contents through genai to a test server and returns
// the request body the server received.
func wireRequest(t *testing.T, system *genai.Content, contents []*genai.Content) (sys *wireContent, got []wireContent) {
	t.Helper()
	var body struct {
		SystemInstruction *wireContent  `json:"systemInstruction"`
		Contents          []wireContent `json:"contents"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &body))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP"}]}`)
	}))
	defer srv.Close()
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPClient: srv.Client(),
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	require.NoError(t, err)
	_, err = client.Models.GenerateContent(context.Background(), "gemini-2.0-flash", contents, &genai.GenerateContentConfig{SystemInstruction: system})
	require.NoError(t, err)
	return body.SystemInstruction, body.Contents
}

func TestPromptContentsOnTheWire(t *testing.T) {
	a, err := prompt.Assemble(prompt.Spec{
		SystemPrompt: &prompt.SystemPrompt{Rules: []string{"Treat [Constraints] as non-negotiable."}},
		Identity:     &prompt.Identity{Summary: "Support engineer"},
		Constraints:  []prompt.Constraint{{Text: "Be brief."}},
		Task:         []prompt.TaskAnnotation{{Instruction: "Explain."}},
		Input:        prompt.InputPayload{UserQuery: "Is it my quota?"},
	}, prompt.Config{})
	require.NoError(t, err)
	system, contents := geminimsg.PromptContents(a)
	sys, got := wireRequest(t, system, contents)
	require.NotNil(t, sys)
	require.Len(t, sys.Parts, 1)
	assert.Equal(t, a.Sections.SystemPrompt+"\n\n"+a.Sections.Identity, sys.Parts[0].Text, "systemInstruction: System Prompt + Assistant Identity")
	require.Len(t, got, 1)
	assert.Equal(t, "user", got[0].Role)
	assert.Equal(t, a.Sections.RequestingUser+"\n\n"+a.Sections.ConversationState+"\n\n"+a.Sections.Constraints+"\n\n"+a.Sections.Task+"\n\n"+a.Sections.Input, got[0].Parts[0].Text)
}

func TestSignatureContentsOnTheWire(t *testing.T) {
	sig := prompt.Signature{
		Instructions: "Answer questions about the recorded calls.",
		Inputs:       []prompt.Field{{Name: "history", Kind: prompt.KindHistory}, {Name: "question"}},
		Outputs:      []prompt.Field{{Name: "answer"}},
	}
	msgs, err := prompt.LineAdapter{}.Format(sig, nil, map[string]any{
		"question": "And yesterday?",
		"history":  prompt.History{Messages: []map[string]any{{"question": "Today?", "answer": "12"}, {"Question": "Errors?", "Answer": 3}}},
	})
	require.NoError(t, err)
	system, contents := geminimsg.SignatureContents(msgs)
	sys, got := wireRequest(t, system, contents)
	require.NotNil(t, sys)
	assert.Equal(t, "Answer questions about the recorded calls.", sys.Parts[0].Text)
	var roles []string
	for _, c := range got {
		roles = append(roles, c.Role)
	}
	assert.Equal(t, []string{"user", "model", "user", "model", "user"}, roles, "assistant turns go as role model")
	assert.Equal(t, "Answer: 3", got[3].Parts[0].Text)
	assert.Equal(t, "Question: And yesterday?", got[4].Parts[0].Text)
}
