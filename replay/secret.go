package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/llmhistory/llmhistory/redact"
)

// The credentials that never reach a cassette are the recorder's
// (middleware.IsCredentialHeader, middleware.IsSecretParam): one list.

// minLiteral is the shortest credential value looked for literally: a
// shorter one ("k", a test's dummy key) would be found everywhere.
const minLiteral = redact.MinCredentialLength

// ErrSecret is matched (errors.Is) by every [*SecretError].
var ErrSecret = errors.New("replay: refusing to write a secret to a cassette")

// SecretError says a cassette was not written, or an interaction was left
// out of it, because it holds a secret. It names where, never the secret.
type SecretError struct {
	Cassette    string // the file, when known
	Interaction int    // the interaction's index among those being written; -1 when not known
	Request     string // the request, as "POST /v1/chat/completions"
	// Field is where the secret is: "request.url", "request.headers.X",
	// "request.body" (followed by the JSON path within it, as
	// "request.body.messages.0.content"), "response.headers.X",
	// "response.body...", "response.frames.3", "error", "response.end_error".
	Field string
	// What kind of secret: a key-shaped string (what [redact.Secrets]
	// removes), or the value of one of the request's credential headers.
	What string
}

func (e *SecretError) Error() string {
	var b strings.Builder
	b.WriteString("replay: refusing to write a secret")
	if e.Cassette != "" {
		b.WriteString(" to " + e.Cassette)
	}
	b.WriteString(": ")
	if e.Interaction >= 0 {
		b.WriteString("interaction " + strconv.Itoa(e.Interaction) + " ")
	}
	if e.Request != "" {
		b.WriteString("(" + e.Request + ") ")
	}
	fmt.Fprintf(&b, "has %s in %s; it was not recorded (scrub it with WithBeforeSave if it is not a real secret)", e.What, e.Field)
	return b.String()
}

func (e *SecretError) Is(target error) bool { return target == ErrSecret }

// literal is the value of a credential a request carried.
type literal struct {
	value  string
	source string // "Authorization header", "key= query parameter"
}

// credentialLiterals returns the credentials req carries: credential
// header values (and the token of a "Bearer <token>") and secret query
// parameters.
func credentialLiterals(req *http.Request) []literal {
	var out []literal
	add := func(v, source string) {
		v = strings.TrimSpace(v)
		if len(v) >= minLiteral {
			out = append(out, literal{v, source})
		}
	}
	for k, vs := range req.Header {
		ck := http.CanonicalHeaderKey(k)
		if !redact.IsCredentialHeader(ck) || ck == "Set-Cookie" {
			continue
		}
		for _, v := range vs {
			add(v, ck+" header")
			if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "bearer") {
				add(tok, ck+" header")
			}
		}
	}
	if req.URL != nil {
		if p := req.URL.User; p != nil {
			if pw, ok := p.Password(); ok {
				add(pw, "URL password")
			}
		}
		for p, vs := range req.URL.Query() {
			if redact.IsSecretParam(p) {
				for _, v := range vs {
					add(v, p+"= query parameter")
				}
			}
		}
	}
	return out
}

// findSecret says what secret s holds, if any.
func findSecret(s string, lits []literal) (string, bool) {
	if redact.Secrets(s) != s {
		return "a key-shaped string", true
	}
	for _, l := range lits {
		if strings.Contains(s, l.value) {
			return "the value of the request's " + l.source, true
		}
	}
	return "", false
}

// checkSecrets looks for secrets everywhere in it that would be written.
func checkSecrets(it *Interaction, lits []literal) *SecretError {
	found := func(field, what string) *SecretError {
		return &SecretError{Interaction: -1, Request: describe(&it.Request), Field: field, What: what}
	}
	check := func(field, s string) *SecretError {
		if what, ok := findSecret(s, lits); ok {
			return found(field, what)
		}
		return nil
	}
	checkHeader := func(prefix string, h http.Header) *SecretError {
		for _, k := range slices.Sorted(maps.Keys(h)) {
			if err := check(prefix+k, k); err != nil {
				return err
			}
			for _, v := range h[k] {
				if err := check(prefix+k, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	checkBody := func(field string, b []byte) *SecretError {
		what, ok := findSecret(string(b), lits)
		if !ok {
			return nil
		}
		return found(field+locate(b, lits), what)
	}
	if it.Request.URL != nil {
		if err := check("request.url", it.Request.URL.String()); err != nil {
			return err
		}
	}
	if err := checkHeader("request.headers.", it.Request.Header); err != nil {
		return err
	}
	if err := checkBody("request.body", it.Request.Body); err != nil {
		return err
	}
	if err := check("error", it.Err); err != nil {
		return err
	}
	r := it.Response
	if r == nil {
		return nil
	}
	if err := checkHeader("response.headers.", r.Header); err != nil {
		return err
	}
	if err := check("response.end_error", r.EndErr); err != nil {
		return err
	}
	if !r.Stream {
		return checkBody("response.body", r.Body)
	}
	for i, f := range r.Frames {
		if err := check("response.frames."+strconv.Itoa(i), string(f.Data)); err != nil {
			return err
		}
	}
	// A secret split across two frames is still a secret.
	return checkBody("response.frames", r.body())
}

// locate returns the JSON path (".messages.0.content") of the first
// string in a JSON body that holds a secret, or "" when b is not JSON or
// the secret spans more than one value.
func locate(b []byte, lits []literal) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return ""
	}
	var walk func(path string, v any) string
	walk = func(path string, v any) string {
		switch v := v.(type) {
		case string:
			if _, ok := findSecret(v, lits); ok {
				return path
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if _, ok := findSecret(k, lits); ok {
					return path + "." + escapeKey(k)
				}
				if p := walk(path+"."+escapeKey(k), v[k]); p != "" {
					return p
				}
			}
		case []any:
			for i, e := range v {
				if p := walk(path+"."+strconv.Itoa(i), e); p != "" {
					return p
				}
			}
		}
		return ""
	}
	return walk("", v)
}

// safeURL returns a copy of u without user info and secret query
// parameters (re-encoded only when one was removed).
func safeURL(u *url.URL) *url.URL {
	if u == nil {
		return &url.URL{}
	}
	return redact.SafeURL(u)
}

// safeHeader returns a copy of h without credential headers.
func safeHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if !redact.IsCredentialHeader(k) {
			out[k] = slices.Clone(v)
		}
	}
	return out
}
