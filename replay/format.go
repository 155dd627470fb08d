package replay

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Version is the cassette format version this package writes. Every line
// carries it; a line of a newer version is refused with
// [ErrUnsupportedVersion] rather than misread. Fields may be added within a
// version, so readers ignore fields they do not know.
const Version = 1

// ErrUnsupportedVersion is wrapped by the [LineError] of a line written by
// a newer, incompatible version of the format.
var ErrUnsupportedVersion = errors.New("replay: unsupported cassette version")

// maxOffset bounds the times a cassette may hold (latency, frame offsets):
// a day is far beyond any recorded call, and the bound keeps a malformed
// number from overflowing a time.Duration.
const maxOffset = 24 * time.Hour

// Interaction is one HTTP exchange: a request and the response it got, or
// the transport error it failed with. It is one line of a cassette.
type Interaction struct {
	Request  Request
	Response *Response // nil when the call failed without a response (see Err)
	// Err is the text of the transport error (a refused connection, a
	// reset) when Response is nil.
	Err string
	// Latency is the time from sending the request to the response's
	// headers, or to the error.
	Latency time.Duration
}

// Request is a recorded request, or the request being matched. Credentials
// are never part of it: no credential headers, no user info and no secret
// query parameters (key=, api_key=, token= and the like) in the URL.
type Request struct {
	Method string
	URL    *url.URL
	// Header holds the headers kept: on a recorded request, those listed
	// in the package doc (Secrets) plus [WithMatchedHeaders] and
	// [WithRequestHeaders]; on a request being matched, every header but
	// the credentials.
	Header http.Header
	Body   []byte
}

// Response is a recorded response, exactly as the caller got it.
type Response struct {
	Status           int
	Header           http.Header // every header but Set-Cookie
	ContentLength    int64       // -1 when unknown (a chunked body)
	TransferEncoding []string
	Uncompressed     bool // the transport decompressed the body (http.Response.Uncompressed)

	// Stream says the body is kept as the frames it arrived in (a
	// text/event-stream, or another streamed body) rather than whole.
	Stream bool
	Body   []byte  // the body, when not Stream
	Frames []Frame // the body as it arrived, when Stream

	// End says how the body ended when it was recorded; EndError's text is
	// in EndErr. A replayed body ends the same way.
	End    End
	EndErr string
}

// Frame is a piece of a streamed body: one server-sent event, or one read
// of another streamed body, with its time from the start of the response.
type Frame struct {
	At   time.Duration
	Data []byte
}

// End is how a recorded response body ended.
type End string

const (
	EndEOF    End = ""       // read to its end
	EndClosed End = "closed" // closed by the caller before its end (a stream abandoned half way)
	EndError  End = "error"  // ended by a read error (a reset connection), whose text is EndErr
)

// body returns the response's bytes, whether whole or in frames.
func (r *Response) body() []byte {
	if !r.Stream {
		return r.Body
	}
	var n int
	for _, f := range r.Frames {
		n += len(f.Data)
	}
	out := make([]byte, 0, n)
	for _, f := range r.Frames {
		out = append(out, f.Data...)
	}
	return out
}

