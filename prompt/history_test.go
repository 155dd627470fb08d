package prompt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/prompt"
)

// The tests in this file follow the conversation-history-input
// specification: one test per SHALL and MUST, each run on every adapter.

// TestHistoryOmittedRequestUnchanged: "History input is omitted — the
// program SHALL format and send the LM request exactly as it does today",
// and the design's "non-history signatures remain unchanged". A call
// without history gives the very messages of the same signature without
// its history field.
func TestHistoryOmittedRequestUnchanged(t *testing.T) {
	noHistory := []struct {
		name   string
		inputs map[string]any
	}{
		{"key absent", sigInputs()},
		{"nil value", sigWith(sigInputs(), "history", nil)},
		{"empty History", sigWith(sigInputs(), "history", prompt.History{})},
		{"empty *History", sigWith(sigInputs(), "history", &prompt.History{})},
		{"empty messages", sigWith(sigInputs(), "History", prompt.History{Messages: []map[string]any{}})},
	}
	instructions := []string{"Answer the question from the context.", ""}
	for _, ad := range sigAdapters {
		for _, demos := range [][]map[string]any{nil, sigDemos()} {
			for _, instr := range instructions {
				for _, tt := range noHistory {
					name := fmt.Sprintf("%s/demos=%d/instructions=%t/%s", ad.name, len(demos), instr != "", tt.name)
					t.Run(name, func(t *testing.T) {
						sig := sigQA()
						sig.Instructions = instr
						want, err := ad.adapter.Format(sigWithoutHistory(sig), demos, sigInputs())
						require.NoError(t, err)
						got, err := ad.adapter.Format(sig, demos, tt.inputs)
						require.NoError(t, err)
						assert.Equal(t, want, got, "(-want +got)")
					})
				}
			}
		}
	}
}

// TestHistoryProvidedAddsMessages: "History input is provided — the
// program SHALL include the provided history in the LM request as
// additional messages": the request without history, with the history
// messages inserted before its last message and nothing else changed.
func TestHistoryProvidedAddsMessages(t *testing.T) {
	for _, ad := range sigAdapters {
		for _, demos := range [][]map[string]any{nil, sigDemos()} {
			t.Run(fmt.Sprintf("%s/demos=%d", ad.name, len(demos)), func(t *testing.T) {
				base, err := ad.adapter.Format(sigQA(), demos, sigInputs())
				require.NoError(t, err)
				got, err := ad.adapter.Format(sigQA(), demos, sigWith(sigInputs(), "history", prompt.History{Messages: sigTurns(2)}))
				require.NoError(t, err)
				require.Len(t, got, len(base)+4, sigDump(got))
				assert.Equal(t, base[:len(base)-1], got[:len(base)-1], "everything before the history is unchanged")
				assert.Equal(t, base[len(base)-1], got[len(got)-1], "the current request is unchanged")
				inserted := sigDump(got[len(base)-1 : len(got)-1])
				for _, s := range []string{"history question 0", "history answer 0", "history question 1", "history context 1", "history answer 1"} {
					assert.Contains(t, inserted, s)
				}
			})
		}
	}
}

// TestHistoryElementBecomesTwoMessages: "exactly 2*N messages SHALL be
// inserted into the LM request AND the inserted messages SHALL alternate
// roles user, then assistant for each history element", the user message
// holding the element's inputs and the assistant message its outputs,
// rendered the way a demo is.
func TestHistoryElementBecomesTwoMessages(t *testing.T) {
	for _, ad := range sigAdapters {
		for _, n := range []int{0, 1, 2, 5} {
			t.Run(fmt.Sprintf("%s/N=%d", ad.name, n), func(t *testing.T) {
				base, err := ad.adapter.Format(sigQA(), sigDemos(), sigInputs())
				require.NoError(t, err)
				got, err := ad.adapter.Format(sigQA(), sigDemos(), sigWith(sigInputs(), "history", &prompt.History{Messages: sigTurns(n)}))
				require.NoError(t, err)
				require.Len(t, got, len(base)+2*n, sigDump(got))

				inserted := got[len(base)-1 : len(got)-1]
				for i, m := range inserted {
					want := prompt.RoleUser
					if i%2 == 1 {
						want = prompt.RoleAssistant
					}
					assert.Equal(t, want, m.Role, "inserted message %d", i)
				}
				for i := range n {
					user, assistant := inserted[2*i].Content, inserted[2*i+1].Content
					assert.Contains(t, user, fmt.Sprintf("history question %d", i))
					assert.NotContains(t, user, fmt.Sprintf("history answer %d", i), "outputs stay out of the user message")
					assert.Contains(t, assistant, fmt.Sprintf("history answer %d", i))
					assert.NotContains(t, assistant, fmt.Sprintf("history question %d", i), "inputs stay out of the assistant message")
				}

				// A history element renders like a demo of the same map.
				asDemos, err := ad.adapter.Format(sigQA(), sigTurns(n), sigInputs())
				require.NoError(t, err)
				assert.Equal(t, asDemos[len(asDemos)-1-2*n:len(asDemos)-1], inserted)
			})
		}
	}
}

