package record_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// One turn, however it was written, encodes to one set of bytes: the
// arguments' key order, spacing and escapes, and OpenAI's habit of
// sending them as a string, do not change them.
func TestMessageEncodingIsCanonical(t *testing.T) {
	call := func(args string) record.Message {
		return record.Message{Role: record.RoleAssistant, Parts: []record.Part{
			{Type: record.PartText, Content: "Checking."},
			{Type: record.PartToolCall, ID: "c1", Name: "get_weather", Arguments: json.RawMessage(args)},
		}}
	}
	want := `{"role":"assistant","parts":[{"type":"text","content":"Checking."},{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris","unit":"c"}}]}`
	for _, args := range []string{
		`{"city":"Paris","unit":"c"}`,
		`{"unit":"c","city":"Paris"}`,
		` { "city" : "Par\u0069s", "unit":"c" } `,
		`"{\"unit\": \"c\", \"city\": \"Paris\"}"`,
		`{"city":"Lyon","unit":"c","city":"Paris"}`, // the last of a key given twice, as encoding/json reads it
	} {
		m := call(args)
		assert.Equal(t, want, string(m.AppendJSON(nil)), args)
	}
	// What is not JSON stays what the model wrote, as a string.
	m := call(`{"city":"Pa`)
	assert.Contains(t, string(m.AppendJSON(nil)), `"arguments":"{\"city\":\"Pa"`)
	assert.Equal(t, `{"city":"Pa`, m.Parts[1].ArgumentsText())
	assert.Equal(t, `{"city":"Paris","unit":"c"}`, call(`"{\"unit\": \"c\", \"city\": \"Paris\"}"`).Parts[1].ArgumentsText())
}

// Decoding what AppendJSON wrote gives the message back, and encoding it
// again gives the same bytes.
func TestMessageRoundTrip(t *testing.T) {
	m := record.Message{Role: record.RoleTool, Parts: []record.Part{
		{Type: record.PartToolResult, ID: "c1", Name: "get_weather", Content: `{"temp":18}`, IsError: true},
		{Type: record.PartMedia, MIMEType: "image/png", Size: 123456},
		{Type: record.PartMedia, MIMEType: "application/pdf", URI: "gs://bucket/report.pdf"},
		{Type: record.PartOther, Name: "cachePoint", Data: json.RawMessage(`{"type":"default"}`)},
		{Type: record.PartReasoning},
		{Type: record.PartRefusal, Content: "I can't help with that.\u2028"},
	}}
	b := m.AppendJSON(nil)
	var got record.Message
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, m, got)
	assert.Equal(t, string(b), string(got.AppendJSON(nil)))
	std, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(std), "MarshalJSON is AppendJSON")
}

func TestMessageText(t *testing.T) {
	m := &record.Message{Role: record.RoleAssistant, Parts: []record.Part{
		{Type: record.PartReasoning, Content: "First "},
		{Type: record.PartText, Content: "The answer is "},
		{Type: record.PartToolCall, Name: "f"},
		{Type: record.PartText, Content: "42."},
		{Type: record.PartReasoning, Content: "then."},
	}}
	assert.Equal(t, "The answer is 42.", m.Text())
	assert.Equal(t, "First \n\nthen.", m.Reasoning(), "thoughts apart")
	var none *record.Message
	assert.Empty(t, none.Text())
	assert.Empty(t, none.Reasoning())
}

// What is not a message is refused with ErrNotMessage, and Messages keeps
// it, as written, in a part of type other.
func TestNotAMessage(t *testing.T) {
	for _, in := range []string{
		`{"role":"user","content":"Hi"}`,          // OpenAI's shape
		`{"role":"user","parts":[{"text":"Hi"}]}`, // Gemini's: parts without a type
		`{"parts":[]}`, `{"role":"user"}`, `{"role":1,"parts":[]}`, `{"role":"user","parts":{}}`,
		`{"role":"user","parts":[{"type":"media","size":"big"}]}`, `{"role":"user","parts":[1]}`,
		`"…[3 earlier items cut]"`, `[]`, `{`,
	} {
		var m record.Message
		err := m.UnmarshalJSON([]byte(in))
		require.Error(t, err, in)
		assert.True(t, errors.Is(err, record.ErrNotMessage), in)
	}
	msgs := record.Messages([]byte(`["…[3 earlier items cut]",{"role":"user","parts":[{"type":"text","content":"Hi"}]},{"role":"user","content":"Hi"}]`))
	require.Len(t, msgs, 3)
	assert.Equal(t, record.Message{Parts: []record.Part{{Type: record.PartOther, Data: json.RawMessage(`"…[3 earlier items cut]"`)}}}, msgs[0])
	assert.Equal(t, "Hi", msgs[1].Text())
	assert.Equal(t, record.RoleUser, msgs[1].Role)
	assert.Equal(t, `{"role":"user","content":"Hi"}`, string(msgs[2].Parts[0].Data))
	assert.Empty(t, msgs[2].Role)
}

func TestAppendMessages(t *testing.T) {
	msgs := []record.Message{
		{Role: record.RoleSystem, Parts: []record.Part{{Type: record.PartText, Content: "Be brief."}}},
		{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartText, Content: "Hi"}}},
	}
	b := record.AppendMessages(nil, msgs)
	assert.Equal(t, `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`, string(b))
	assert.Equal(t, msgs, record.Messages(b))
	assert.Equal(t, "[]", string(record.AppendMessages(nil, nil)))
}

// FuzzMessage: whatever decodes as a message encodes to valid JSON that
// decodes to the same message, and encoding is idempotent.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","parts":[{"type":"text","content":"Hi"}]}`,
		`{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","arguments":"{\"b\":1,\"a\":[true,null]}"}]}`,
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"c","content":"18","is_error":false}]}`,
		`{"role":"user","parts":[{"type":"media","mime_type":"image/png","size":12},{"type":"other","data":{"z":1,"a":"\ud83d\ude00"}}]}`,
		`{"role":"x","parts":[],"extra":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m record.Message
		if m.UnmarshalJSON(in) != nil {
			return
		}
		b := m.AppendJSON(nil)
		if !json.Valid(b) {
			t.Fatalf("invalid encoding %q of %q", b, in)
		}
		var again record.Message
		if err := again.UnmarshalJSON(b); err != nil {
			t.Fatalf("%q does not decode: %v", b, err)
		}
		if b2 := again.AppendJSON(nil); string(b2) != string(b) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b, b2)
		}
	})
}
