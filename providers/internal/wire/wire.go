// Package wire holds what the built-in providers share, so that each
// fact is written once: a scanner for server-sent events ([ScanSSE],
// [FrameStart]), the speaker rule ([SpeakerForRole]), the one reading of
// token usage in every provider's shape ([UsageReader]), what a body that
// is not whole means ([Undecodable], [NotJSON], [Unfinished],
// [LastValue], [FirstValue]), the args a call keeps ([FitArray],
// [FitArrayInto], [ElideBase64]), the edit helpers of request bodies
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
	"encoding/json"
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

// Str returns r's string value, copied out of the parsed body.
func Str(r gjson.Result) string { return strings.Clone(r.String()) }

// Detach copies every string of res that may still point into the parsed
// body, so that res outlives it. Call it last, on what ParseResponse
// returns; it is cheaper than copying each string as it is read, and
// cannot be forgotten for one of them. Output, Refusal and Reasoning are
// not copied: they are assembled, and must be built in a buffer of their
// own (strings.Builder), never taken from a Result's String.
//
// The strings are copied into one buffer, one allocation for them all: a
// result holds several short strings, and each copy of its own would cost
// an allocation per call.
func Detach(res *providers.Result) {
	o := &res.Outcome
	fields := [...]*string{&o.ValueClass, &o.FinishReason, &o.ResponseID, &res.Model, &res.ErrorMessage, &res.ServiceTier, &res.SystemFingerprint}
	n := 0
	for _, f := range fields {
		n += len(*f)
	}
	for i := range res.ToolCalls {
		c := &res.ToolCalls[i]
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	if n == 0 {
		return
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
	for _, f := range fields {
		take(f)
	}
	for i := range res.ToolCalls {
		c := &res.ToolCalls[i]
		take(&c.ID)
		take(&c.Name)
		take(&c.Arguments)
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

// Elide returns raw, a view into a body, with its inline base64 data (an
// image, a document) replaced by a marker (ElideBase64): raw
// itself, not a copy, when there is none.
func Elide(raw string) []byte {
	out, _ := ElideBase64(View(raw))
	return out
}

// ElidedElements returns the elements of an array, each elided (Elide),
// and the last one: the turns of a request, as views into its body, which
// FitArrayInto copies. A value that is not an array is one
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
