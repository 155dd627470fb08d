package prompt_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/prompt"
)

// sigGoldenCall is the call of the golden files: instructions, a complete
// demo, a demo that is skipped, two history elements and a current request
// with a non-string value.
func sigGoldenCall() (prompt.Signature, []map[string]any, map[string]any) {
	demos := []map[string]any{
		{"question": "What is the capital of France?", "context": "France is in Europe.", "answer": "Paris", "confidence": 0.9},
		{"question": "Skipped: no output field."},
	}
	inputs := map[string]any{
		"question": "And its population?",
		"context":  []string{"Lyon: 0.5 million", "Marseille: 0.9 million"},
		"history": prompt.History{Messages: []map[string]any{
			{"question": "Which city is the largest in France?", "answer": "Paris"},
			{"Question": "What river runs through it?", "context": "Paris <Île-de-France>", "Answer": "The Seine", "confidence": 0.8},
		}},
	}
	return sigQA(), demos, inputs
}

// TestSignatureGolden pins one full rendering per adapter; rewrite with
// go test ./prompt -run TestSignatureGolden -update-signature.
func TestSignatureGolden(t *testing.T) {
	for _, ad := range sigAdapters {
		t.Run(ad.name, func(t *testing.T) {
			sig, demos, inputs := sigGoldenCall()
			msgs, err := ad.adapter.Format(sig, demos, inputs)
			require.NoError(t, err)
			sigGolden(t, "signature_"+ad.name+".golden", sigDump(msgs))
		})
	}
}

// TestSystemMessage: the line adapter has a system message only when the
// signature has instructions; the JSON and marker adapters always have one,
// describing the fields (never the history field) and the task.
func TestSystemMessage(t *testing.T) {
	for _, instr := range []string{"", "  \n ", "Answer the question from the context."} {
		sig := sigQA()
		sig.Instructions = instr
		msgs, err := prompt.LineAdapter{}.Format(sig, nil, sigInputs())
		require.NoError(t, err)
		if strings.TrimSpace(instr) == "" {
			assert.Equal(t, []prompt.Message{{Role: prompt.RoleUser, Content: "Question: current question\nContext: current context"}}, msgs)
		} else {
			assert.Equal(t, prompt.Message{Role: prompt.RoleSystem, Content: instr}, msgs[0])
		}
		for _, a := range []prompt.Adapter{prompt.JSONAdapter{}, prompt.MarkerAdapter{}} {
			msgs, err := a.Format(sig, nil, sigInputs())
			require.NoError(t, err)
			require.Len(t, msgs, 2)
			sys := msgs[0]
			assert.Equal(t, prompt.RoleSystem, sys.Role)
			assert.Contains(t, sys.Content, "Your input fields are:\n1. `question`: The user's question.\n2. `context`: Background passages.\n")
			assert.Contains(t, sys.Content, "Your output fields are:\n1. `answer`: A short answer.\n2. `confidence`\n")
			assert.NotContains(t, sys.Content, "history")
			assert.NotContains(t, sys.Content, "Earlier turns")
			if strings.TrimSpace(instr) == "" {
				assert.True(t, strings.HasSuffix(sys.Content, "your objective is:\n        Given the fields `question`, `context`, produce the fields `answer`, `confidence`."), sys.Content)
			} else {
				assert.True(t, strings.HasSuffix(sys.Content, "your objective is:\n        "+instr), sys.Content)
			}
		}
	}

	t.Run("json", func(t *testing.T) {
		msgs, err := prompt.JSONAdapter{}.Format(sigQA(), nil, sigInputs())
		require.NoError(t, err)
		assert.Contains(t, msgs[0].Content, "Answer with one JSON object whose keys are the output field names: `answer`, `confidence`.")
	})

	t.Run("marker, as DSPy's ChatAdapter", func(t *testing.T) {
		sig := prompt.Signature{
			Instructions: "Answer briefly.\nCite the context.",
			Inputs:       []prompt.Field{{Name: "question", Description: "A question."}, {Name: "past", Kind: prompt.KindHistory}},
			Outputs:      []prompt.Field{{Name: "answer"}},
		}
		msgs, err := prompt.MarkerAdapter{}.Format(sig, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, "Your input fields are:\n"+
			"1. `question`: A question.\n"+
			"Your output fields are:\n"+
			"1. `answer`\n"+
			"\n"+
			"All interactions will be structured in the following way, with the appropriate values filled in.\n"+
			"\n"+
			"[[ ## question ## ]]\n{question}\n\n"+
			"[[ ## answer ## ]]\n{answer}\n\n"+
			"[[ ## completed ## ]]\n\n"+
			"In adhering to this structure, your objective is:\n"+
			"        Answer briefly.\n"+
			"        Cite the context.", msgs[0].Content)
	})
}

