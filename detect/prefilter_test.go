package detect

import (
	"strings"
	"testing"
)

func TestRarestByte(t *testing.T) {
	for name, want := range map[string]int{
		DefaultName: strings.IndexByte(DefaultName, '_'),
		"history":   strings.IndexByte("history", 'y'),
		"ctx":       strings.IndexByte("ctx", 'x'),
		"msgs":      strings.IndexByte("msgs", 'g'),
		"eee":       0, // ties: the first
		"Log2":      0, // a capital is rarer than any lowercase letter
	} {
		if got := rarestByte(name); got != want {
			t.Errorf("rarestByte(%q) = %d (%q), want %d (%q)", name, got, name[got], want, name[want])
		}
	}
}

func TestContainsAt(t *testing.T) {
	names := []string{DefaultName, "history", "ctx", "a", "aab"}
	texts := []string{
		"", "c", "_", "conversation_histor", "onversation_history",
		"conversation_history", "xconversation_historyx", "a_history conversation_history",
		"conversation_conversation_history", "history_", "hist", "aaab", "aab", "ab", "aaa",
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) + "ctx.conversation_history",
	}
	for _, name := range names {
		for anchor := range len(name) { // every anchor, not only the rarest
			for _, s := range texts {
				if got, want := containsAt(s, name, anchor), strings.Contains(s, name); got != want {
					t.Errorf("containsAt(%q, %q, %d) = %v, want %v", s, name, anchor, got, want)
				}
			}
		}
	}
}

// FuzzContainsAt holds the prefilter to strings.Contains: a name it misses
// would be a history query not detected.
func FuzzContainsAt(f *testing.F) {
	f.Add("a conversation_history.last(3)", DefaultName)
	f.Add("histhistory", "history")
	f.Add("aaab", "aab")
	f.Fuzz(func(t *testing.T, s, name string) {
		if name == "" {
			return
		}
		want := strings.Contains(s, name)
		if got := containsAt(s, name, rarestByte(name)); got != want {
			t.Fatalf("containsAt(%q, %q) = %v, want %v", s, name, got, want)
		}
		for anchor := range len(name) {
			if got := containsAt(s, name, anchor); got != want {
				t.Fatalf("containsAt(%q, %q, %d) = %v, want %v", s, name, anchor, got, want)
			}
		}
	})
}
