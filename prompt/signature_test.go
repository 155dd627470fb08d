package prompt_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/prompt"
)

// updateSignature rewrites the signature adapters' golden files; the
// assembler's golden files have their own flag, -update.
var updateSignature = flag.Bool("update-signature", false, "rewrite the signature adapters' golden files in testdata/")

// sigAdapters are the adapters every history requirement is checked on.
var sigAdapters = []struct {
	name    string
	adapter prompt.Adapter
}{
	{"line", prompt.LineAdapter{}},
	{"json", prompt.JSONAdapter{}},
	{"marker", prompt.MarkerAdapter{}},
}

// sigQA is the test signature: question, history (between the other two
// inputs, to show it is taken out wherever it stands), context -> answer,
// confidence.
func sigQA() prompt.Signature {
	return prompt.Signature{
		Instructions: "Answer the question from the context.",
		Inputs: []prompt.Field{
			{Name: "question", Description: "The user's question."},
			{Name: "history", Description: "Earlier turns.", Kind: prompt.KindHistory},
			{Name: "context", Description: "Background passages."},
		},
		Outputs: []prompt.Field{
			{Name: "answer", Description: "A short answer."},
			{Name: "confidence"},
		},
	}
}

// sigWithoutHistory returns s with its history field removed from Inputs.
func sigWithoutHistory(s prompt.Signature) prompt.Signature {
	var in []prompt.Field
	for _, f := range s.Inputs {
		if f.Kind != prompt.KindHistory {
			in = append(in, f)
		}
	}
	s.Inputs = in
	return s
}

// sigDemos are two complete demos of sigQA.
func sigDemos() []map[string]any {
	return []map[string]any{
		{"question": "demo question 0", "context": "demo context 0", "answer": "demo answer 0", "confidence": 0.5},
		{"question": "demo question 1", "answer": "demo answer 1"},
	}
}

// sigTurns are n valid history elements of sigQA, each with its own
// markers ("history question 2").
func sigTurns(n int) []map[string]any {
	turns := make([]map[string]any, n)
	for i := range turns {
		turns[i] = map[string]any{
			"question": fmt.Sprintf("history question %d", i),
			"answer":   fmt.Sprintf("history answer %d", i),
		}
		if i%2 == 1 {
			turns[i]["context"] = fmt.Sprintf("history context %d", i)
			turns[i]["confidence"] = i
		}
	}
	return turns
}

// sigInputs are the call's inputs of sigQA, without a history key.
func sigInputs() map[string]any {
	return map[string]any{"question": "current question", "context": "current context"}
}

// sigWith returns a copy of m with key set to v.
func sigWith(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[key] = v
	return out
}

// sigGolden compares got with testdata/name, or rewrites it under
// -update-signature.
func sigGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateSignature {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./prompt -run %s -update-signature to create it", t.Name())
	assert.Equal(t, string(want), got, "(-want +got) of %s", path)
}

// sigDump renders messages for golden files and failure output.
func sigDump(msgs []prompt.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "=== %s ===\n%s\n", m.Role, m.Content)
	}
	return b.String()
}

func TestHistoryFieldFoundByKind(t *testing.T) {
	f, ok := sigQA().HistoryField()
	require.True(t, ok)
	assert.Equal(t, "history", f.Name)

	_, ok = sigWithoutHistory(sigQA()).HistoryField()
	assert.False(t, ok)

	named := prompt.Signature{Inputs: []prompt.Field{{Name: "history"}, {Name: "turns", Kind: prompt.KindHistory}}}
	f, ok = named.HistoryField()
	require.True(t, ok)
	assert.Equal(t, "turns", f.Name, "found by Kind, not by the name \"history\"")
}