// TestMarkerAdapterFormat: blocks separated by blank lines, assistant
// messages ending with the completed marker, and only the current request
// asking for the output fields.
func TestMarkerAdapterFormat(t *testing.T) {
	sig := prompt.Signature{
		Inputs:  []prompt.Field{{Name: "question"}, {Name: "turns", Kind: prompt.KindHistory}},
		Outputs: []prompt.Field{{Name: "answer"}, {Name: "sources"}},
	}
	msgs, err := prompt.MarkerAdapter{}.Format(sig,
		[]map[string]any{{"question": "demo q", "answer": "demo a", "sources": []string{"s1"}}},
		map[string]any{"question": "now?", "turns": prompt.History{Messages: []map[string]any{{"question": "before?", "answer": "yes"}}}})
	require.NoError(t, err)
	require.Len(t, msgs, 6)
	const respond = "Respond with the corresponding output fields, starting with the field `[[ ## answer ## ]]`, then `[[ ## sources ## ]]`, and then ending with the marker for `[[ ## completed ## ]]`."
	assert.Equal(t, []prompt.Message{
		{Role: prompt.RoleUser, Content: "[[ ## question ## ]]\ndemo q"},
		{Role: prompt.RoleAssistant, Content: "[[ ## answer ## ]]\ndemo a\n\n[[ ## sources ## ]]\n[\"s1\"]\n\n[[ ## completed ## ]]"},
		{Role: prompt.RoleUser, Content: "[[ ## question ## ]]\nbefore?"},
		{Role: prompt.RoleAssistant, Content: "[[ ## answer ## ]]\nyes\n\n[[ ## completed ## ]]"},
		{Role: prompt.RoleUser, Content: "[[ ## question ## ]]\nnow?\n\n" + respond},
	}, msgs[1:])

	// A request with no input values present is the instruction alone.
	msgs, err = prompt.MarkerAdapter{}.Format(sig, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, respond, msgs[len(msgs)-1].Content)
}

// TestJSONAdapterMessagesAreJSON: every user and assistant message is one
// JSON object of the present fields, keyed by field name in signature
// order, values intact and not HTML-escaped.
func TestJSONAdapterMessagesAreJSON(t *testing.T) {
	sig, demos, inputs := sigGoldenCall()
	msgs, err := prompt.JSONAdapter{}.Format(sig, demos, inputs)
	require.NoError(t, err)
	require.Len(t, msgs, 1+2+4+1)
	for _, m := range msgs[1:] {
		require.True(t, json.Valid([]byte(m.Content)), m.Content)
	}
	assert.Equal(t, `{"question":"What river runs through it?","context":"Paris <Île-de-France>"}`, msgs[5].Content)
	assert.Equal(t, `{"answer":"The Seine","confidence":0.8}`, msgs[6].Content)
	assert.Equal(t, `{"question":"And its population?","context":["Lyon: 0.5 million","Marseille: 0.9 million"]}`, msgs[7].Content)
	assert.Equal(t, []string{"question", "context"}, sigJSONKeys(t, msgs[7].Content))
	assert.Equal(t, []string{"answer", "confidence"}, sigJSONKeys(t, msgs[2].Content))

	var back map[string]any
	require.NoError(t, json.Unmarshal([]byte(msgs[7].Content), &back))
	assert.Equal(t, map[string]any{"question": "And its population?", "context": []any{"Lyon: 0.5 million", "Marseille: 0.9 million"}}, back)

	// Nothing present is the empty object.
	msgs, err = prompt.JSONAdapter{}.Format(sig, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "{}", msgs[len(msgs)-1].Content)
}

// sigJSONKeys returns the top-level keys of a JSON object in order.
func sigJSONKeys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// TestIncompleteDemosSkipped: a demo missing every input field or every
// output field is left out, as DSPy does; the others keep their order.
func TestIncompleteDemosSkipped(t *testing.T) {
	demos := []map[string]any{
		{"question": "kept 0", "answer": "a0"},
		{"question": "only inputs", "context": "c"},
		{"answer": "only outputs", "confidence": 1},
		{},
		nil,
		{"prompt": "unknown keys", "reply": "r"},
		{"history": "history key", "answer": "not an input"},
		{"question": nil, "answer": "nil is absent"},
		{"context": "kept 1", "confidence": 0.1},
	}
	for _, ad := range sigAdapters {
		t.Run(ad.name, func(t *testing.T) {
			got, err := ad.adapter.Format(sigQA(), demos, sigInputs())
			require.NoError(t, err)
			want, err := ad.adapter.Format(sigQA(), []map[string]any{demos[0], demos[8]}, sigInputs())
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Len(t, got, 1+4+1)
		})
	}
}

