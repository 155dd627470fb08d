package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

func TestRenderRoundTrip(t *testing.T) {
	msgs, answer := providertest.Conversation("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42)
	kwargs := `{"model":"claude-sonnet-5","tools":["get_weather"],"tool_choice":{"type":"auto"},"max_tokens":300,"temperature":0.2}`
	withCalls := answer
	withCalls.Message = msgs[2]
	withCalls.FinishReason = "tool_use"
	reasoned := answer
	reasoned.Message.Parts = append([]record.Part{{Type: record.PartReasoning, Content: "Think."}}, reasoned.Message.Parts...)
	reasoned.Usage = &record.Usage{InputTokens: 10, OutputTokens: 9, TotalTokens: 19, CachedTokens: 4, CacheWriteTokens: 2}
	media := append(msgs[:2:2], record.Message{Role: record.RoleUser, Parts: []record.Part{
		{Type: record.PartText, Content: "What is this?"},
		{Type: record.PartMedia, MIMEType: "image", URI: "https://example.com/a.png"},
		{Type: record.PartMedia, MIMEType: "document", URI: "file_011", Name: "Terms"},
		{Type: record.PartMedia, MIMEType: "image/png", Size: 1234}}})
	answer.FinishReason = "end_turn"
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
				kw = `{"model":"claude-sonnet-5","max_tokens":300,"stream":true}`
			}
			if diff := providertest.Rendered(anthropic.Provider{}, anthropic.MethodCreate, c.msgs, []byte(kw), c.a, stream); diff != "" {
				t.Errorf("%s (stream %v): %s", name, stream, diff)
			}
		}
	}
}

func TestRenderError(t *testing.T) {
	var body struct {
		Error struct{ Message, Type string }
	}
	if err := json.Unmarshal(anthropic.Provider{}.RenderError(429, "slow down"), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Message != "slow down" || body.Error.Type != "rate_limit_error" {
		t.Errorf("got %+v", body.Error)
	}
}

func TestRenderRefusesOtherMethods(t *testing.T) {
	_, _, err := anthropic.Provider{}.RenderRequest(anthropic.MethodCountTokens, nil, nil)
	if err == nil {
		t.Fatal("count_tokens rendered")
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
		if diff := providertest.Rendered(anthropic.Provider{}, anthropic.MethodCreate, msgs, []byte(`{"model":"m"}`), a, stream); diff != "" {
			t.Fatal(diff)
		}
	})
}
