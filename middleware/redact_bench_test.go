package middleware

import (
	"strings"
	"testing"
)

var proseBody = []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)[:4000] + `"}]}`)

// BenchmarkRedactClean is the cost of looking for secrets in a body
// that has none, which is nearly every body.
func BenchmarkRedactClean(b *testing.B) {
	b.SetBytes(int64(len(proseBody)))
	b.ReportAllocs()
	for b.Loop() {
		redactBytes(proseBody)
	}
}