// TestUnencodableValue: a value encoding/json refuses fails the call, with
// no messages, naming where it was.
func TestUnencodableValue(t *testing.T) {
	tests := []struct {
		name   string
		demos  []map[string]any
		inputs map[string]any
		where  string
	}{
		{"input", nil, map[string]any{"question": make(chan int)}, `prompt: inputs: field "question": json: unsupported type: chan int`},
		{"demo", []map[string]any{{"question": "q", "answer": math.NaN()}}, nil, `prompt: demo 0: field "answer": json: unsupported value: NaN`},
		{"history", nil, map[string]any{"history": prompt.History{Messages: []map[string]any{{"question": "q", "answer": "a"}, {"context": func() {}, "answer": "a"}}}}, `prompt: history element 1: field "context": json: unsupported type: func()`},
	}
	for _, tt := range tests {
		for _, ad := range sigAdapters {
			t.Run(tt.name+"/"+ad.name, func(t *testing.T) {
				msgs, err := ad.adapter.Format(sigQA(), tt.demos, tt.inputs)
				require.Error(t, err)
				assert.Equal(t, tt.where, err.Error())
				assert.Nil(t, msgs)
			})
		}
	}
}

// TestFormatDoesNotMutateArguments: the caller's signature, demos, inputs
// and history are left as they were.
func TestFormatDoesNotMutateArguments(t *testing.T) {
	for _, ad := range sigAdapters {
		t.Run(ad.name, func(t *testing.T) {
			sig, demos, inputs := sigGoldenCall()
			wantSig, wantDemos, wantInputs := sigGoldenCall()
			_, err := ad.adapter.Format(sig, demos, inputs)
			require.NoError(t, err)
			assert.Equal(t, wantSig, sig)
			assert.Equal(t, wantDemos, demos)
			assert.Equal(t, wantInputs, inputs)
		})
	}
}

// TestAdaptersConcurrentUse: adapters are stateless; run under -race.
func TestAdaptersConcurrentUse(t *testing.T) {
	sig, demos, inputs := sigGoldenCall()
	var wg sync.WaitGroup
	for _, ad := range sigAdapters {
		want, err := ad.adapter.Format(sig, demos, inputs)
		require.NoError(t, err)
		for range 8 {
			wg.Go(func() {
				for range 20 {
					got, err := ad.adapter.Format(sig, demos, inputs)
					if assert.NoError(t, err) {
						assert.Equal(t, want, got)
					}
				}
			})
		}
	}
	wg.Wait()
}

// TestNoPanic: odd arguments give messages or an error, never a panic and
// never both.
func TestNoPanic(t *testing.T) {
	sigs := []prompt.Signature{
		{},
		{Outputs: []prompt.Field{{Name: "a"}}},
		{Inputs: []prompt.Field{{Name: "h", Kind: prompt.KindHistory}}, Outputs: []prompt.Field{{Name: "a"}}},
		{Inputs: []prompt.Field{{Name: "é"}, {Name: "\xff"}}, Outputs: []prompt.Field{{Name: "[[ ## completed ## ]]"}}},
		sigQA(),
	}
	inputs := []map[string]any{
		nil,
		{},
		{"h": prompt.History{Messages: []map[string]any{nil}}},
		{"h": &prompt.History{Messages: []map[string]any{{"": "", "a": ""}}}},
		{"history": prompt.History{Messages: []map[string]any{{"question": []any{nil}, "answer": map[string]any{}}}}},
		{"é": struct{}{}, "\xff": []byte("x"), "history": io.EOF},
	}
	demos := [][]map[string]any{nil, {nil}, {{"a": "x", "é": 1}}}
	for i, sig := range sigs {
		for j, in := range inputs {
			for k, d := range demos {
				for _, ad := range sigAdapters {
					name := fmt.Sprintf("%s/sig%d/inputs%d/demos%d", ad.name, i, j, k)
					assert.NotPanics(t, func() {
						msgs, err := ad.adapter.Format(sig, d, in)
						assert.True(t, (err == nil) != (msgs == nil), "%s: messages %v, error %v", name, msgs, err)
						_ = sig.Validate(in)
						_, _ = sig.HistoryField()
					}, name)
				}
			}
		}
	}
}
