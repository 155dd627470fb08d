package record

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMemoryHoldsAnAnswerOnce: once the next record of a trace carries an
// answer back in its args, the history holds it there only, and reads it
// back the same; an answer the next record does not carry stays whole.
func TestMemoryHoldsAnAnswerOnce(t *testing.T) {
	user := func(s string) Message { return TextMessage(RoleUser, s) }
	answer := TextMessage(RoleAssistant, "Lisbon in May is mild: 15 to 24 °C.")
	other := TextMessage(RoleAssistant, "an answer nobody sends back")
	mk := func(id string, out *Message, msgs ...Message) Record {
		return Record{CallID: id, TraceID: "t", Timestamp: "2026-11-29T09:00:00Z", Speaker: SpeakerUser,
			MethodName: "openai.chat.completions.create", Args: AppendMessages(nil, msgs), Kwargs: json.RawMessage(`{}`),
			Outcome: Success("chat.completion"), Output: out, Version: Version}
	}
	question := strings.Repeat("What is the weather like in Lisbon in May? ", 8) // shared with the next records: long enough to be linked
	m := NewMemory(10)
	m.Add(mk("c1", &answer, user(question)))
	m.Add(mk("c2", &other, user(question), answer, user("and to pack?")))
	m.Add(mk("c3", nil, user(question), answer, user("and to pack?"), user("hello?")))

	m.mu.RLock()
	first, second := m.ring[m.start], m.ring[(m.start+1)%len(m.ring)]
	m.mu.RUnlock()
	if first.Output != nil || first.outputIn == nil {
		t.Fatalf("the first answer is held twice: Output %v, outputIn %q", first.Output, first.outputIn)
	}
	if second.Output == nil {
		t.Fatal("an answer the next record does not carry back was dropped")
	}
	recs := m.Records()
	if got, want := string(recs[0].Output.AppendJSON(nil)), string(answer.AppendJSON(nil)); got != want {
		t.Fatalf("answer read back %s, want %s", got, want)
	}
	if got, want := string(recs[1].Output.AppendJSON(nil)), string(other.AppendJSON(nil)); got != want {
		t.Fatalf("answer %s, want %s", got, want)
	}
}
