package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// OpenAIModel is a [Model] that speaks the OpenAI chat completions API:
// OpenAI itself, and the servers compatible with it (Ollama, vLLM,
// OpenRouter, Azure OpenAI's v1 endpoint). It sends the prompt with
// temperature 0 and asks for a JSON object (response_format), and reads
// the answer with the provider parser the recorder uses, so that a reply
// means here what it means in a record.
type OpenAIModel struct {
	// Client sends the calls: give it the recorder's (Recorder.Client),
	// so that the judge's calls are recorded. Nil is http.DefaultClient.
	Client *http.Client
	// BaseURL is the API's root; default "https://api.openai.com/v1".
	BaseURL string
	// APIKey is sent as a bearer token; the recorder never records it.
	APIKey string
	// Model is the model asked: "gpt-4o-mini".
	Model string
	// PlainText leaves out response_format, for a server that refuses it.
	PlainText bool
}

// maxReply bounds the reply read, in bytes.
const maxReply = 1 << 20

// Complete implements [Model].
func (m *OpenAIModel) Complete(ctx context.Context, p Prompt) (Reply, error) {
	body := map[string]any{
		"model":       m.Model,
		"temperature": 0,
		"messages": []map[string]string{
			{"role": "system", "content": p.System},
			{"role": "user", "content": p.User},
		},
	}
	if !m.PlainText {
		body["response_format"] = map[string]string{"type": "json_object"}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Reply{}, err
	}
	base := m.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if m.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.APIKey)
	}
	client := m.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return Reply{}, err
	}
	call := providers.Call{Provider: "openai", MethodName: openai.MethodChat, Model: m.Model}
	res := openai.Provider{}.ParseResponse(&call, &providers.Response{
		StatusCode:  resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Body:        data[:min(len(data), maxReply)],
		Truncated:   len(data) > maxReply,
		EOF:         true,
	})
	reply := Reply{Text: res.Output.Text(), Model: res.Model, Usage: res.Usage}
	for _, p := range res.Output.Parts {
		if p.Type == record.PartRefusal {
			reply.Refusal += p.Content
		}
	}
	if !res.Outcome.OK {
		return reply, fmt.Errorf("%s %s: %s", resp.Status, res.Outcome.ErrorType, res.ErrorMessage)
	}
	return reply, nil
}
