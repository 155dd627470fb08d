package redact

import (
	"bytes"
	"math"
	"strings"
)

// Secrets among personal data: credentials of many services, found by
// their prefix (sk-, AKIA, ghp_, xoxb-, AIza...), by the field or the
// word they follow ("password": ..., api_key=...), by their shape (a
// JWT, a PEM private key), or by their entropy: a long token that mixes
// upper case, lower case and digits as randomness does, and words,
// identifiers and hashes do not.

// keyPrefix is a credential known by its prefix: then at least min
// characters of its alphabet (and at most max, when max > 0).
type keyPrefix struct {
	prefix   string
	min, max int
	alphabet func(byte) bool
}

func upperOrDigit(c byte) bool { return isUpper(c) || isDigit(c) }
func alnumOrUnder(c byte) bool { return isAlnum(c) || c == '_' }
func slackChar(c byte) bool    { return isAlnum(c) || c == '-' }
func dottedChar(c byte) bool   { return keyChar(c) || c == '.' }

var keyPrefixes = []keyPrefix{
	{"sk-", 20, 0, keyChar}, // OpenAI, Anthropic (sk-proj-, sk-ant-api03-)
	{"sk_live_", 16, 0, isAlnum},
	{"sk_test_", 16, 0, isAlnum},
	{"rk_live_", 16, 0, isAlnum}, // Stripe
	{"rk_test_", 16, 0, isAlnum},
	{"AKIA", 16, 16, upperOrDigit}, // AWS access key IDs
	{"ASIA", 16, 16, upperOrDigit},
	{"ghp_", 30, 0, isAlnum}, // GitHub tokens
	{"gho_", 30, 0, isAlnum},
	{"ghu_", 30, 0, isAlnum},
	{"ghs_", 30, 0, isAlnum},
	{"ghr_", 30, 0, isAlnum},
	{"github_pat_", 22, 0, alnumOrUnder},
	{"glpat-", 20, 0, keyChar},  // GitLab
	{"xoxb-", 10, 0, slackChar}, // Slack
	{"xoxp-", 10, 0, slackChar},
	{"xoxa-", 10, 0, slackChar},
	{"xoxr-", 10, 0, slackChar},
	{"xoxs-", 10, 0, slackChar},
	{"xoxe-", 10, 0, slackChar},
	{"AIza", 30, 0, keyChar},     // Google API keys
	{"ya29.", 20, 0, dottedChar}, // Google OAuth tokens
	{"hf_", 30, 0, isAlnum},      // Hugging Face
	{"npm_", 36, 0, isAlnum},
	{"SG.", 20, 0, dottedChar}, // SendGrid: SG.<id>.<secret>
}

// keyStarts marks the bytes a prefix starts with.
var keyStarts = func() (s [256]bool) {
	for _, p := range keyPrefixes {
		s[p.prefix[0]] = true
	}
	s['e'] = true // eyJ: a JWT
	s['-'] = true // -----BEGIN ... PRIVATE KEY-----
	return s
}()

func findKeys(t []byte, key []byte, value bool, c *census, out []Match) []Match {
	if value && len(t) >= 4 && secretField(key) && markEnd(t, 0) != len(t) {
		return append(out, Match{Secret, 0, len(t)})
	}
	for i := 0; i < len(t); i++ {
		if !keyStarts[t[i]] || i > 0 && glued(t[i-1]) {
			continue
		}
		if end, ok := secretAt(t, i); ok {
			out = append(out, Match{Secret, i, end})
			i = end - 1
		}
	}
	if c.colons+c.equals > 0 || bytes.Contains(t, []byte(" is ")) {
		out = findPasswords(t, out)
	}
	if c.upper >= 2 && c.lower >= 2 && c.digits >= 1 && !opaqueField(key) {
		out = findRandom(t, out)
	}
	return out
}

