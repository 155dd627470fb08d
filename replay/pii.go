package replay

import (
	"unicode/utf8"
)

// redactRequest redacts r's body, URL path and query values with the
// cassette's redactor, if it has one. r's fields are replaced, never
// written to.
func (cfg *config) redactRequest(r *Request) {
	red := cfg.redactor
	if red == nil {
		return
	}
	if utf8.Valid(r.Body) {
		r.Body = red.Bytes(r.Body)
	}
	if r.URL == nil {
		return
	}
	u := *r.URL
	if p := red.String(u.Path); p != u.Path {
		u.Path, u.RawPath = p, ""
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for _, vs := range q {
			for i, v := range vs {
				if s := red.String(v); s != v {
					vs[i], changed = s, true
				}
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if u != *r.URL {
		r.URL = &u
	}
}

// redactInteraction redacts what a cassette keeps of an exchange with its
// redactor, if it has one: the request, the response's body or frames,
// and the text of errors.
func (cfg *config) redactInteraction(it *Interaction) {
	red := cfg.redactor
	if red == nil {
		return
	}
	cfg.redactRequest(&it.Request)
	it.Err = red.String(it.Err)
	resp := it.Response
	if resp == nil {
		return
	}
	resp.EndErr = red.String(resp.EndErr)
	if !resp.Stream {
		if utf8.Valid(resp.Body) {
			resp.Body = red.Bytes(resp.Body)
		}
		return
	}
	frames := make([][]byte, len(resp.Frames))
	for i, f := range resp.Frames {
		if !utf8.Valid(f.Data) {
			return // a binary stream (Bedrock's eventstream): kept as it is
		}
		frames[i] = f.Data
	}
	out := red.Frames(frames)
	if len(out) > 0 && &out[0] == &frames[0] {
		return
	}
	redacted := make([]Frame, len(resp.Frames))
	for i, f := range resp.Frames {
		redacted[i] = Frame{At: f.At, Data: out[i]}
	}
	resp.Frames = redacted
}
