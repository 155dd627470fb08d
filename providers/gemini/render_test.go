package gemini_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

func TestRenderRoundTrip(t *testing.T) {
	msgs, answer := conversation("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42)
	kwargs := `{"model":"gemini-2.5-flash","tools":["get_weather"],"toolConfig":{"mode":"AUTO"},"temperature":0.2,"maxOutputTokens":100}`
	withCalls := answer
	withCalls.Message = msgs[2]
	withCalls.FinishReason = "STOP"
	reasoned := answer
	reasoned.Message.Parts = append([]record.Part{{Type: record.PartReasoning, Content: "Think."}}, reasoned.Message.Parts...)
	reasoned.Usage = &record.Usage{InputTokens: 10, OutputTokens: 9, TotalTokens: 19, CachedTokens: 4, ReasoningTokens: 3}
	media := append(msgs[:2:2], record.Message{Role: record.RoleUser, Parts: []record.Part{
		{Type: record.PartText, Content: "What is this?"},
		{Type: record.PartMedia, MIMEType: "image", URI: "https://example.com/a.png"},
		{Type: record.PartMedia, MIMEType: "image/png", Size: 1234}}})
	answer.FinishReason = "STOP"
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
				kw = `{"model":"gemini-2.5-flash"}`
			}
			if diff := providertest.Rendered(gemini.Provider{}, method(stream), c.msgs, []byte(kw), c.a, stream); diff != "" {
				t.Errorf("%s (stream %v): %s", name, stream, diff)
			}
		}
	}
}

func TestRenderError(t *testing.T) {
	var body struct {
		Error struct{ Message, Status string }
	}
	if err := json.Unmarshal(gemini.Provider{}.RenderError(429, "slow down"), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Message != "slow down" || body.Error.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("got %+v", body.Error)
	}
}

func TestRenderRefusesOtherMethods(t *testing.T) {
	_, _, err := gemini.Provider{}.RenderRequest(gemini.MethodEmbedContent, nil, nil)
	if err == nil {
		t.Fatal("embeddings rendered")
	}
}

func FuzzRender(f *testing.F) {
	f.Add("Weather in Paris?", "get_weather", `{"city":"Paris"}`, 42, false)
	f.Add("<b>&</b> \u2028", "x", `"not json"`, 0, true)
	f.Fuzz(func(t *testing.T, text, tool, args string, tokens int, stream bool) {
		if !providertest.Strings(text, tool) || !providertest.Arguments(args) && strings.HasPrefix(strings.TrimSpace(args), "{") || tokens < 0 || tokens > 1<<30 {
			t.Skip()
		}
		msgs, a := conversation(text, tool, args, tokens)
		if diff := providertest.Rendered(gemini.Provider{}, method(stream), msgs, []byte(`{"model":"m"}`), a, stream); diff != "" {
			t.Fatal(diff)
		}
	})
}

// conversation is providertest's, with what Gemini's wire says of a tool
// result: the tool's name, and an object.
func conversation(text, tool, args string, tokens int) ([]record.Message, providers.Answer) {
	msgs, a := providertest.Conversation(text, tool, args, tokens)
	res := &msgs[3].Parts[0]
	out, _ := json.Marshal(map[string]string{"output": res.Content})
	res.Name, res.Content = tool, string(record.AppendCanonicalJSON(nil, out))
	return msgs, a
}

func method(stream bool) string {
	if stream {
		return gemini.MethodStreamGenerateContent
	}
	return gemini.MethodGenerateContent
}