// secretAt reports whether a credential known by its prefix or shape
// starts at t[i], and where it ends.
func secretAt(t []byte, i int) (end int, ok bool) {
	rest := t[i:]
	switch t[i] {
	case 'e':
		return jwtAt(t, i)
	case '-':
		return pemAt(t, i)
	}
	for _, p := range keyPrefixes {
		if !bytes.HasPrefix(rest, []byte(p.prefix)) {
			continue
		}
		j := i + len(p.prefix)
		for j < len(t) && p.alphabet(t[j]) {
			j++
		}
		n := j - i - len(p.prefix)
		if n >= p.min && (p.max == 0 || n <= p.max) && (j == len(t) || !isAlnum(t[j])) {
			return j, true
		}
	}
	return 0, false
}

func base64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// jwtAt reads a JSON Web Token at t[i]: a header and a payload, each
// base64url JSON ("eyJ"), and a signature, parted by dots.
func jwtAt(t []byte, i int) (int, bool) {
	j := i
	for part := 0; part < 3; part++ {
		if part > 0 {
			if j >= len(t) || t[j] != '.' {
				return 0, false
			}
			j++
		}
		if part < 2 && !bytes.HasPrefix(t[j:], []byte("eyJ")) {
			return 0, false
		}
		start := j
		for j < len(t) && base64URL(t[j]) {
			j++
		}
		if part < 2 && j-start < 10 {
			return 0, false
		}
	}
	return j, true
}

// pemAt reads a PEM private key at t[i], from its BEGIN line to its END
// line, or to the end of t when it was cut.
func pemAt(t []byte, i int) (int, bool) {
	const begin = "-----BEGIN "
	if !bytes.HasPrefix(t[i:], []byte(begin)) {
		return 0, false
	}
	head := t[i+len(begin):]
	k := bytes.Index(head[:min(len(head), 48)], []byte("-----"))
	if k < 0 || !bytes.Contains(head[:k], []byte("PRIVATE KEY")) {
		return 0, false
	}
	body := i + len(begin) + k + 5
	e := bytes.Index(t[body:], []byte("-----END "))
	if e < 0 {
		return len(t), true
	}
	e += body + len("-----END ")
	f := bytes.Index(t[e:min(len(t), e+48)], []byte("-----"))
	if f < 0 {
		return len(t), true
	}
	return e + f + 5, true
}

