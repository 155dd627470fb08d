package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

func TestRenderRoundTrip(t *testing.T) {
	msgs, answer := providertest.Conversation("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42)
	kwargs := `{"model":"gpt-4o-mini","tools":["get_weather"],"tool_choice":"auto","temperature":0.2}`
	withCalls := answer
	withCalls.Message = msgs[2]
	withCalls.FinishReason = "tool_calls"
	reasoned := answer
	reasoned.Message.Parts = append([]record.Part{{Type: record.PartReasoning, Content: "Think."}}, reasoned.Message.Parts...)
	reasoned.Usage = &record.Usage{InputTokens: 10, OutputTokens: 9, TotalTokens: 19, CachedTokens: 4, ReasoningTokens: 3}
	media := append(msgs[:2:2], record.Message{Role: record.RoleUser, Parts: []record.Part{
		{Type: record.PartText, Content: "What is this?"},
		{Type: record.PartMedia, MIMEType: "image", URI: "https://example.com/a.png"},
		{Type: record.PartMedia, MIMEType: "image/png", Size: 1234}}})
	answer.FinishReason = "stop"
	for name, c := range map[string]struct {
		msgs []record.Message
		a    providers.Answer
	}{
		"text":      {msgs, answer},
		"toolCalls": {msgs[:2], withCalls},
		"reasoning": {msgs, reasoned},
		"media":     {media, answer},
	} {
		for _, stream := range []bool{false, true} {
			kw := kwargs
			if stream {
				kw = `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true}}`
			}
			if diff := providertest.Rendered(openai.Provider{}, openai.MethodChat, c.msgs, []byte(kw), c.a, stream); diff != "" {
				t.Errorf("%s (stream %v): %s", name, stream, diff)
			}
		}
	}
}

func TestRenderError(t *testing.T) {
	var body struct {
		Error struct{ Message, Type string }
	}
	if err := json.Unmarshal(openai.Provider{}.RenderError(429, "slow down"), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Message != "slow down" || body.Error.Type != "rate_limit_exceeded" {
		t.Errorf("got %+v", body.Error)
	}
}

func TestRenderRefusesOtherMethods(t *testing.T) {
	_, _, err := openai.Provider{}.RenderRequest(openai.MethodEmbeddings, nil, nil)
	if err == nil {
		t.Fatal("embeddings rendered")
	}
}

func FuzzRender(f *testing.F) {
	f.Add("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42, false)
	f.Add("<b>&</b> \u2028", "x", `"not json"`, 0, true)
	f.Fuzz(func(t *testing.T, text, tool, args string, tokens int, stream bool) {
		if !providertest.Strings(text, tool) || !providertest.Arguments(args) || tokens < 0 || tokens > 1<<30 {
			t.Skip()
		}
		msgs, a := providertest.Conversation(text, tool, args, tokens)
		if diff := providertest.Rendered(openai.Provider{}, openai.MethodChat, msgs, []byte(`{"model":"m"}`), a, stream); diff != "" {
			t.Fatal(diff)
		}
	})
}