// TestHistoryPrecedesCurrentRequest: "all formatted history messages SHALL
// appear before the final user message that represents the current
// request", in the design's order: system (if any), demos, history, the
// current request.
func TestHistoryPrecedesCurrentRequest(t *testing.T) {
	for _, ad := range sigAdapters {
		for _, instr := range []string{"Answer the question from the context.", ""} {
			t.Run(fmt.Sprintf("%s/instructions=%t", ad.name, instr != ""), func(t *testing.T) {
				sig := sigQA()
				sig.Instructions = instr
				got, err := ad.adapter.Format(sig, sigDemos(), sigWith(sigInputs(), "history", prompt.History{Messages: sigTurns(3)}))
				require.NoError(t, err)

				i := 0
				if ad.name != "line" || instr != "" {
					require.Equal(t, prompt.RoleSystem, got[0].Role)
					i = 1
				}
				var section []string // "demo", "history", "request" per message
				for _, m := range got[i:] {
					switch {
					case strings.Contains(m.Content, "demo "):
						section = append(section, "demo")
					case strings.Contains(m.Content, "history "):
						section = append(section, "history")
					case strings.Contains(m.Content, "current "):
						section = append(section, "request")
					default:
						t.Fatalf("unexpected message %+v", m)
					}
				}
				assert.Equal(t, []string{"demo", "demo", "demo", "demo", "history", "history", "history", "history", "history", "history", "request"}, section, sigDump(got))
				last := got[len(got)-1]
				assert.Equal(t, prompt.RoleUser, last.Role, "the current request is the final user message")
				for _, m := range got[1:] {
					assert.NotEqual(t, prompt.RoleSystem, m.Role, "at most one system message, first")
				}
			})
		}
	}
}

// TestCurrentRequestExcludesHistoryField: "the final request message
// content SHALL be derived from the non-history input fields only", and is
// rendered as if no history was provided.
func TestCurrentRequestExcludesHistoryField(t *testing.T) {
	for _, ad := range sigAdapters {
		for _, key := range []string{"history", "History"} {
			t.Run(ad.name+"/"+key, func(t *testing.T) {
				without, err := ad.adapter.Format(sigWithoutHistory(sigQA()), nil, sigInputs())
				require.NoError(t, err)
				got, err := ad.adapter.Format(sigQA(), nil, sigWith(sigInputs(), key, prompt.History{Messages: sigTurns(2)}))
				require.NoError(t, err)

				last := got[len(got)-1]
				assert.Equal(t, without[len(without)-1], last)
				assert.Contains(t, last.Content, "current question")
				assert.Contains(t, last.Content, "current context")
				for _, leak := range []string{"history question", "history answer", "Messages", "Earlier turns", "History:"} {
					assert.NotContains(t, last.Content, leak, "history leaked into the current request")
				}
				if got[0].Role == prompt.RoleSystem {
					assert.NotContains(t, got[0].Content, "history", "the system message does not describe the history field")
				}
			})
		}
	}
}