// secretField reports whether a JSON field of this name holds a secret
// whole: a password, an API key, an access token.
func secretField(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	k := squash(key)
	for _, s := range []string{"password", "passwd", "passphrase", "secret", "apikey", "accesstoken", "refreshtoken", "authtoken", "sessiontoken", "privatekey", "secretkey", "clientsecret"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return k == "pwd"
}

// opaqueField reports whether a JSON field of this name holds an
// identifier, a signature or an opaque blob a provider hands back: random
// by design, and no secret (a tool call's id, Gemini's thoughtSignature,
// Anthropic's thinking signature, OpenAI's encrypted reasoning).
func opaqueField(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	k := squash(key)
	return strings.HasSuffix(k, "id") || strings.HasSuffix(k, "ids") || strings.Contains(k, "signature") ||
		strings.Contains(k, "encrypted") || strings.Contains(k, "hash") || strings.Contains(k, "etag") ||
		strings.Contains(k, "checksum") || strings.Contains(k, "cursor") || strings.HasSuffix(k, "fingerprint")
}

// squash returns key in lower case without '_', '-', '.' or spaces.
func squash(key []byte) string {
	var b [maxKey]byte
	n := 0
	for _, c := range key {
		if c == '_' || c == '-' || c == '.' || c == ' ' || n == len(b) {
			continue
		}
		b[n] = lower(c)
		n++
	}
	return string(b[:n])
}

// passwordWords, followed by ':' or '=', introduce a secret.
var passwordWords = []string{"password", "passwd", "pwd", "passcode", "api key", "api_key", "apikey", "secret", "token"}

// findPasswords finds the values in "password: hunter22", "api_key=...":
// a word of passwordWords, ':' or '=', and a value of six characters or
// more that is not a word (it has a digit or a sign).
func findPasswords(t []byte, out []Match) []Match {
	for i := 0; i < len(t); i++ {
		c := lower(t[i])
		// After a letter or a digit it is inside a word; after '_' it may
		// end a name (DB_PASSWORD=, OPENAI_API_KEY=).
		if c != 'p' && c != 'a' && c != 's' && c != 't' || i > 0 && glued(t[i-1]) {
			continue
		}
		for _, w := range passwordWords {
			if !hasPrefixFold(t[i:], w) {
				continue
			}
			j := i + len(w)
			for j < len(t) && t[j] == ' ' {
				j++
			}
			switch {
			case j < len(t) && (t[j] == ':' || t[j] == '='):
				j++
			case hasPrefixFold(t[j:], "is "):
				j += 3
			default:
				j = -1
			}
			if j < 0 {
				break
			}
			for j < len(t) && (t[j] == ' ' || t[j] == '"' || t[j] == '\'') {
				j++
			}
			start := j
			for j < len(t) && t[j] > ' ' && t[j] != '"' && t[j] != '\'' && t[j] != ',' && !isParam(t[j:]) {
				j++
			}
			for j > start && bytes.IndexByte([]byte(".;)"), t[j-1]) >= 0 {
				j-- // the sentence's punctuation
			}
			sign := bytes.IndexFunc(t[start:j], func(r rune) bool { return r > 0x7f || !isLetter(byte(r)) }) >= 0
			if j-start >= 6 && sign && !bytes.HasPrefix(t[start:j], []byte("[")) {
				out = append(out, Match{Secret, start, j})
				i = j - 1
			}
			break
		}
	}
	return out
}

// isParam reports whether t starts the next parameter of a URL's query:
// "&name=".
func isParam(t []byte) bool {
	if t[0] != '&' {
		return false
	}
	i := 1
	for i < len(t) && (isAlnum(t[i]) || t[i] == '_' || t[i] == '-') {
		i++
	}
	return i > 1 && i < len(t) && t[i] == '='
}

func hasPrefixFold(t []byte, w string) bool {
	if len(t) < len(w) {
		return false
	}
	for k := range len(w) {
		if lower(t[k]) != w[k] {
			return false
		}
	}
	return true
}

// Random tokens.

// minRandom is the shortest token judged by its entropy.
const minRandom = 20

// randomChar is a character of a random token: base64's, base64url's
// and hex's ('=' only as padding, at the end).
func randomChar(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '+' || c == '/'
}

// idWords, ending the name just before a random token, say it is an
// identifier: "trace 2aV9Gf8q0PiR2fQ9wH7sJ3kL1mN", "request_id=...".
var idWords = []string{"id", "trace", "span", "request", "req", "correlation", "ref", "uid", "etag", "commit", "nonce", "signature"}

// secretWords in that name say it is a secret all the same
// (aws_access_key_id).
var secretWords = []string{"key", "secret", "token", "pass", "auth", "cred"}

// namedID reports whether the name before t[i] ("trace ", "request_id=")
// says the token there is an identifier.
func namedID(t []byte, i int) bool {
	j := i
	for j > 0 && i-j < 3 && (t[j-1] == ' ' || t[j-1] == '=' || t[j-1] == ':' || t[j-1] == '"') {
		j--
	}
	k := j
	for k > 0 && j-k < maxKey && (isAlnum(t[k-1]) || t[k-1] == '_' || t[k-1] == '-') {
		k--
	}
	if k == j || j == i {
		return false
	}
	name := squash(t[k:j])
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return false
		}
	}
	for _, w := range idWords {
		if strings.HasSuffix(name, w) {
			return true
		}
	}
	for _, w := range digestWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// digestWords in the name before a token say it is a digest: "SHA-256=",
