package redact

import (
	"bytes"
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
