package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/replay"
)

// The agent's test runs against the committed cassette: offline, in CI,
// without a key. Run it with LLMHISTORY_REPLAY=record and OPENAI_API_KEY
// set to record the cassette again from the API (see main.go). Its
// assertions hold for any faithful recording: they check what the agent
// does with the model's answers, not the model's exact words.
func TestAgentAnswersWithTheTool(t *testing.T) {
	cassette := replay.ForTest(t, "testdata/agent.jsonl")
	rec := middleware.NewRecorder()
	defer rec.Close()
	var cities []string
	agent := &Agent{
		Client: newClient(middleware.NewClient(nil, rec.Middleware(), cassette.Middleware())),
		Model:  openai.GPT4oMini,
		Tools:  []Tool{Weather(&cities)},
	}
	var tokens []string
	answer, err := agent.Ask(middleware.WithTrace(context.Background(), "t"), "What's the weather in Paris?", func(s string) { tokens = append(tokens, s) })
	require.NoError(t, err)

	assert.Equal(t, []string{"Paris"}, cities, "the model asked for the tool, and the agent ran it")
	assert.Contains(t, answer, "18", "the answer uses the tool's result")
	assert.Greater(t, len(tokens), 3, "the answer came as a stream")
	assert.Equal(t, answer, strings.Join(tokens, ""))

	// The recorder saw the replayed calls as it sees live ones.
	records := rec.History().Trace("t")
	require.Len(t, records, 2)
	assert.Equal(t, "tool_calls", records[0].Outcome.FinishReason)
	assert.Equal(t, record.SpeakerUser, records[0].Speaker)
	assert.Equal(t, record.SpeakerTool, records[1].Speaker, "the second call carries the tool's result")
	assert.Equal(t, "stop", records[1].Outcome.FinishReason)
	assert.NotNil(t, records[1].Usage, "usage from the stream's last chunk")
	assert.Empty(t, cassette.Unused(), "the agent made every recorded call")
}

// A change to what the agent sends is a miss that says what changed. The
// mode is fixed here: re-recording the cassette must not record this call.
func TestAChangedQuestionIsAMissThatSaysWhy(t *testing.T) {
	cassette := replay.ForTest(t, "testdata/agent.jsonl", replay.WithMode(replay.ModeReplay))
	agent := &Agent{Client: newClient(cassette.Client()), Model: openai.GPT4oMini, Tools: []Tool{Weather(nil)}}
	_, err := agent.Ask(context.Background(), "What's the weather in Rome?", nil)
	var miss *replay.MissError
	require.ErrorAs(t, err, &miss)
	require.Len(t, miss.Differences, 1)
	assert.Equal(t, "body.messages.1.content", miss.Differences[0].Field)
	assert.Equal(t, `"What's the weather in Rome?"`, miss.Differences[0].Got)
}

func TestRunPrintsTheAnswerAndTheHistory(t *testing.T) {
	t.Setenv(replay.EnvMode, "replay")
	t.Setenv("OPENAI_MODEL", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, "testdata/agent.jsonl", "What's the weather in Paris?"))
	t.Log(out.String())
	assert.Contains(t, out.String(), "18")
	assert.Equal(t, 2, strings.Count(out.String(), "record: openai.chat.completions.create ok"))
}
