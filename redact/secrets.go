package redact

import (
	"bytes"
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unsafe"
)

// Redacted replaces every credential [Secrets] removes.
const Redacted = "[REDACTED]"

// IsCredentialHeader reports whether a header carries a credential
// (Authorization, Proxy-Authorization, api-key, x-api-key, x-goog-api-key,
// AWS's X-Amz-Security-Token, cookies): the recorder never records one,
// and nothing built on it (cassettes, exports) should.
func IsCredentialHeader(name string) bool { return secretHeaders[http.CanonicalHeaderKey(name)] }

// IsSecretParam reports whether a URL query parameter carries a credential
// (key=, api_key=, access_token=, ...): [SafeURL] removes it.
func IsSecretParam(name string) bool { return slices.Contains(secretParams, name) }

// hasSecretParam reports whether a raw query may hold a secret parameter:
// a quick look before the query is parsed.
func hasSecretParam(rawQuery string) bool {
	if rawQuery == "" {
		return false
	}
	for _, p := range secretParams {
		if strings.Contains(rawQuery, p) {
			return true
		}
	}
	return false
}

// MinCredentialLength is the shortest credential whose literal value is
// looked for wherever it may be echoed ([CredentialValues]): a shorter one
// (a test's dummy "k") would be found in ordinary text.
const MinCredentialLength = 8

// secretHeaders are never passed to providers, so never recorded.
var secretHeaders = map[string]bool{
	"Authorization":       true,
	"Proxy-Authorization": true,
	"Api-Key":             true,
	"X-Api-Key":           true,
	"X-Goog-Api-Key":      true,
	// An AWS session token: SigV4 signs it into the canonical request,
	// which AWS quotes back whole when a signature does not match.
	"X-Amz-Security-Token": true,
	"Cookie":               true,
	"Set-Cookie":           true,
}

// secretParams are query parameters removed from recorded URLs; the
// X-Amz- ones are a presigned AWS URL's signature, access key and session
// token.
var secretParams = []string{"key", "api_key", "api-key", "apikey", "access_token", "token",
	"X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token"}

// SafeHeader returns h without credential headers. Values are shared, not
// copied: nobody may modify them.
func SafeHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if !secretHeaders[http.CanonicalHeaderKey(k)] {
			out[k] = v
		}
	}
	return out
}

// SafeURL returns u as it may be recorded: without user info and secret
// query parameters, and with key-shaped strings and the literal values of
// the call's own credentials ([CredentialValues]) redacted from its path
// (a provider names an unknown endpoint after its path, and some gateways
// put keys there). It returns u itself when there is nothing to take out,
// else a copy; a nil u gives nil.
func SafeURL(u *url.URL, credentials ...string) *url.URL {
	if u == nil {
		return nil
	}
	p := Literals(Secrets(u.Path), credentials)
	if u.User == nil && p == u.Path && !hasSecretParam(u.RawQuery) {
		return u // nothing to take out: no copy (the usual case)
	}
	c := *u
	c.User = nil
	if p != c.Path {
		c.Path, c.RawPath = p, ""
	}
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for _, p := range secretParams {
			if q.Has(p) {
				q.Del(p)
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return &c
}

// A secret pattern: a prefix, then at least min characters of the
// secret's alphabet. keep is how much of the prefix survives ("Bearer ").
// anchor is the rare part of the prefix searched for first: searching for
// a prefix that starts with a common letter ("key=", "sk-") would stop at
// every k and s of a body; searching for "=" or "-" does not.
type secretPattern struct {
	prefix   string
	anchor   int // offset in prefix of the byte or bytes searched for
	keep     int
	min      int
	boundary bool // the prefix must not follow a letter or digit
	query    bool // the prefix must follow '?' or '&' (a URL parameter)
	alphabet func(byte) bool
}

func keyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func tokenChar(c byte) bool {
	return keyChar(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}

func paramChar(c byte) bool {
	return c > ' ' && c != '&' && c != '"' && c != '\'' && c != '#' && c != '<' && c != '>' && c != '\\'
}

var secretPatterns = []secretPattern{
	{prefix: "sk-", anchor: 2, min: 20, boundary: true, alphabet: keyChar},             // OpenAI, Anthropic
	{prefix: "AIza", min: 30, boundary: true, alphabet: keyChar},                       // Google API keys
	{prefix: "ya29.", anchor: 2, min: 20, boundary: true, alphabet: tokenChar},         // Google OAuth tokens
	{prefix: "Bearer ", keep: 7, min: 8, alphabet: tokenChar},                          // Authorization values
	{prefix: "bearer ", keep: 7, min: 8, alphabet: tokenChar},                          //
	{prefix: "key=", anchor: 3, keep: 4, min: 1, query: true, alphabet: paramChar},     // ?key= in URLs
	{prefix: "api_key=", anchor: 7, keep: 8, min: 1, query: true, alphabet: paramChar}, //
}

// Secrets replaces key-shaped strings in s with [Redacted]: OpenAI and
// Anthropic keys (sk-...), Google API keys (AIza...) and OAuth tokens
// (ya29....), bearer tokens, and key= query parameters. The recorder
// applies it to request and response bodies before parsing, and to error
// messages and log lines; use it for your own logs too.
func Secrets(s string) string {
	if s == "" {
		return s
	}
	// SecretBytes reads s's bytes in place and never writes them; it
	// returns them as they are when they hold no secret. (A quick check
	// for the prefixes first cost three times the search itself, which
	// looks for each prefix's rarest byte.)
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if out := SecretBytes(b); unsafe.SliceData(out) != unsafe.SliceData(b) {
		return string(out)
	}
	return s
}

// CredentialValues returns the literal values of the credentials a
// request carries: the secret headers (the token of an Authorization
// header without its scheme, the access key ID and signature of an AWS
// SigV4 one) and the secret query parameters, each at least
// [MinCredentialLength] long. The recorder redacts them wherever they
// appear in what it records ([Literals]), whatever their shape: a gateway
// may echo an Azure key (32 hex digits, not key-shaped) in an error body.
func CredentialValues(h http.Header, u *url.URL) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= MinCredentialLength && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for k, vs := range h {
		switch k = http.CanonicalHeaderKey(k); {
		case !secretHeaders[k] || k == "Set-Cookie":
		case k == "Cookie":
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					if _, val, ok := strings.Cut(c, "="); ok {
						add(val)
					}
				}
			}
		default:
			for _, v := range vs {
				scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
				if ok && !strings.ContainsAny(scheme, "=:") {
					v = token // "Bearer <token>", "Basic <base64>"
				}
				if ok && strings.HasPrefix(scheme, "AWS4-") {
					sigV4(token, add)
				}
				add(v)
			}
		}
	}
	if u != nil && u.RawQuery != "" {
		for pair := range strings.SplitSeq(u.RawQuery, "&") {
			k, raw, _ := strings.Cut(pair, "=")
			k, err := url.QueryUnescape(k)
			if err != nil || !IsSecretParam(k) {
				continue
			}
			// As sent, and decoded: a server may echo either (a session
			// token's '=' travels as %3D).
			add(raw)
			v, err := url.QueryUnescape(raw)
			if err != nil {
				continue
			}
			add(v)
			if k == "X-Amz-Credential" {
				add(accessKeyID(v))
			}
		}
	}
	return out
}