// "md5:", "integrity".
var digestWords = []string{"sha", "md5", "digest", "hash", "checksum", "integrity"}

// idPrefixes start the identifiers providers give (a completion, a tool
// call, a message, a file): random, but no secret.
var idPrefixes = []string{"sha256-", "sha384-", "sha512-", "chatcmpl-", "cmpl-", "call_", "toolu_", "srvtoolu_", "msg_", "msgbatch_", "resp_", "req_", "fc_", "rs_", "run_",
	"asst_", "thread_", "step_", "file-", "file_", "batch_", "ft-", "ftjob-", "vs_", "org-", "proj_", "conv_", "item_", "evt_", "cus_", "pi_", "ch_", "in_", "sub_", "prod_", "price_", "acct_"}

func findRandom(t []byte, out []Match) []Match {
	for i := 0; i < len(t); {
		if !randomChar(t[i]) {
			i++
			continue
		}
		j := i
		for j < len(t) && randomChar(t[j]) {
			j++
		}
		for k := 0; k < 2 && j < len(t) && t[j] == '='; k++ {
			j++
		}
		if j-i >= minRandom && (i == 0 || t[i-1] != '\\') && looksRandom(t[i:j]) && !namedID(t, i) {
			out = append(out, Match{Secret, i, j})
		}
		i = j
	}
	return out
}

// looksRandom reports whether tok looks like a random credential rather
// than a word, an identifier, a path, a version or a hash: it mixes upper
// case, lower case and digits, and the entropy of its characters is near
// what random ones of its length would have.
func looksRandom(tok []byte) bool {
	tok = bytes.TrimRight(tok, "=")
	if len(tok) < minRandom || tok[0] == '/' || bytes.Contains(tok, []byte("//")) {
		return false
	}
	for _, p := range idPrefixes {
		if bytes.HasPrefix(tok, []byte(p)) {
			return false
		}
	}
	var up, lo, dig int
	var count [128]uint16
	for _, c := range tok {
		switch {
		case isUpper(c):
			up++
		case isLower(c):
			lo++
		case isDigit(c):
			dig++
		}
		count[c&127]++
	}
	if up < 2 || lo < 2 || dig < 1 || wordy(tok) {
		return false
	}
	if bytes.IndexByte(tok, '/') >= 0 && wordSegments(tok) >= 2 {
		return false // a path: src/main/java/AppConfig2Service
	}
	h := 0.0
	n := float64(len(tok))
	for _, k := range count {
		if k > 0 {
			p := float64(k) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= entropyThreshold(len(tok))
}

// wordy reports whether half of tok or more is in runs of three
// lower-case letters or more, as the words of an identifier are
// (getUserAccountBalanceV2: 15 of 23 characters). Of random characters
// from 62 symbols, about one in six are.
func wordy(tok []byte) bool {
	inWords, run := 0, 0
	for i := 0; i <= len(tok); i++ {
		if i < len(tok) && isLower(tok[i]) {
			run++
			continue
		}
		if run >= 3 {
			inWords += run
		}
		run = 0
	}
	return inWords*2 >= len(tok)
}

// wordSegments counts the segments of tok between slashes that are words
// in lower case, as a path's are.
func wordSegments(tok []byte) int {
	n := 0
	for seg := range bytes.SplitSeq(tok, []byte("/")) {
		if len(seg) < 3 {
			continue
		}
		word := true
		for _, c := range seg {
			word = word && (isLower(c) || c == '-' || c == '_')
		}
		if word {
			n++
		}
	}
	return n
}

// entropyThreshold is the least entropy, in bits per character, of a
// random token of n characters: a fraction of the most n characters
// can have (log2 n), as a random draw from 62 or 64 symbols comes near
// it and text far below it. Measured on the corpus (testdata/pii).
func entropyThreshold(n int) float64 {
	return 0.85 * math.Log2(float64(min(n, 64)))
}
