package middleware

import (
	"strings"
	"testing"
)

// guidanceSeeds hold the guidance at the start, in the middle, at the end,
// twice, cut short, with its anchor alone, and prose that repeats its
// first bytes ("Th") every few words.
var guidanceSeeds = []string{
	HistoryGuidance,
	"system prompt\n\n" + HistoryGuidance + "\n\nlatest records",
	strings.Repeat("The quick brown fox. ", 50) + HistoryGuidance,
	HistoryGuidance + HistoryGuidance,
	HistoryGuidance[:len(HistoryGuidance)-1],
	HistoryGuidance[1:],
	guidanceAnchor + " " + HistoryGuidance,
	HistoryGuidance[:guidanceAnchorAt+len(guidanceAnchor)] + HistoryGuidance,
	strings.Repeat("The history", 40),
	"", "_", guidanceAnchor,
}

// indexGuidance finds the guidance where strings.Index does.
func TestIndexGuidance(t *testing.T) {
	for _, s := range guidanceSeeds {
		if got, want := indexGuidance(s), strings.Index(s, HistoryGuidance); got != want {
			t.Errorf("indexGuidance(%.60q…) = %d, want %d", s, got, want)
		}
	}
}

func FuzzIndexGuidance(f *testing.F) {
	for _, s := range guidanceSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := indexGuidance(s), strings.Index(s, HistoryGuidance); got != want {
			t.Fatalf("indexGuidance(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkIndexGuidance looks for the guidance in a 4 KiB answer of
// prose that has none, as the hash of every answer does, beside
// strings.Index.
func BenchmarkIndexGuidance(b *testing.B) {
	answer := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)[:3900]
	b.Run("func=indexGuidance", func(b *testing.B) {
		for b.Loop() {
			indexGuidance(answer)
		}
	})
	b.Run("func=strings.Index", func(b *testing.B) {
		for b.Loop() {
			strings.Index(answer, HistoryGuidance)
		}
	})
}
