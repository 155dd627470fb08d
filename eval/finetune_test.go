package eval_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/internal/finetune"
	"github.com/llmhistory/llmhistory/record"
)

// weatherTools declares the tool of the tool loop, in OpenAI's shape.
const weatherTools = `[{"type":"function","function":{"name":"get_weather","description":"The weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

// A dataset of real records (a chat, a tool loop through the recorder)
// exports to each format, and each export passes its validator.
func TestExportPassesTheProvidersFormats(t *testing.T) {
	d := &eval.Dataset{Name: "weather"}
	items, _ := eval.ItemsFromRecords(recordToolLoop(t), eval.BuildOptions{})
	d.Add(items...)
	require.Len(t, d.Items, 3)
	for _, f := range eval.ExportFormats {
		t.Run(string(f), func(t *testing.T) {
			var out bytes.Buffer
			res, err := eval.Export(&out, d, f, eval.ExportOptions{Tools: json.RawMessage(weatherTools)})
			require.NoError(t, err)
			require.NoError(t, finetune.Check(string(f), out.Bytes()), out.String())
			if f == eval.FormatAnthropic {
				// The tool loop's two calls hold tool calls, which Claude's
				// Bedrock format cannot: skipped, and said why.
				assert.Equal(t, 1, res.Written)
				require.Len(t, res.Skipped, 2)
				assert.Contains(t, res.Skipped[0].Reason, "tool calls")
			} else {
				assert.Equal(t, 3, res.Written)
				assert.Empty(t, res.Skipped)
				assert.Contains(t, out.String(), `"description":"The weather in a city"`, "the declaration given replaces the bare name")
			}
		})
	}
}

// The OpenAI export of a tool loop, line for line: arguments as a string,
// the tool's answer tied to its call.
func TestExportOpenAIToolLoop(t *testing.T) {
	d := &eval.Dataset{}
	items, _ := eval.ItemsFromRecords(recordToolLoop(t)[1:], eval.BuildOptions{Conversations: true})
	d.Add(items...)
	var out bytes.Buffer
	_, err := eval.Export(&out, d, eval.FormatOpenAI, eval.ExportOptions{})
	require.NoError(t, err)
	want := `{"messages":[{"role":"system","content":"You answer about the weather."},{"role":"user","content":"Weather in Paris?"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","content":"18 C, sunny","tool_call_id":"call_1"},{"role":"assistant","content":"It is 18 °C and sunny in Paris."}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather"}}]}` + "\n"
	assert.Equal(t, want, out.String())
}

func TestExportUnknownFormat(t *testing.T) {
	_, err := eval.Export(&bytes.Buffer{}, &eval.Dataset{}, "mistral", eval.ExportOptions{})
	assert.ErrorIs(t, err, eval.ErrExportFormat)
	_, err = eval.Export(&bytes.Buffer{}, &eval.Dataset{}, eval.FormatOpenAI, eval.ExportOptions{Tools: json.RawMessage(`{"a":1}`)})
	assert.ErrorContains(t, err, "tools")
}

// A Gemini tool loop has no call IDs: the OpenAI export ties the result
// to its call by the IDs it gives them.
func TestExportGivesCallsWithoutIDsOne(t *testing.T) {
	it := eval.Item{
		Input: []record.Message{
			record.TextMessage(record.RoleUser, "Weather in Paris?"),
			{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartToolCall, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartToolResult, Name: "get_weather", Content: `{"temp":18}`}}},
		},
		Reference: ptrTo(record.TextMessage(record.RoleAssistant, "18 °C.")),
	}
	d := &eval.Dataset{}
	d.Add(it)
	for _, f := range []eval.ExportFormat{eval.FormatOpenAI, eval.FormatGemini} {
		var out bytes.Buffer
		res, err := eval.Export(&out, d, f, eval.ExportOptions{})
		require.NoError(t, err)
		require.Equal(t, 1, res.Written, f)
		require.NoError(t, finetune.Check(string(f), out.Bytes()), out.String())
	}
}

func ptrTo[T any](v T) *T { return &v }
