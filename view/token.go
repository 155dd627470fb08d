package view

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
)

// TokenParam is the query parameter a browser brings the viewer's token
// in, once: http://host:port/?token=TOKEN.
const TokenParam = "token"

// Token is a secret a browser proves it holds. The command prints it
// once, in the address to open (?token=...); the viewer then keeps it in
// a cookie (HttpOnly: no script reads it; SameSite=Strict: no other
// site's page sends it; for the viewer's path only, marked Secure over
// TLS) and sends the browser on to the same address without it, so that
// it leaves no trace in the browser's history, a bookmark or a Referer.
// A script sends it as "Authorization: Bearer TOKEN".
//
// One token guards both what the viewer guards: reading, when it listens
// beyond loopback ([Options.Token]: every page, asset and event stream
// answers 401 without it), and annotation ([Annotation.Token], whose
// POSTs also need the same origin and a form token derived from it). It
// is compared in constant time, as a SHA-256 so that its length says
// nothing either, and never logged. Its cookie is named after a hash of
// it, so that viewers on other ports of one host (a cookie ignores the
// port) keep theirs apart.
type Token struct {
	secret string
	sum    [sha256.Size]byte // of secret
	cookie string            // the cookie's name
}

// NewToken makes a token of 256 random bits.
func NewToken() *Token {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("view: no randomness for a token: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return TokenOf(hex.EncodeToString(b[:]))
}

// TokenOf returns the token s, as given by its user (a flag, an
// environment variable); nil for "".
func TokenOf(s string) *Token {
	if s == "" {
		return nil
	}
	name := sha256.Sum256([]byte("llmhistory view cookie\x00" + s))
	return &Token{secret: s, sum: sha256.Sum256([]byte(s)), cookie: "llmhistory_token_" + hex.EncodeToString(name[:4])}
}

// String returns the token, to print in the address to open.
func (t *Token) String() string { return t.secret }

func (t *Token) equal(s string) bool {
	sum := sha256.Sum256([]byte(s))
	return subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1
}

// Admit handles an address that carries the token (?token=): it sets the
// cookie for path (the handler's prefix) and redirects to the same
// address without it, and reports true. A request without one, or with a
// wrong one, it leaves alone (false).
func (t *Token) Admit(w http.ResponseWriter, r *http.Request, path string) bool {
	given := r.URL.Query().Get(TokenParam)
	if given == "" || !t.equal(given) {
		return false
	}
	http.SetCookie(w, &http.Cookie{
		Name: t.cookie, Value: t.secret, Path: path,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, withoutToken(r), http.StatusSeeOther)
	return true
}

// Holds reports whether the request's browser holds the token: its
// cookie.
func (t *Token) Holds(r *http.Request) bool {
	c, err := r.Cookie(t.cookie)
	return err == nil && t.equal(c.Value)
}

// allows reports whether r carries the token: its cookie, or a bearer
// token.
func (t *Token) allows(r *http.Request) bool {
	if t.Holds(r) {
		return true
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && t.equal(strings.TrimSpace(tok))
}

// refuse answers a request that does not carry the token.
func (t *Token) refuse(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="llmhistory view"`)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "llmhistory view: this viewer asks for its token. Open the address it printed when it started, ?token=... included, or ask whoever started it.", http.StatusUnauthorized)
}

// withoutToken is the address r asked for, as the browser sent it (the
// handler's prefix included, which http.StripPrefix takes from r.URL),
// without the token.
func withoutToken(r *http.Request) string {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		u = &url.URL{Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	}
	q := u.Query()
	q.Del(TokenParam)
	u.RawQuery = q.Encode()
	return u.RequestURI()
}