// TestInvalidHistoryValue: "WHEN the history field value is not a History
// with a messages list THEN the call SHALL fail with a tagged error ... the
// error SHALL include the tag :invalid_history_value".
func TestInvalidHistoryValue(t *testing.T) {
	tests := []struct {
		name   string
		value  any
		reason string
	}{
		{"string", "earlier we talked", "want prompt.History or *prompt.History, got string"},
		{"int", 42, "got int"},
		{"map", map[string]any{"messages": []map[string]any{}}, "got map[string]interface {}"},
		{"bare messages", []map[string]any{{"question": "q", "answer": "a"}}, "got []map[string]interface {}"},
		{"look-alike struct", struct{ Messages []map[string]any }{}, "got struct { Messages []map[string]interface {} }"},
		{"nil *History", (*prompt.History)(nil), "got a nil *prompt.History"},
		{"**History", new(*prompt.History), "got **prompt.History"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inputs := sigWith(sigInputs(), "HISTORY", tt.value)
			check := func(t *testing.T, msgs []prompt.Message, err error) {
				t.Helper()
				require.ErrorIs(t, err, prompt.ErrInvalidHistoryValue)
				assert.NotErrorIs(t, err, prompt.ErrInvalidHistoryElement)
				var he *prompt.HistoryError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, "history", he.Field)
				assert.Equal(t, -1, he.Index)
				assert.Contains(t, he.Reason, tt.reason)
				assert.Contains(t, err.Error(), "invalid_history_value")
				assert.Nil(t, msgs, "no partial messages")
			}
			check(t, nil, sigQA().Validate(inputs))
			for _, ad := range sigAdapters {
				t.Run(ad.name, func(t *testing.T) {
					msgs, err := ad.adapter.Format(sigQA(), sigDemos(), inputs)
					check(t, msgs, err)
				})
			}
		})
	}
}

// TestInvalidHistoryElement: "WHEN a history message contains no signature
// input fields or contains no signature output fields THEN the call SHALL
// fail with a tagged error describing which history element is invalid
// AND the error SHALL include the tag :invalid_history_element and the
// failing element index".
func TestInvalidHistoryElement(t *testing.T) {
	ok := map[string]any{"question": "q", "answer": "a"}
	const (
		noInput  = "no signature input field (want one of question, context)"
		noOutput = "no signature output field (want one of answer, confidence)"
	)
	tests := []struct {
		name     string
		messages []map[string]any
		index    int
		reason   string
	}{
		{"no inputs", []map[string]any{{"answer": "a"}}, 0, noInput},
		{"no outputs", []map[string]any{ok, {"question": "q", "context": "c"}}, 1, noOutput},
		{"history key is not an input", []map[string]any{ok, ok, {"history": "h", "answer": "a"}}, 2, noInput},
		{"unknown keys only", []map[string]any{{"prompt": "q", "reply": "a"}}, 0, noInput},
		{"empty map", []map[string]any{ok, {}}, 1, noInput},
		{"nil map", []map[string]any{nil}, 0, noInput},
		{"nil values are absent", []map[string]any{{"question": "q", "answer": nil}}, 0, noOutput},
		{"first failing element", []map[string]any{ok, {"question": "q"}, {"answer": "a"}}, 1, noOutput},
		{"input checked before output", []map[string]any{{"other": 1}}, 0, noInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inputs := sigWith(sigInputs(), "history", prompt.History{Messages: tt.messages})
			check := func(t *testing.T, msgs []prompt.Message, err error) {
				t.Helper()
				require.ErrorIs(t, err, prompt.ErrInvalidHistoryElement)
				assert.NotErrorIs(t, err, prompt.ErrInvalidHistoryValue)
				var he *prompt.HistoryError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, tt.index, he.Index)
				assert.Equal(t, "history", he.Field)
				assert.Equal(t, tt.reason, he.Reason)
				assert.Contains(t, err.Error(), fmt.Sprintf("invalid_history_element: field \"history\" element %d: ", tt.index))
				assert.Nil(t, msgs, "no partial messages")
			}
			check(t, nil, sigQA().Validate(inputs))
			for _, ad := range sigAdapters {
				t.Run(ad.name, func(t *testing.T) {
					msgs, err := ad.adapter.Format(sigQA(), sigDemos(), inputs)
					check(t, msgs, err)
				})
			}
		})
	}

	t.Run("signature with no other input", func(t *testing.T) {
		sig := prompt.Signature{
			Inputs:  []prompt.Field{{Name: "history", Kind: prompt.KindHistory}},
			Outputs: []prompt.Field{{Name: "answer"}},
		}
		err := sig.Validate(map[string]any{"history": prompt.History{Messages: []map[string]any{{"answer": "a"}}}})
		var he *prompt.HistoryError
		require.ErrorAs(t, err, &he)
		assert.Equal(t, 0, he.Index)
		assert.Equal(t, "no signature input field (the signature has none besides the history field)", he.Reason)
	})
}

