// Package wire holds what the built-in providers share, so that each
// fact is written once: a scanner for server-sent events ([ScanSSE],
// [FrameStart]), the speaker rule ([SpeakerForRole]), the one reading of
// token usage in every provider's shape ([UsageReader]), what a body that
// is not whole means ([Undecodable], [NotJSON], [Unfinished],
// [LastValue], [FirstValue]), the args a call keeps ([FitArray],
// [ElideBase64]), the edit helpers of request bodies
// ([EditObject], [JSONText], [Splice], [AppendToString]), the kwargs
// builder ([Params]), and the gjson helpers below. It is internal: a
// provider of your own implements [providers.Provider] with the shapes of
// package providers, and may copy what it needs from here.
//
// Parse views a captured body as a string without copying it: a body is
// parsed on every call, and gjson.ParseBytes would copy it whole. The
// price is that a string taken from the result may point into the body,
// which the recorder reuses once the provider returns; Str copies such a
// string out. Everything a provider keeps must go through Str or be
// copied into a buffer of its own.
package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// Parse parses b, which must not change while the result is in use.
func Parse(b []byte) gjson.Result {
	if len(b) == 0 {
		return gjson.Result{}
	}
	return gjson.Parse(unsafe.String(&b[0], len(b)))
}

// View returns the bytes of s without copying them, for reading only: s
// is usually a Raw of a Result, itself a view into a body.
func View(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// Own returns b as a string without copying it: b must never be written
// again (Detach copies the string out with the result's others).
func Own(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Append appends s to b, growing b by doubling: append grows a large
// buffer by only 1.25×, which for a long streamed answer allocated about
// five times its length.
func Append(b []byte, s string) []byte {
	if cap(b)-len(b) < len(s) {
		b = slices.Grow(b, max(len(s), cap(b)))
	}
	return append(b, s...)
}

// Str returns r's string value, copied out of the parsed body.
func Str(r gjson.Result) string { return strings.Clone(r.String()) }

// Detach copies every string of res that may still point into the parsed
// body or into the buffer the recorder lends (providers.Response.Scratch),
// so that res outlives both: the outcome's strings, the model, and every
// string and JSON of the answer's parts. Call it last, on what
// ParseResponse returns; it is cheaper than copying each string as it is
// read, and cannot be forgotten for one of them.
//
// The strings are copied into two buffers, one allocation for the
// answer's parts and one for the other fields: a result holds several
// short strings, and each copy of its own would cost an allocation per
// call. The answer has its own so that a record that keeps the model or
// the finish reason but not the answer (middleware.WithoutOutput) does
// not hold the answer's bytes through them.
func Detach(res *providers.Result) {
	o := &res.Outcome
	fields := [...]*string{&o.ValueClass, &o.FinishReason, &o.ResponseID, &res.Model, &res.ErrorMessage, &res.ServiceTier, &res.SystemFingerprint}
	n := 0
	for _, f := range fields {
		n += len(*f)
	}
	buf := make([]byte, 0, n)
	take := func(s *string) {
		if len(*s) == 0 {
			return
		}
		start := len(buf)
		buf = append(buf, *s...)
		*s = unsafe.String(&buf[start], len(*s)) // buf never grows: cap is n
	}
	takeRaw := func(b *json.RawMessage) {
		if len(*b) == 0 {
			return
		}
		start := len(buf)
		buf = append(buf, *b...)
		*b = buf[start:len(buf):len(buf)]
	}
	if n > 0 {
		for _, f := range fields {
			take(f)
		}
	}
	parts := res.Output.Parts
	n = 0
	for i := range parts {
		p := &parts[i]
		n += len(p.ID) + len(p.Name) + len(p.Content) + len(p.Arguments) + len(p.MIMEType) + len(p.URI) + len(p.Data)
	}
	if n == 0 {
		return
	}
	buf = make([]byte, 0, n)
	for i := range parts {
		p := &parts[i]
		take(&p.ID)
		take(&p.Name)
		take(&p.Content)
		takeRaw(&p.Arguments)
		take(&p.MIMEType)
		take(&p.URI)
		takeRaw(&p.Data)
	}
}

// Members walks the members of the JSON object b holds, validating it in
// the same pass (record.EachMember): fn gets each key as written (escapes
// decoded) and its raw value, a view into b, to [Parse] only when it is
// used (parsing a number or a string costs). It reports whether b is one
// valid JSON object, having walked all of it. One pass instead of two: a
// provider used to validate a body whole, then walk it again with gjson.
func Members(b []byte, fn func(key, v []byte) bool) bool {
	return record.EachMember(b, fn)
}

// Value returns one JSON value of a valid body as Parse does, a string
// cheaper: one that holds no escape is read as a view at memory speed,
// where gjson reads a string byte by byte (a long message's text is most
// of a request).
func Value(b []byte) gjson.Result {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		body := b[1 : len(b)-1]
		if bytes.IndexByte(body, '\\') < 0 && bytes.IndexByte(body, '"') < 0 {
			r := gjson.Result{Type: gjson.String, Raw: unsafe.String(&b[0], len(b))}
			if len(body) > 0 {
				r.Str = unsafe.String(&body[0], len(body))
			}
			return r
		}
	}
	return Parse(b)
}

// EachMember walks the members of v, a JSON object of a valid body, as
// v.ForEach does, each value read by [Value]: a long string costs a
// memory scan, not gjson's byte by byte one.
func EachMember(v gjson.Result, fn func(key string, v gjson.Result) bool) {
	record.EachValidMember(View(v.Raw), func(key, value []byte) bool {
		return fn(unsafe.String(unsafe.SliceData(key), len(key)), Value(value))
	})
}

// Elide returns raw, a view into a body, with its inline base64 data (an
// image, a document) replaced by a marker (ElideBase64): raw
// itself, not a copy, when there is none.
func Elide(raw string) []byte {
	out, _ := ElideBase64(View(raw))
	return out
}

// ElidedElements returns the elements of an array, each elided (Elide),
// and the last one: the turns of a request, as views into its body. A value that is not an array is one
// element.
func ElidedElements(v gjson.Result) (elems [][]byte, last gjson.Result) {
	if !v.IsArray() {
		return [][]byte{Elide(v.Raw)}, v
	}
	v.ForEach(func(_, m gjson.Result) bool {
		elems = append(elems, Elide(m.Raw))
		last = m
		return true
	})
	return elems, last
}

// Bounds of one parameter: a longer value is content rather than a
// setting, and is replaced by a marker of its size.
const (
	MaxParamString = 256  // bytes of a string value, quotes included
	MaxParam       = 1024 // bytes of any other value
)

// Params gathers the parameters a request set (a record's kwargs) as one
// JSON object, in the order they were set.
type Params struct {
	buf []byte
	Cut bool // a value was replaced by a marker, or the whole was cut
}

// Bounded returns v's JSON, or a marker of its size when it is longer
// than a setting is (MaxParamString, MaxParam), noting the cut.
func (p *Params) Bounded(v gjson.Result) string {
	raw := v.Raw
	if v.Type == gjson.String && len(raw) > MaxParamString || len(raw) > MaxParam {
		raw, p.Cut = `"…[`+strconv.Itoa(len(raw))+` bytes cut]"`, true
	}
	return raw
}

// Append adds a parameter: its key as written (quoted, escapes and all)
// and its raw JSON value; an empty value adds nothing.
func (p *Params) Append(quotedKey, raw string) {
	if raw == "" {
		return
	}
	if len(p.buf) == 0 {
		p.buf = append(p.buf, '{')
	} else {
		p.buf = append(p.buf, ',')
	}
	p.buf = append(p.buf, quotedKey...)
	p.buf = append(p.buf, ':')
	p.buf = append(p.buf, raw...)
}

// Prepend puts a parameter first.
func (p *Params) Prepend(quotedKey, raw string) {
	rest := p.buf
	p.buf = nil
	p.Append(quotedKey, raw)
	if len(rest) > 1 {
		p.buf = append(append(p.buf, ','), rest[1:]...)
	}
}

// JSON returns the object: "{}" when nothing was set.
func (p *Params) JSON() json.RawMessage {
	if len(p.buf) == 0 {
		return json.RawMessage("{}")
	}
	return append(p.buf, '}')
}

// Into sets call's Kwargs to the object, cut whole past
// providers.MaxKwargsBytes, and names "kwargs" in its Truncated when
// anything was cut.
func (p *Params) Into(call *providers.Call) {
	call.Kwargs = p.JSON()
	if len(call.Kwargs) > providers.MaxKwargsBytes {
		call.Kwargs, p.Cut = json.RawMessage(`{"…":"[kwargs cut]"}`), true
	}
	if p.Cut {
		call.Truncated = append(call.Truncated, "kwargs")
	}
}
