package replay_test

import (
	"context"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/replay"
)

// checkoutPrompt is a long system prompt, as agents have, with one
// sentence that a test changes in its middle.
func checkoutPrompt(refund string) string {
	var b strings.Builder
	b.WriteString("You are the checkout assistant of Example Shop. ")
	for i := range 12 {
		b.WriteString("Answer in the customer's language, briefly, and never invent an order number. ")
		if i == 6 {
			b.WriteString("Refunds take " + refund + " days from the day the parcel reaches our warehouse. ")
		}
	}
	b.WriteString("End every answer with a question.")
	return b.String()
}

// A change in the middle of a long system prompt is shown: both values
// start just before the change, so the miss says what changed instead of
// the same first 80 bytes twice.
func TestAMissShowsTheChangedMiddleOfALongValue(t *testing.T) {
	request := func(refund string) goopenai.ChatCompletionRequest {
		return goopenai.ChatCompletionRequest{
			Model: "gpt-4o-mini",
			Messages: []goopenai.ChatCompletionMessage{
				{Role: "system", Content: checkoutPrompt(refund)},
				{Role: "user", Content: "When do I get my money back?"},
			},
		}
	}
	path := cassettePath(t)
	srv := newFake(t, reply{body: testdata(t, "openai/openai_chat_response.json")})
	live := newRun(t, path, replay.ModeRecord)
	_, err := goOpenAIClient(srv.URL(), live.client).CreateChatCompletion(context.Background(), request("14"))
	require.NoError(t, err)
	live.records(t)
	srv.srv.Close()

	played := newRun(t, path, replay.ModeReplay)
	_, err = goOpenAIClient("http://provider.invalid", played.client).CreateChatCompletion(context.Background(), request("30"))
	var miss *replay.MissError
	require.ErrorAs(t, err, &miss)
	require.Len(t, miss.Differences, 1, "%v", miss.Differences)
	d := miss.Differences[0]
	assert.Equal(t, "body.messages.0.content", d.Field)
	assert.NotEqual(t, d.Recorded, d.Got, "the two values shown differ")
	assert.Contains(t, d.Recorded, "Refunds take 14 days")
	assert.Contains(t, d.Got, "Refunds take 30 days")
	for _, v := range []string{d.Recorded, d.Got} {
		assert.True(t, strings.HasPrefix(v, `…"`), "the cut head is marked: %s", v)
		assert.True(t, strings.HasSuffix(v, "…"), "the cut tail is marked: %s", v)
		assert.LessOrEqual(t, len(v), 90, "still short: %s", v)
	}
	msg := err.Error()
	t.Log(msg)
	assert.Contains(t, msg, `body.messages.0.content: recorded …"`, "the SDK's error carries the excerpt")
	assert.Contains(t, msg, "Refunds take 14 days")
	assert.Contains(t, msg, "Refunds take 30 days")
}
