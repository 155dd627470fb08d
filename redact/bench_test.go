package redact

import (
	"fmt"
	"strings"
	"testing"
)

var proseBody = []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)[:4000] + `"}]}`)

// BenchmarkSecretsClean is the cost of looking for secrets in a body
// that has none, which is nearly every body.
func BenchmarkSecretsClean(b *testing.B) {
	b.SetBytes(int64(len(proseBody)))
	b.ReportAllocs()
	for b.Loop() {
		SecretBytes(proseBody)
	}
}

// BenchmarkSecretsCrowded is redaction of bodies crowded with prefixes that
// are not secrets ("xsk-": a key must not follow a letter), at two sizes:
// the time per byte must not grow with the body.
func BenchmarkSecretsCrowded(b *testing.B) {
	for _, size := range []int{16 << 10, 64 << 10} {
		body := []byte(strings.Repeat("xsk-", size/4))
		b.Run(fmt.Sprintf("size=%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				SecretBytes(body)
			}
		})
	}
}
