package view

import (
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

// gate asks every request for the viewer's token ([Options.Token]). A
// browser brings it once, in the address; the gate keeps it in a cookie
// that is sent back with every page, asset and event stream of the
// viewer, and sends the browser on to the address without it, so that it
// stays out of the history and of bookmarks. A script sends it as a
// bearer token. It is compared in constant time (as a SHA-256, so that
// its length says nothing either) and never logged.
//
// The cookie is HttpOnly (no script reads it) and SameSite=Strict (no
// other site's page sends it: a request another site makes a browser send
// arrives without the token), so it also serves as the check that a
// request comes from the viewer's own pages.
type gate struct {
	sum    [sha256.Size]byte // of the token
	cookie string            // the cookie's name, the token's own
	path   string            // the cookie's path: the handler's prefix
}

// newGate returns the gate of a token; nil (everything passes) for "".
func newGate(token, prefix string) *gate {
	if token == "" {
		return nil
	}
	g := &gate{sum: sha256.Sum256([]byte(token)), path: prefix}
	// A name of the token's own, from a hash that says nothing of it:
	// viewers on other ports of one host (a cookie ignores the port) keep
	// their cookies apart.
	name := sha256.Sum256([]byte("llmhistory view cookie\x00" + token))
	g.cookie = "llmhistory_view_" + hex.EncodeToString(name[:4])
	return g
}

func (g *gate) matches(s string) bool {
	sum := sha256.Sum256([]byte(s))
	return subtle.ConstantTimeCompare(sum[:], g.sum[:]) == 1
}

// allow reports whether r carries the token, in its cookie, an
// Authorization: Bearer header, or the address. When it does not, allow
// has answered 401; when the address brought it, allow has set the
// cookie and sent the browser on (303) to the address without it.
func (g *gate) allow(w http.ResponseWriter, r *http.Request) bool {
	if g == nil {
		return true
	}
	if c, err := r.Cookie(g.cookie); err == nil && g.matches(c.Value) {
		return true
	}
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && g.matches(strings.TrimSpace(tok)) {
		return true
	}
	if tok := r.URL.Query().Get(TokenParam); tok != "" && g.matches(tok) {
		http.SetCookie(w, &http.Cookie{
			Name: g.cookie, Value: tok, Path: g.path,
			HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
		})
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return true
		}
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, withoutToken(r), http.StatusSeeOther)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="llmhistory view"`)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "llmhistory view: this viewer asks for its token. Open the address it printed when it started, ?token=... included, or ask whoever started it.", http.StatusUnauthorized)
	return false
}

// withoutToken is the address r asked for, as the browser sent it (the
// handler's prefix included), without the token.
func withoutToken(r *http.Request) string {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		u = &url.URL{Path: "/"}
	}
	q := u.Query()
	q.Del(TokenParam)
	u.RawQuery = q.Encode()
	return u.RequestURI()
}