// TestHistoryFoundByKindNotName: the design's Decision 2, detection by the
// field's type, never by its name.
func TestHistoryFoundByKindNotName(t *testing.T) {
	turns := prompt.History{Messages: []map[string]any{{"question": "old question", "answer": "old answer"}}}
	// "history" is an ordinary text field; "turns" is the history field.
	byKind := prompt.Signature{
		Inputs: []prompt.Field{
			{Name: "question"},
			{Name: "history", Description: "A text field that happens to be called history."},
			{Name: "turns", Kind: prompt.KindHistory},
		},
		Outputs: []prompt.Field{{Name: "answer"}},
	}
	// No field of kind KindHistory at all, though one is named "history".
	noKind := prompt.Signature{
		Inputs:  []prompt.Field{{Name: "question"}, {Name: "history"}},
		Outputs: []prompt.Field{{Name: "answer"}},
	}
	for _, ad := range sigAdapters {
		t.Run(ad.name, func(t *testing.T) {
			// The text field named history is rendered in the request;
			// the history field named turns becomes messages.
			msgs, err := ad.adapter.Format(byKind, nil, map[string]any{
				"question": "new question", "history": "plain text", "turns": turns,
			})
			require.NoError(t, err)
			base, err := ad.adapter.Format(byKind, nil, map[string]any{"question": "new question", "history": "plain text"})
			require.NoError(t, err)
			require.Len(t, msgs, len(base)+2, sigDump(msgs))
			last := msgs[len(msgs)-1]
			assert.Contains(t, last.Content, "plain text")
			assert.NotContains(t, last.Content, "old question")
			assert.Contains(t, msgs[len(msgs)-3].Content, "old question")
			assert.Contains(t, msgs[len(msgs)-2].Content, "old answer")

			// Without a KindHistory field a History value under the key
			// "history" is just a value: no messages are inserted.
			msgs, err = ad.adapter.Format(noKind, nil, map[string]any{"question": "new question", "history": turns})
			require.NoError(t, err)
			base, err = ad.adapter.Format(noKind, nil, map[string]any{"question": "new question"})
			require.NoError(t, err)
			assert.Len(t, msgs, len(base), sigDump(msgs))
			assert.Contains(t, msgs[len(msgs)-1].Content, "old question", "rendered as a value of the text field")
			assert.NoError(t, noKind.Validate(map[string]any{"history": 42}), "no history field, nothing to validate")
		})
	}
}

// TestKeyConventions: keys of history elements, demos and inputs match a
// field whatever their case or snake/camel spelling, like normal inputs.
func TestKeyConventions(t *testing.T) {
	sig := prompt.Signature{
		Inputs: []prompt.Field{
			{Name: "user_id"},
			{Name: "chat_history", Kind: prompt.KindHistory},
		},
		Outputs: []prompt.Field{{Name: "reply_text"}},
	}
	canonical := map[string]any{"user_id": "u1", "reply_text": "hi"}
	spellings := []struct{ in, out string }{
		{"user_id", "reply_text"},
		{"userId", "replyText"},
		{"UserID", "ReplyText"},
		{"USER-ID", "REPLY-TEXT"},
		{"user-id", "reply_Text"},
		{"USER_ID", "REPLYTEXT"},
	}
	histKeys := []string{"chat_history", "chatHistory", "ChatHistory", "CHAT-HISTORY"}
	for _, ad := range sigAdapters {
		t.Run(ad.name, func(t *testing.T) {
			want, err := ad.adapter.Format(sig, []map[string]any{canonical},
				map[string]any{"user_id": "u2", "chat_history": prompt.History{Messages: []map[string]any{canonical}}})
			require.NoError(t, err)
			for i, sp := range spellings {
				el := map[string]any{sp.in: "u1", sp.out: "hi", "unknown_key": "ignored"}
				inputs := map[string]any{
					sp.in:                     "u2",
					histKeys[i%len(histKeys)]: prompt.History{Messages: []map[string]any{el}},
					"someOtherKey":            "ignored",
				}
				got, err := ad.adapter.Format(sig, []map[string]any{el}, inputs)
				require.NoError(t, err, "%+v", sp)
				assert.Equal(t, want, got, "spelling %+v", sp)
				assert.NotContains(t, sigDump(got), "ignored", "unknown keys are ignored")
			}
		})
	}
}

// TestKeyConventionsDeterministic: when several keys name one field, the
// exact name wins, then the least key in byte order, whatever the map's
// iteration order.
func TestKeyConventionsDeterministic(t *testing.T) {
	sig := prompt.Signature{Inputs: []prompt.Field{{Name: "user_id"}}, Outputs: []prompt.Field{{Name: "reply"}}}
	tests := []struct {
		name   string
		inputs map[string]any
		want   string
	}{
		{"exact name wins", map[string]any{"userId": "a", "user_id": "b", "USER-ID": "c", "UserId": "d"}, "User_id: b"},
		{"least key wins", map[string]any{"userId": "a", "USER-ID": "c", "UserId": "d"}, "User_id: c"},
		{"nil value is absent", map[string]any{"user_id": nil, "userId": "a"}, "User_id: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 50 {
				msgs, err := prompt.LineAdapter{}.Format(sig, nil, tt.inputs)
				require.NoError(t, err)
				require.Equal(t, tt.want, msgs[len(msgs)-1].Content)
			}
		})
	}
}

