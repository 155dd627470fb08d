package redact

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// redactSeeds are bodies with secrets that overlap, touch or hide in one
// another's tokens, and some with none.
var redactSeeds = []string{
	"Bearer abcdefghBearer secret12345",
	"bearer abcdefghBearer secret12345",
	"Bearer abcdefghbearer secret12345",
	"Bearer abcdefghbearer Bearer bearer secret12345678",
	"sk-abcdefghijklmnopqrstuvwx-sk-abcdefghijklmnopqrstuvwx",
	"?key=sk-abcdefghijklmnopqrstuvwx&api_key=AIzaSyA1234567890abcdefghijklmnopqrstu",
	"?key=abc&key=def", "&key=", "?api_key=ya29.a0AfH6SMBxxxxxxxxxxxxxxxxxx",
	`{"messages":[{"role":"user","content":"my key is sk-proj-abc_DEF-0123456789abcdefgh, and Bearer eyJhbGciOi.J9.abc"}]}`,
	"task-abcdefghijklmnopqrstuvwxyz is a word", "nothing here", "",
}

// redactSpec is redaction as specified, slowly: a byte is secret when a
// secret that any pattern finds at any position covers it, and each run
// of secret bytes becomes one Redacted. SecretBytes must agree with it:
// the search that skips from anchor to anchor, and the merging of what
// the patterns found, are what it checks.
func redactSpec(b []byte) []byte {
	secret := make([]bool, len(b))
	found := false
	for _, p := range secretPatterns {
		for start := 0; start+len(p.prefix) <= len(b); start++ {
			if string(b[start:start+len(p.prefix)]) != p.prefix {
				continue
			}
			if end, ok := p.secretAt(b, start); ok {
				for k := start + p.keep; k < end; k++ {
					secret[k] = true
				}
				found = true
			}
		}
	}
	if !found {
		return b
	}
	var out []byte
	for k := 0; k < len(b); {
		if !secret[k] {
			out = append(out, b[k])
			k++
			continue
		}
		out = append(out, Redacted...)
		for k < len(b) && secret[k] {
			k++
		}
	}
	return out
}

func TestSecretBytesMatchesItsSpec(t *testing.T) {
	for _, in := range redactSeeds {
		if got, want := SecretBytes([]byte(in)), redactSpec([]byte(in)); !bytes.Equal(got, want) {
			t.Errorf("SecretBytes(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSecrets holds redaction to its spec on any input, and checks that it
// never changes its input and that a second pass changes nothing.
func FuzzSecrets(f *testing.F) {
	for _, s := range redactSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b := []byte(in)
		out := SecretBytes(b)
		if string(b) != in {
			t.Fatalf("SecretBytes changed its input: %q", b)
		}
		if want := redactSpec([]byte(in)); !bytes.Equal(out, want) {
			t.Fatalf("SecretBytes(%q) = %q, want %q", in, out, want)
		}
		if !strings.Contains(string(out), Redacted) && string(out) != in {
			t.Fatalf("SecretBytes(%q) = %q: changed without a secret", in, out)
		}
		if again := SecretBytes(out); !bytes.Equal(again, out) {
			t.Fatalf("a second pass changed %q to %q", out, again)
		}
	})
}

// TestSecretsLookAtEachByteOnce holds each pattern's search to linear work
// on bodies crowded with its prefix: the prefix after a letter (not a key,
// or not a URL parameter), after a separator (a secret, or too short to
// be one), and back to back. It counts the bytes each token scan looks at:
// a scan from every candidate to the end of the body would look at each
// byte thousands of times.
func TestSecretsLookAtEachByteOnce(t *testing.T) {
	for _, p := range secretPatterns {
		for _, unit := range []string{"x" + p.prefix, "-" + p.prefix, "?" + p.prefix, p.prefix, p.prefix + "abcdefgh "} {
			body := []byte(strings.Repeat(unit, 4096))
			looked := 0
			counted := p
			counted.alphabet = func(c byte) bool { looked++; return p.alphabet(c) }
			findSecrets(body, counted, nil)
			if looked > 2*len(body) {
				t.Errorf("%q: %d bytes looked at for a body of %d", unit, looked, len(body))
			}
		}
	}
}

// literalSeeds are bodies and credentials for indexLiteral: a key in
// prose, at either end, twice, cut short; a body crowded with the key's
// rarest byte or its first bytes; a credential of one letter repeated.
var literalSeeds = []struct{ s, v string }{
	{"my key is sk-proj-Ab3dEf9hIj, see", "sk-proj-Ab3dEf9hIj"},
	{"sk-proj-Ab3dEf9hIj", "sk-proj-Ab3dEf9hIj"},
	{"ask skip sk-proj-Ab3dEf9hI sk-proj-Ab3dEf9hIj", "sk-proj-Ab3dEf9hIj"},
	{strings.Repeat("sk-proj-Ab3dEf9hI", 50) + "j", "sk-proj-Ab3dEf9hIj"},
	{strings.Repeat("3", 500) + "x", strings.Repeat("3", 40) + "x"},
	{strings.Repeat("a", 1000), strings.Repeat("a", 9) + "b"},
	{strings.Repeat("a", 1000) + "b", strings.Repeat("a", 9) + "b"},
	{"AKIAIOSFODNN7EXAMPLE/20260101", "AKIAIOSFODNN7EXAMPLE"},
	{"short", "longer than the body"}, {"", "key12345"},
}

// indexLiteral finds a credential where strings.Index does.
func TestIndexLiteral(t *testing.T) {
	for _, c := range literalSeeds {
		if got, want := indexLiteral(c.s, c.v), strings.Index(c.s, c.v); got != want {
			t.Errorf("indexLiteral(%.40q…, %q) = %d, want %d", c.s, c.v, got, want)
		}
	}
}

func FuzzIndexLiteral(f *testing.F) {
	for _, c := range literalSeeds {
		f.Add(c.s, c.v)
	}
	f.Fuzz(func(t *testing.T, s, v string) {
		if got, want := indexLiteral(s, v), strings.Index(s, v); got != want {
			t.Fatalf("indexLiteral(%q, %q) = %d, want %d", s, v, got, want)
		}
		// Built from s, so that v is found as often as not.
		if len(s) > 2 {
			w := s[len(s)/3 : 2*len(s)/3+1]
			if got, want := indexLiteral(s, w), strings.Index(s, w); got != want {
				t.Fatalf("indexLiteral(%q, %q) = %d, want %d", s, w, got, want)
			}
		}
	})
}

// BenchmarkLiterals is the look for an API key's value in 4 KiB of prose
// that does not hold it, as in every body and answer of a call that
// carries one: a key of OpenAI's length now (164 bytes) and of its older
// one (51), beside bytes.Contains.
func BenchmarkLiterals(b *testing.B) {
	key := "sk-proj-" + strings.Repeat("Ab3dEf9hIjKlMn0pQr", 9)[:156]
	for _, k := range []string{key, key[:51]} {
		b.Run(fmt.Sprintf("key=%d/func=LiteralBytes", len(k)), func(b *testing.B) {
			for b.Loop() {
				LiteralBytes(proseBody, []string{k})
			}
		})
		b.Run(fmt.Sprintf("key=%d/func=bytes.Contains", len(k)), func(b *testing.B) {
			for b.Loop() {
				bytes.Contains(proseBody, []byte(k))
			}
		})
	}
}