// TestFieldOrderAndPresence: "Field order MUST follow the signature field
// order" and "Only fields present in the history element are rendered".
func TestFieldOrderAndPresence(t *testing.T) {
	sig := prompt.Signature{
		Inputs: []prompt.Field{
			{Name: "alpha"}, {Name: "beta"},
			{Name: "turns", Kind: prompt.KindHistory},
			{Name: "gamma"},
		},
		Outputs: []prompt.Field{{Name: "xray"}, {Name: "yankee"}, {Name: "zulu"}},
	}
	// Keys written in reverse order and some fields missing; map order is
	// random anyway.
	element := map[string]any{"zulu": "z", "xray": "x", "gamma": "g", "alpha": "a"}
	inputs := map[string]any{"gamma": "G", "beta": "B", "turns": prompt.History{Messages: []map[string]any{element}}}
	tests := []struct {
		adapter   prompt.Adapter
		user      string
		assistant string
		request   string
	}{
		{prompt.LineAdapter{}, "Alpha: a\nGamma: g", "Xray: x\nZulu: z", "Beta: B\nGamma: G"},
		{prompt.JSONAdapter{}, `{"alpha":"a","gamma":"g"}`, `{"xray":"x","zulu":"z"}`, `{"beta":"B","gamma":"G"}`},
		{
			prompt.MarkerAdapter{},
			"[[ ## alpha ## ]]\na\n\n[[ ## gamma ## ]]\ng",
			"[[ ## xray ## ]]\nx\n\n[[ ## zulu ## ]]\nz\n\n[[ ## completed ## ]]",
			"[[ ## beta ## ]]\nB\n\n[[ ## gamma ## ]]\nG\n\n" +
				"Respond with the corresponding output fields, starting with the field `[[ ## xray ## ]]`, then `[[ ## yankee ## ]]`, then `[[ ## zulu ## ]]`, and then ending with the marker for `[[ ## completed ## ]]`.",
		},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T", tt.adapter), func(t *testing.T) {
			for range 20 { // map iteration order must not matter
				got, err := tt.adapter.Format(sig, nil, inputs)
				require.NoError(t, err)
				n := len(got)
				require.GreaterOrEqual(t, n, 3)
				assert.Equal(t, []prompt.Message{
					{Role: prompt.RoleUser, Content: tt.user},
					{Role: prompt.RoleAssistant, Content: tt.assistant},
					{Role: prompt.RoleUser, Content: tt.request},
				}, got[n-3:])
			}
		})
	}
}

// TestHistoryLinesAreLabelValue: "Fields are rendered as Field: value
// lines" (the line adapter): labels default to the name with its first
// letter upper-cased; strings as they are, other values as compact JSON
// without HTML escaping.
func TestHistoryLinesAreLabelValue(t *testing.T) {
	sig := prompt.Signature{
		Inputs: []prompt.Field{
			{Name: "user_id"},
			{Name: "query", Label: "Search query"},
			{Name: "filters"},
			{Name: "Count"},
			{Name: "history", Kind: prompt.KindHistory},
		},
		Outputs: []prompt.Field{{Name: "results"}, {Name: "done"}, {Name: "score"}, {Name: "note"}},
	}
	element := map[string]any{
		"userId":  17,
		"query":   "a <b> & c\nsecond line",
		"filters": map[string]any{"lang": "go", "tags": []string{"<x>", "y&z"}},
		"count":   nil,
		"results": []any{"r1", 2, nil},
		"done":    true,
		"score":   0.25,
		"note":    "",
	}
	got, err := prompt.LineAdapter{}.Format(sig, nil, map[string]any{"history": prompt.History{Messages: []map[string]any{element}}, "count": 3})
	require.NoError(t, err)
	assert.Equal(t, []prompt.Message{
		{Role: prompt.RoleUser, Content: "User_id: 17\nSearch query: a <b> & c\nsecond line\nFilters: {\"lang\":\"go\",\"tags\":[\"<x>\",\"y&z\"]}"},
		{Role: prompt.RoleAssistant, Content: "Results: [\"r1\",2,null]\nDone: true\nScore: 0.25\nNote: "},
		{Role: prompt.RoleUser, Content: "Count: 3"},
	}, got)
}