// TestSignatureMustBeWellFormed: at most one history field, among the
// inputs; names present and distinct once normalized; known kinds; at
// least one output. Format and Validate fail alike.
func TestSignatureMustBeWellFormed(t *testing.T) {
	out := []prompt.Field{{Name: "answer"}}
	tests := []struct {
		name string
		sig  prompt.Signature
		msg  string
	}{
		{"two history fields", prompt.Signature{
			Inputs:  []prompt.Field{{Name: "question"}, {Name: "h1", Kind: prompt.KindHistory}, {Name: "h2", Kind: prompt.KindHistory}},
			Outputs: out,
		}, `two history fields, "h1" and "h2"; a signature has at most one`},
		{"history output", prompt.Signature{
			Inputs:  []prompt.Field{{Name: "question"}},
			Outputs: []prompt.Field{{Name: "answer"}, {Name: "turns", Kind: prompt.KindHistory}},
		}, `history field "turns" is an output; it must be an input`},
		{"empty name", prompt.Signature{Inputs: []prompt.Field{{Name: ""}}, Outputs: out}, `Inputs[0] has no name`},
		{"name of separators", prompt.Signature{Inputs: []prompt.Field{{Name: "q"}}, Outputs: []prompt.Field{{Name: "_-"}}}, `Outputs[0] has no name`},
		{"duplicate spelling", prompt.Signature{Inputs: []prompt.Field{{Name: "user_id"}, {Name: "userId"}}, Outputs: out}, `fields "user_id" and "userId" have the same name`},
		{"input and output share a name", prompt.Signature{Inputs: []prompt.Field{{Name: "answer"}}, Outputs: out}, `fields "answer" and "answer"`},
		{"unknown kind", prompt.Signature{Inputs: []prompt.Field{{Name: "q", Kind: prompt.FieldKind(7)}}, Outputs: out}, `field "q" has unknown kind FieldKind(7)`},
		{"no outputs", prompt.Signature{Inputs: []prompt.Field{{Name: "q"}}}, `no output fields`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sig.Validate(nil)
			require.ErrorIs(t, err, prompt.ErrInvalidSignature)
			assert.Contains(t, err.Error(), tt.msg)
			for _, ad := range sigAdapters {
				msgs, err := ad.adapter.Format(tt.sig, nil, map[string]any{"q": "x"})
				assert.ErrorIs(t, err, prompt.ErrInvalidSignature, ad.name)
				assert.Contains(t, err.Error(), tt.msg, ad.name)
				assert.Nil(t, msgs, "%s: no partial messages", ad.name)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	sig := sigQA()
	tests := []struct {
		name   string
		inputs map[string]any
		want   error
	}{
		{"nil inputs", nil, nil},
		{"no history key", sigInputs(), nil},
		{"nil history", sigWith(sigInputs(), "history", nil), nil},
		{"valid history", sigWith(sigInputs(), "history", prompt.History{Messages: sigTurns(3)}), nil},
		{"valid *History", sigWith(sigInputs(), "History", &prompt.History{Messages: sigTurns(1)}), nil},
		{"invalid value", sigWith(sigInputs(), "history", "text"), prompt.ErrInvalidHistoryValue},
		{"invalid element", sigWith(sigInputs(), "history", prompt.History{Messages: []map[string]any{{"answer": "a"}}}), prompt.ErrInvalidHistoryElement},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sig.Validate(tt.inputs)
			if tt.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.want)
			}
			// Format fails exactly when Validate does, with the same error.
			for _, ad := range sigAdapters {
				_, ferr := ad.adapter.Format(sig, sigDemos(), tt.inputs)
				assert.Equal(t, err, ferr, ad.name)
			}
		})
	}
}

func TestFieldKindString(t *testing.T) {
	assert.Equal(t, "text", prompt.KindText.String())
	assert.Equal(t, "history", prompt.KindHistory.String())
	assert.Equal(t, "FieldKind(-1)", prompt.FieldKind(-1).String())
	var f prompt.Field
	assert.Equal(t, prompt.KindText, f.Kind, "the zero kind is text")
}

func TestHistoryErrorMessage(t *testing.T) {
	err := error(&prompt.HistoryError{Tag: prompt.ErrInvalidHistoryElement, Field: "history", Index: 1, Reason: "no signature output field (want one of answer)"})
	assert.Equal(t, `prompt: invalid_history_element: field "history" element 1: no signature output field (want one of answer)`, err.Error())
	assert.ErrorIs(t, err, prompt.ErrInvalidHistoryElement)
	assert.NotErrorIs(t, err, prompt.ErrInvalidHistoryValue)

	err = fmt.Errorf("calling: %w", &prompt.HistoryError{Tag: prompt.ErrInvalidHistoryValue, Field: "turns", Index: -1, Reason: "want prompt.History or *prompt.History, got int"})
	assert.Equal(t, `calling: prompt: invalid_history_value: field "turns": want prompt.History or *prompt.History, got int`, err.Error())
	var he *prompt.HistoryError
	require.True(t, errors.As(err, &he))
	assert.Equal(t, -1, he.Index)
	assert.ErrorIs(t, err, prompt.ErrInvalidHistoryValue)
	assert.Equal(t, "invalid_history_value", prompt.ErrInvalidHistoryValue.Error(), "the spec's tag")
	assert.Equal(t, "invalid_history_element", prompt.ErrInvalidHistoryElement.Error(), "the spec's tag")
}