// sigV4 adds the parts of an AWS SigV4 Authorization header's value
// ("Credential=AKIA.../20260101/us-east-1/bedrock/aws4_request,
// SignedHeaders=..., Signature=<hex>") that identify the caller: the
// access key ID and the signature, each redacted wherever it appears
// (AWS quotes the credential scope and the string to sign back when a
// signature does not match).
func sigV4(v string, add func(string)) {
	for part := range strings.SplitSeq(v, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch name {
		case "Credential":
			add(accessKeyID(val))
		case "Signature":
			add(val)
		}
	}
}

// accessKeyID returns the access key ID of a SigV4 credential,
// "AKIA.../20260101/us-east-1/bedrock/aws4_request".
func accessKeyID(credential string) string {
	id, _, _ := strings.Cut(credential, "/")
	return id
}

// Literals replaces every occurrence of each of values in s with
// [Redacted].
func Literals(s string, values []string) string {
	for _, v := range values {
		if indexLiteral(s, v) >= 0 {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// LiteralBytes is [Literals] for bytes: b itself when it holds none, else
// a new slice, so the caller's bytes are never changed.
func LiteralBytes(b []byte, values []string) []byte {
	for _, v := range values {
		if indexLiteral(unsafe.String(unsafe.SliceData(b), len(b)), v) >= 0 {
			b = bytes.ReplaceAll(b, []byte(v), []byte(Redacted))
		}
	}
	return b
}

// indexLiteral is strings.Index(s, v), for a credential v in a body of
// text: it looks for v's rarest byte (rareAt) first. strings.Index looks
// for v's first two bytes, "sk" for an OpenAI key, which prose has every
// few words, and compares v at each; up to 63 bytes it compares v at every
// position once the first bytes mislead it often enough: 2 to 8 µs on 4
// KiB of prose, where this takes a tenth. When the rare byte misleads it
// too (a body of that byte), it hands the rest to strings.Index, which
// bounds its work.
func indexLiteral(s, v string) int {
	if len(v) == 0 || len(s) < len(v) {
		return strings.Index(s, v)
	}
	k := rareAt(v)
	c := v[k]
	fails := 0
	for i := k; i < len(s); {
		j := strings.IndexByte(s[i:], c)
		if j < 0 {
			return -1
		}
		start := i + j - k
		if len(s)-start < len(v) {
			return -1
		}
		if s[start:start+len(v)] == v {
			return start
		}
		if fails++; fails > 4+i>>4 {
			if r := strings.Index(s[start+1:], v); r >= 0 {
				return start + 1 + r
			}
			return -1
		}
		i += j + 1
	}
	return -1
}

// rareAt returns the index of the byte of v that is least common in text
// and JSON (byteRank), the first of them on a tie, among its first 32: a
// credential's first bytes vary enough, and a call looks for each of its
// credentials in several bodies and strings.
func rareAt(v string) int {
	k := 0
	for i := 1; i < min(len(v), 32); i++ {
		if byteRank[v[i]] < byteRank[v[k]] {
			k = i
		}
	}
	return k
}

// byteRank ranks bytes by how common they are in the text of a request
// or an answer, JSON and prose: higher is more common. Lower-case letters
// in the order of their frequency in English, and space above them, then
// the punctuation of sentences and JSON, digits, upper-case letters (the
// first letters of sentences most), and the rest.
var byteRank = func() (r [256]uint8) {
	for c := range 256 {
		r[c] = 10 // control, non-ASCII, rare punctuation
	}
	for i, c := range "zqxjkvbpygfwmucldrhsnioate" {
		r[c] = uint8(200 + i)
	}
	for _, c := range "\n\",:.,{}[]-'()/" {
		r[c] = 190
	}
	r[' '] = 255
	for c := '0'; c <= '9'; c++ {
		r[c] = 60
	}
	for c := 'A'; c <= 'Z'; c++ {
		r[c] = 40
	}
	for _, c := range "TAISWCMHBP" {
		r[c] = 70
	}
	for _, c := range "_=+" {
		r[c] = 30
	}
	return r
}()

// SecretBytes is [Secrets] for bytes. When b holds no secret it returns b
// itself; otherwise a new slice, so the caller's bytes (a body about to
// be sent) are never changed.
//
// Every pattern looks at b as it came, and what they find is replaced in
// one go: a pattern run over another's output would miss a secret whose
// prefix the other replaced ("Bearer abcdefghbearer secret12345", where
// the first token swallows the second prefix).
func SecretBytes(b []byte) []byte {
	var found [4]span // the common case, a clean body, allocates nothing
	secrets := found[:0]
	for _, p := range secretPatterns {
		secrets = findSecrets(b, p, secrets)
	}
	if len(secrets) == 0 {
		return b
	}
	slices.SortFunc(secrets, func(x, y span) int { return cmp.Compare(x.start, y.start) })
	out := make([]byte, 0, len(b))
	last := 0 // the end of the secrets replaced so far
	for k, sp := range secrets {
		if k > 0 && sp.start <= last {
			last = max(last, sp.end) // it overlaps or touches the one before: one Redacted for both
			continue
		}
		out = append(out, b[last:sp.start]...)
		out = append(out, Redacted...)
		last = sp.end
	}
	return append(out, b[last:]...)
}

// span is the bytes of a secret, b[start:end], to be replaced.
type span struct{ start, end int }

// findSecrets appends to out the secrets of one pattern in b. It finds
// candidates by the pattern's anchor and checks the rest of the prefix
// around it.
func findSecrets(b []byte, p secretPattern, out []span) []span {
	last := 0 // the end of the last secret found
	// b read as a string, searched for the anchor as it is: []byte(anchor)
	// would copy it, seven times a body.
	text, anchor := unsafe.String(unsafe.SliceData(b), len(b)), p.prefix[p.anchor:]
	for i := p.anchor; i < len(b); {
		j := strings.Index(text[i:], anchor)
		if j < 0 {
			break
		}
		start := i + j - p.anchor
		i += j + len(anchor)
		// A candidate may start inside the secret just found, as long as
		// what it keeps of itself lies past it: in "Bearer
		// abcdefghBearer secret12345" the first token swallows the second
		// "Bearer", and the secret after it is found too.
		if start+p.keep < last || string(b[start:start+p.anchor]) != p.prefix[:p.anchor] {
			continue
		}
		if end, ok := p.secretAt(b, start); ok {
			out = append(out, span{start + p.keep, end})
			last = end
		}
	}
	return out
}

// secretAt reports whether a secret of p starts at b[start:], whose prefix
// is there, and where it ends.
//
// The byte before the prefix is looked at before the token is scanned:
// in a body crowded with prefixes that are not secrets ("xsk-xsk-…"),
// scanning first would walk the rest of the body from each of them, and
// a 1 MiB body would take minutes (BenchmarkSecretsCrowded).
func (p secretPattern) secretAt(b []byte, start int) (end int, ok bool) {
	switch {
	case p.boundary && start > 0 && keyChar(b[start-1]) && b[start-1] != '-' && b[start-1] != '_':
		return 0, false // "task-..." is not a key
	case p.query && (start == 0 || b[start-1] != '?' && b[start-1] != '&'):
		return 0, false
	}
	end = start + len(p.prefix)
	for end < len(b) && p.alphabet(b[end]) {
		end++
	}
	if end-start-len(p.prefix) < p.min {
		return 0, false
	}
	return end, true
}