// FuzzFormat builds history elements from arbitrary keys and values: no
// adapter panics, and each either fails with a tagged history error or
// inserts exactly 2·N messages, alternating user and assistant, before the
// current request.
func FuzzFormat(f *testing.F) {
	f.Add("question", "q", "answer", "a", "context", "c", uint8(2))
	f.Add("Question", "", "ANSWER", "", "user-id", "\x00", uint8(1))
	f.Add("history", "h", "confidence", "0.5", "", "", uint8(3))
	f.Add("q", "x", "answer", "<&>", "CONTEXT", "\xff", uint8(0))
	f.Add("qUeStIoN", "[[ ## answer ## ]]", "ans_wer", "[[ ## completed ## ]]", "_-_", "{}", uint8(4))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string, n uint8) {
		var messages []map[string]any
		for i := range int(n % 6) {
			// Vary the elements so that some fail and some pass.
			el := map[string]any{k1: v1}
			if i%2 == 0 {
				el[k2] = v2
			}
			if i%3 != 1 {
				el[k3] = v3
			}
			messages = append(messages, el)
		}
		inputs := map[string]any{k1: v1, k3: v3, "history": prompt.History{Messages: messages}}
		demos := []map[string]any{{k1: v1, k2: v2}, {k2: v2, k3: v3}}
		sig := sigQA()
		verr := sig.Validate(inputs)
		for _, ad := range sigAdapters {
			msgs, err := ad.adapter.Format(sig, demos, inputs)
			if err != nil {
				var he *prompt.HistoryError
				if !errors.As(err, &he) || !errors.Is(err, prompt.ErrInvalidHistoryElement) || he.Index < 0 || he.Index >= len(messages) {
					t.Fatalf("%s: unexpected error %v", ad.name, err)
				}
				if msgs != nil {
					t.Fatalf("%s: messages with an error", ad.name)
				}
				if verr == nil || verr.Error() != err.Error() {
					t.Fatalf("%s: Validate gave %v, Format %v", ad.name, verr, err)
				}
				continue
			}
			if verr != nil {
				t.Fatalf("%s: Validate gave %v, Format none", ad.name, verr)
			}
			base, err := ad.adapter.Format(sig, demos, sigWithoutKey(inputs, "history"))
			if err != nil {
				t.Fatalf("%s: without history: %v", ad.name, err)
			}
			if len(msgs) != len(base)+2*len(messages) {
				t.Fatalf("%s: %d messages, want %d+2·%d", ad.name, len(msgs), len(base), len(messages))
			}
			for i, m := range msgs[len(base)-1 : len(msgs)-1] {
				want := prompt.RoleUser
				if i%2 == 1 {
					want = prompt.RoleAssistant
				}
				if m.Role != want {
					t.Fatalf("%s: inserted message %d has role %s", ad.name, i, m.Role)
				}
			}
			if msgs[len(msgs)-1] != base[len(base)-1] {
				t.Fatalf("%s: the current request changed", ad.name)
			}
		}
	})
}

// sigWithoutKey returns a copy of m without the keys that name field.
func sigWithoutKey(m map[string]any, field string) map[string]any {
	norm := strings.NewReplacer("_", "", "-", "")
	out := make(map[string]any, len(m))
	for k, v := range m {
		if norm.Replace(strings.ToLower(k)) != norm.Replace(strings.ToLower(field)) {
			out[k] = v
		}
	}
	return out
}