// digest is the sha256 stored with a response. For a stream it covers the
// frame boundaries too: each frame's length (8 bytes, big-endian), then
// its bytes, so moving bytes from one frame to the next is a change.
func (r *Response) digest() string {
	h := sha256.New()
	if !r.Stream {
		h.Write(r.Body)
	} else {
		var n [8]byte
		for _, f := range r.Frames {
			binary.BigEndian.PutUint64(n[:], uint64(len(f.Data)))
			h.Write(n[:])
			h.Write(f.Data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// LineError is a cassette line that cannot be loaded.
type LineError struct {
	Path string // the cassette file; empty when read from a reader
	Line int    // 1-based
	Err  error
}

func (e *LineError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("replay: %s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("replay: line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// The wire form of a line. Field order is the order written.
type lineJSON struct {
	Version   int           `json:"version"`
	Request   *requestJSON  `json:"request"`
	Response  *responseJSON `json:"response,omitempty"`
	Error     string        `json:"error,omitempty"`
	LatencyMS float64       `json:"latency_ms"`
}

type requestJSON struct {
	Method  string     `json:"method"`
	URL     string     `json:"url"`
	Headers headerJSON `json:"headers,omitempty"`
	bodyJSON
}

type responseJSON struct {
	Status           int        `json:"status"`
	Headers          headerJSON `json:"headers,omitempty"`
	ContentLength    int64      `json:"content_length"`
	TransferEncoding []string   `json:"transfer_encoding,omitempty"`
	Uncompressed     bool       `json:"uncompressed,omitempty"`
	bodyJSON
	Frames   *[]frameJSON `json:"frames,omitempty"`
	SHA256   string       `json:"sha256"`
	End      End          `json:"end,omitempty"`
	EndError string       `json:"end_error,omitempty"`
}

// bodyJSON holds a body in the most readable form that gives back its
// exact bytes: JSON (an object or an array) as JSON, laid out again on
// load as it was sent; other UTF-8 as a string; anything else as base64.
type bodyJSON struct {
	Body json.RawMessage `json:"body,omitempty"`
	// BodyIndent is the indent unit of a body sent indented
	// (json.Indent's layout, which is also Python's indent=N).
	BodyIndent string `json:"body_indent,omitempty"`
	// BodySpaced marks a body sent on one line with ", " and ": "
	// between items (Python's json.dumps default).
	BodySpaced bool `json:"body_spaced,omitempty"`
	// BodyTail is whitespace that followed the JSON value ("\n").
	BodyTail   string `json:"body_tail,omitempty"`
	BodyText   string `json:"body_text,omitempty"`
	BodyBase64 string `json:"body_base64,omitempty"`
}

// frameJSON is a frame. A server-sent event of one JSON data line (what
// OpenAI and Anthropic send) is kept as its event name and its data as
// JSON, so a diff of a stream reads like a diff of JSON:
// "event: NAME\ndata: JSON\n\n", the event line optional, the JSON
// compact. Other frames are kept as text, or base64.
type frameJSON struct {
	AtMS   float64         `json:"at_ms"`
	Event  string          `json:"event,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	Text   string          `json:"text,omitempty"`
	Base64 string          `json:"base64,omitempty"`
}

// encodeFrame picks the form to store a frame in.
func encodeFrame(f Frame) frameJSON {
	fj := frameJSON{AtMS: msOf(f.At)}
	switch {
	case !utf8.Valid(f.Data):
		fj.Base64 = base64.StdEncoding.EncodeToString(f.Data)
	default:
		if event, data, ok := sseJSON(f.Data); ok {
			fj.Event, fj.Data = event, data
		} else {
			fj.Text = string(f.Data)
		}
	}
	return fj
}

// sseJSON splits an event "event: NAME\ndata: JSON\n\n" (the event line
// optional) whose JSON is a compact object or array.
func sseJSON(b []byte) (event string, data []byte, ok bool) {
	rest, found := bytes.CutPrefix(b, []byte("event: "))
	if found {
		i := bytes.IndexByte(rest, '\n')
		if i <= 0 || bytes.ContainsAny(rest[:i], "\r") {
			return "", nil, false
		}
		event, rest = string(rest[:i]), rest[i+1:]
	}
	rest, found = bytes.CutPrefix(rest, []byte("data: "))
	if !found {
		return "", nil, false
	}
	data, found = bytes.CutSuffix(rest, []byte("\n\n"))
	if !found || len(data) == 0 || data[0] != '{' && data[0] != '[' || bytes.ContainsAny(data, "\r\n") || !json.Valid(data) {
		return "", nil, false
	}
	var c bytes.Buffer
	if json.Compact(&c, data) != nil || !bytes.Equal(c.Bytes(), data) {
		return "", nil, false
	}
	return event, data, true
}

// decode gives back the frame's bytes.
func (fj *frameJSON) decode() ([]byte, error) {
	forms := 0
	for _, set := range []bool{len(fj.Data) > 0, fj.Text != "", fj.Base64 != ""} {
		if set {
			forms++
		}
	}
	switch {
	case forms > 1:
		return nil, errors.New("more than one of data, text and base64")
	case fj.Event != "" && len(fj.Data) == 0:
		return nil, errors.New("event without data")
	case fj.Base64 != "":
		return base64.StdEncoding.DecodeString(fj.Base64)
	case len(fj.Data) == 0:
		return []byte(fj.Text), nil
	}
	var c bytes.Buffer
	if err := json.Compact(&c, fj.Data); err != nil {
		return nil, err
	}
	if c.Len() == 0 || c.Bytes()[0] != '{' && c.Bytes()[0] != '[' || strings.ContainsAny(fj.Event, "\r\n") {
		return nil, errors.New("data is not a JSON object or array, or the event name is not one line")
	}
	var out []byte
	if fj.Event != "" {
		out = append(out, "event: "+fj.Event+"\n"...)
	}
	out = append(out, "data: "...)
	out = append(out, c.Bytes()...)
	return append(out, "\n\n"...), nil
}

// headerJSON writes a header's single values as strings and repeated ones
// as arrays, keys sorted (encoding/json sorts map keys).
type headerJSON http.Header

func (h headerJSON) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(h))
	for k, v := range h {
		if len(v) == 1 {
			m[k] = v[0]
		} else {
			m[k] = v
		}
	}
	return marshal(m)
}

func (h *headerJSON) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	out := make(headerJSON, len(m))
	for k, raw := range m {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			out[k] = []string{s}
			continue
		}
		var vs []string
		if err := json.Unmarshal(raw, &vs); err != nil {
			return fmt.Errorf("header %q: not a string or a list of strings", k)
		}
		if vs == nil {
			vs = []string{}
		}
		out[k] = vs
	}
	*h = out
	return nil
}

// marshal is json.Marshal without HTML escaping: a body stored as JSON
// must keep its bytes (<, > and & stay as they are).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeBody picks the form to store b in.
func encodeBody(b []byte) bodyJSON {
	if len(b) == 0 {
		return bodyJSON{}
	}
	if !utf8.Valid(b) {
		return bodyJSON{BodyBase64: base64.StdEncoding.EncodeToString(b)}
	}
	if layout, ok := jsonLayout(b); ok {
		return layout
	}
	return bodyJSON{BodyText: string(b)}
}

// jsonLayout stores b as JSON when it is an object or array whose exact
// bytes can be laid out again from its compact form: compact, indented as
// json.Indent does, or spaced, with trailing whitespace.
func jsonLayout(b []byte) (bodyJSON, bool) {
	if b[0] != '{' && b[0] != '[' || !json.Valid(b) {
		return bodyJSON{}, false
	}
	core := bytes.TrimRight(b, " \t\r\n")
	tail := string(b[len(core):])
	var c bytes.Buffer
	if json.Compact(&c, core) != nil {
		return bodyJSON{}, false
	}
	compact := c.Bytes()
	out := bodyJSON{Body: compact, BodyTail: tail}
	if bytes.Equal(compact, core) {
		return out, true
	}
	if i := bytes.IndexByte(core, '\n'); i >= 0 {
		j := i + 1
		for j < len(core) && (core[j] == ' ' || core[j] == '\t') {
			j++
		}
		if unit := string(core[i+1 : j]); unit != "" {
			var ind bytes.Buffer
			if json.Indent(&ind, compact, "", unit) == nil && bytes.Equal(ind.Bytes(), core) {
				out.BodyIndent = unit
				return out, true
			}
		}
		return bodyJSON{}, false
	}
	if bytes.Equal(spaced(compact), core) {
		out.BodySpaced = true
		return out, true
	}
	return bodyJSON{}, false
}

// spaced puts a space after every ',' and ':' of compact JSON outside
// strings.
func spaced(compact []byte) []byte {
	out := make([]byte, 0, len(compact)+len(compact)/8)
	inString, escaped := false, false
	for _, c := range compact {
		out = append(out, c)
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',' || c == ':':
			out = append(out, ' ')
		}
	}
	return out
}

// decode gives back the body's bytes.
func (bj *bodyJSON) decode() ([]byte, error) {
	forms := 0
	for _, set := range []bool{len(bj.Body) > 0, bj.BodyText != "", bj.BodyBase64 != ""} {
		if set {
			forms++
		}
	}
	if forms > 1 {
		return nil, errors.New("body given in more than one form (body, body_text, body_base64)")
	}
	switch {
	case bj.BodyText != "":
		return []byte(bj.BodyText), nil
	case bj.BodyBase64 != "":
		b, err := base64.StdEncoding.DecodeString(bj.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf("body_base64: %v", err)
		}
		return b, nil
	case len(bj.Body) == 0:
		return nil, nil
	}
	if bj.Body[0] != '{' && bj.Body[0] != '[' {
		return nil, errors.New("body: a JSON body is an object or an array (other bodies go in body_text)")
	}
	if bj.BodyTail != "" && len(bytes.TrimLeft([]byte(bj.BodyTail), " \t\r\n")) > 0 {
		return nil, errors.New("body_tail: not whitespace")
	}
	// Compact again: a line re-spaced by a tool still gives the bytes
	// the sha256 was taken of.
	var c bytes.Buffer
	if err := json.Compact(&c, bj.Body); err != nil {
		return nil, fmt.Errorf("body: %v", err)
	}
	out := c.Bytes()
	switch {
	case bj.BodyIndent != "" && bj.BodySpaced:
		return nil, errors.New("body_indent and body_spaced together")
	case bj.BodyIndent != "":
		if len(bytes.Trim([]byte(bj.BodyIndent), " \t")) > 0 {
			return nil, errors.New("body_indent: not spaces or tabs")
		}
		var ind bytes.Buffer
		_ = json.Indent(&ind, out, "", bj.BodyIndent) // valid: compacted above
		out = ind.Bytes()
	case bj.BodySpaced:
		out = spaced(out)
	}
	return append(out, bj.BodyTail...), nil
}

func msOf(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

func durationOf(ms float64, field string) (time.Duration, error) {
	if math.IsNaN(ms) || ms < 0 || ms > float64(maxOffset/time.Millisecond) {
		return 0, fmt.Errorf("%s: %v is not a time from 0 to 24h in milliseconds", field, ms)
	}
	return time.Duration(math.Round(ms*1000)) * time.Microsecond, nil
}

// encodeLine appends it as one line of JSON, ending in a newline.
func encodeLine(buf *bytes.Buffer, it *Interaction) error {
	if it.Request.URL == nil {
		return errors.New("replay: interaction without a request URL")
	}
	l := lineJSON{
		Version: Version,
		Request: &requestJSON{
			Method:   it.Request.Method,
			URL:      it.Request.URL.String(),
			Headers:  headerJSON(it.Request.Header),
			bodyJSON: encodeBody(it.Request.Body),
		},
		Error:     it.Err,
		LatencyMS: msOf(it.Latency),
	}
	if r := it.Response; r != nil {
		rj := &responseJSON{
			Status:           r.Status,
			Headers:          headerJSON(r.Header),
			ContentLength:    r.ContentLength,
			TransferEncoding: r.TransferEncoding,
			Uncompressed:     r.Uncompressed,
			SHA256:           r.digest(),
			End:              r.End,
			EndError:         r.EndErr,
		}
		if r.Stream {
			frames := make([]frameJSON, len(r.Frames))
			for i, f := range r.Frames {
				frames[i] = encodeFrame(f)
			}
			rj.Frames = &frames
		} else {
			rj.bodyJSON = encodeBody(r.Body)
		}
		l.Response = rj
	}
	b, err := marshal(&l)
	if err != nil {
		return err
	}
	buf.Write(b)
	buf.WriteByte('\n')
	return nil
}

// decodeLine reads one line; errors say what is wrong with it, and the
// caller adds the line number.
func decodeLine(b []byte) (Interaction, error) {
	var it Interaction
	// The version first, alone: a newer line may not fit this struct.
	var v struct {
		Version *json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return it, fmt.Errorf("malformed JSON: %v", err)
	}
	if v.Version == nil {
		return it, errors.New("no version: not a cassette line")
	}
	n, err := strconv.Atoi(string(*v.Version))
	switch {
	case err != nil || n < 1:
		return it, fmt.Errorf("version %s is not a positive integer", *v.Version)
	case n > Version:
		return it, fmt.Errorf("%w: version %d is newer than this package reads (%d); update llmhistory", ErrUnsupportedVersion, n, Version)
	}
	var l lineJSON
	if err := json.Unmarshal(b, &l); err != nil {
		return it, fmt.Errorf("malformed JSON: %v", err)
	}
	if l.Request == nil || l.Request.Method == "" || l.Request.URL == "" {
		return it, errors.New("request: method and url are required")
	}
	if it.Request.URL, err = url.Parse(l.Request.URL); err != nil {
		return it, fmt.Errorf("request url: %v", err)
	}
	if it.Request.URL.String() == "" {
		return it, fmt.Errorf("request url %q is empty", l.Request.URL)
	}
	it.Request.Method = l.Request.Method
	it.Request.Header = http.Header(l.Request.Headers)
	if it.Request.Body, err = l.Request.decode(); err != nil {
		return it, fmt.Errorf("request %v", err)
	}
	it.Err = l.Error
	if it.Latency, err = durationOf(l.LatencyMS, "latency_ms"); err != nil {
		return it, err
	}
	rj := l.Response
	if rj == nil {
		if it.Err == "" {
			return it, errors.New("neither a response nor an error")
		}
		return it, nil
	}
	if it.Err != "" {
		return it, errors.New("both a response and an error")
	}
	if rj.Status < 100 || rj.Status > 999 {
		return it, fmt.Errorf("response status %d is not an HTTP status", rj.Status)
	}
	r := &Response{
		Status:           rj.Status,
		Header:           http.Header(rj.Headers),
		ContentLength:    rj.ContentLength,
		TransferEncoding: rj.TransferEncoding,
		Uncompressed:     rj.Uncompressed,
		End:              rj.End,
		EndErr:           rj.EndError,
	}
	switch r.End {
	case EndEOF, EndClosed:
		if r.EndErr != "" {
			return it, errors.New("response end_error without end \"error\"")
		}
	case EndError:
	default:
		return it, fmt.Errorf("response end %q is not \"closed\" or \"error\"", r.End)
	}
	if r.ContentLength < -1 {
		return it, fmt.Errorf("response content_length %d", r.ContentLength)
	}
	if rj.Frames != nil {
		if len(rj.Body) > 0 || rj.BodyText != "" || rj.BodyBase64 != "" {
			return it, errors.New("response has both frames and a body")
		}
		r.Stream = true
		r.Frames = make([]Frame, len(*rj.Frames))
		for i, f := range *rj.Frames {
			if r.Frames[i].At, err = durationOf(f.AtMS, fmt.Sprintf("response frame %d at_ms", i)); err != nil {
				return it, err
			}
			if r.Frames[i].Data, err = f.decode(); err != nil {
				return it, fmt.Errorf("response frame %d: %v", i, err)
			}
		}
	} else if r.Body, err = rj.decode(); err != nil {
		return it, fmt.Errorf("response %v", err)
	}
	if rj.SHA256 == "" {
		return it, errors.New("response has no sha256")
	}
	if got := r.digest(); got != rj.SHA256 {
		what := "body"
		if r.Stream {
			what = "frames"
		}
		return it, fmt.Errorf("response %s do not match their sha256 (%s…, recorded %.12s…): the line was edited after it was recorded; re-record it, or use WithFault to change an answer in a test", what, got[:12], rj.SHA256)
	}
	it.Response = r
	return it, nil
}

// Read loads a cassette: one interaction per line, blank lines skipped.
// The first bad line stops it with a [*LineError] naming the line: a
// truncated or malformed line, a version this package does not know
// ([ErrUnsupportedVersion]), a response whose bytes do not match the
// sha256 stored with them.
func Read(r io.Reader) ([]Interaction, error) {
	var out []Interaction
	err := scan(r, "", func(it Interaction, _ int) { out = append(out, it) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scan calls fn for each interaction of a cassette, with its line.
func scan(r io.Reader, path string, fn func(it Interaction, line int)) error {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return &LineError{Path: path, Line: line, Err: err}
		}
		complete := len(b) > 0 && b[len(b)-1] == '\n'
		if t := bytes.TrimSpace(b); len(t) > 0 {
			it, derr := decodeLine(t)
			if derr != nil {
				if !complete && !json.Valid(t) {
					derr = fmt.Errorf("truncated: the file ends in the middle of this line (%v)", derr)
				}
				return &LineError{Path: path, Line: line, Err: derr}
			}
			fn(it, line)
		}
		if err == io.EOF {
			return nil
		}
	}
}

// Write writes interactions as a cassette, one line each. It refuses, with
// a [*SecretError] and before writing anything, interactions that hold a
// key-shaped string (see the package doc, Secrets).
func Write(w io.Writer, interactions []Interaction) error {
	var buf bytes.Buffer
	for i := range interactions {
		if err := checkSecrets(&interactions[i], nil); err != nil {
			err.Interaction = i
			return err
		}
		if err := encodeLine(&buf, &interactions[i]); err != nil {
			return fmt.Errorf("replay: interaction %d: %w", i, err)
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// clone returns a deep copy, so that a caller of Interactions or a hook
// cannot change what the cassette holds.
func (it *Interaction) clone() Interaction {
	c := *it
	c.Request = it.Request.clone()
	if it.Response != nil {
		r := *it.Response
		r.Header = it.Response.Header.Clone()
		r.TransferEncoding = slices.Clone(r.TransferEncoding)
		r.Body = slices.Clone(r.Body)
		r.Frames = slices.Clone(r.Frames)
		for i := range r.Frames {
			r.Frames[i].Data = slices.Clone(r.Frames[i].Data)
		}
		c.Response = &r
	}
	return c
}

func (r *Request) clone() Request {
	c := *r
	if r.URL != nil {
		u := *r.URL
		c.URL = &u
	}
	c.Header = r.Header.Clone()
	c.Body = slices.Clone(r.Body)
	return c
}
