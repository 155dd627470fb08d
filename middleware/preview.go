package middleware

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// HistoryGuidance is the system guidance [WithHistoryPreview] adds to chat
// requests, before the preview of the conversation's latest records.
const HistoryGuidance = "The history of this conversation is available as structured records in " +
	record.HistoryKey + ": a list of JSON objects, oldest first, one per model call, " +
	"with call_id, timestamp, speaker, method_name, args, kwargs and outcome_summary. " +
	"To use earlier results, filter and query that list directly (by speaker, method_name, " +
	"outcome_summary.ok, recency) rather than building speculative abstractions over it. " +
	"Optional fields (trace_id, error_type, error_message, usage, output and others) may be absent: " +
	"check for them before reading them."

// Bounds of the preview.
const (
	maxPreviewLatest = 3   // records summarized
	maxPreviewLine   = 160 // bytes of one summary line, ellipsis included
	maxPreviewTrace  = 64  // bytes of the trace id quoted in the header

	// settleWait is how long a call waits for the worker to settle the
	// calls that have just ended: for their records to reach the history,
	// so that an agent's next call sees the one before it in its preview,
	// or to learn whether the attempt it may retry failed. Past it, the
	// call goes on without them.
	settleWait = 50 * time.Millisecond
)

// WithHistoryPreview makes the recorder add to every chat request it
// recognizes the [HistoryGuidance] and a preview of the conversation: how
// many records its trace holds and a one-line summary of each of the
// latest ones (at most latest, clamped to 1..3; zero or less means 3).
// Calls without a trace see the records made without one.
//
// An OpenAI chat completion gets a system message inserted first in its
// messages, a Responses API call its instructions (appended after two
// newlines when it has some), a Gemini generateContent or
// streamGenerateContent call a part in its systemInstruction (added when
// absent). Every other byte of the body is sent as it was; the record of
// the call holds what was sent, and history_guidance is true. Anything
// else passes untouched: other endpoints, bodies that are not JSON of the
// expected shape, encoded, longer than the capture cap (WithMaxBody), or
// without GetBody (the recorder never reads those ahead of the transport).
//
// Off by default: it changes what the model is asked.
func WithHistoryPreview(latest int) Option {
	if latest <= 0 || latest > maxPreviewLatest {
		latest = maxPreviewLatest
	}
	return func(c *config) { c.previewLatest = latest }
}

// previewAPI says where an API takes system guidance.
type previewAPI int

const (
	apiNone         previewAPI = iota
	apiOpenAIChat              // a system message first in "messages"
	apiOpenAIRespns            // "instructions"
	apiGemini                  // a part of "systemInstruction"
)

// addPreview edits the body of out, the clone the recorder sends, to
// carry the guidance and the preview. On any doubt it leaves out as it is.
func (r *Recorder) addPreview(a *attempt, req, out *http.Request, c *captured) {
	defer r.recovered("adding the history preview")
	if !c.whole || len(c.buf) == 0 || !jsonRequest(req.Header) {
		return
	}
	api := r.previewTarget(a)
	if api == apiNone {
		return
	}
	if r.tracePending(a.trace, 0) {
		// A call of this conversation has ended but is not in the
		// history yet (an agent's previous step, usually): let it in.
		r.work.waitUpTo(settleWait)
	}
	edited, ok := editBody(api, c.buf, r.previewText(a.trace))
	if !ok || len(edited) > r.cfg.maxReq {
		return
	}

	// Nothing failed: send the edited body, and close the caller's,
	// which the transport will no longer see.
	if out.Body == req.Body && req.Body != nil {
		req.Body.Close()
	}
	out.Body = io.NopCloser(bytes.NewReader(edited))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(edited)), nil }
	out.ContentLength = int64(len(edited))
	if out.Header.Get("Content-Length") != "" {
		out.Header = out.Header.Clone() // shared with the caller's request
		out.Header.Set("Content-Length", strconv.Itoa(len(edited)))
	}
	// The record holds what was sent; the dedup key, computed already,
	// keeps the caller's body so that a resent request still matches.
	if c.pooled != nil {
		releaseBuf(c.pooled)
		c.pooled = nil
	}
	a.reqBody, a.pooled, a.guided = edited, nil, true
}

// keyPending adds delta to the count of attempts under key that have ended
// and that the worker has yet to settle, and reports whether there are
// any.
func (r *Recorder) keyPending(key string, delta int) bool {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	n := r.keyPend[key] + delta
	if n <= 0 {
		delete(r.keyPend, key)
		return false
	}
	r.keyPend[key] = n
	return true
}

// tracePending adds delta to the count of a trace's ended calls not yet
// in the history, and reports whether there are any. It counts only when
// the preview is on.
func (r *Recorder) tracePending(trace string, delta int) bool {
	if r.pendTrace == nil {
		return false
	}
	r.pendMu.Lock()
	defer r.pendMu.Unlock()
	n := r.pendTrace[trace] + delta
	if n <= 0 {
		delete(r.pendTrace, trace)
		return false
	}
	r.pendTrace[trace] = n
	return true
}

// jsonRequest reports whether a request declares a JSON body that is not
// encoded: one we can read and edit as sent.
func jsonRequest(h http.Header) bool {
	if enc := strings.TrimSpace(h.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return false
	}
	ct := h.Get("Content-Type")
	return ct == "" || strings.Contains(strings.ToLower(ct), "json")
}

// previewTarget asks the recorder's providers, in the recorder's order,
// which one owns the request's URL, as they will for the record. Only the
// built-in OpenAI and Gemini providers' generation endpoints take the
// preview; a provider of your own that claims the URL first keeps it
// untouched, since its wire format is unknown here.
func (r *Recorder) previewTarget(a *attempt) previewAPI {
	u := a.url
	p, call, ok := providers.Match(r.cfg.providers, &providers.Request{Method: a.method, URL: &u, Header: a.header})
	if !ok {
		return apiNone
	}
	switch p.(type) {
	case openai.Provider:
		switch call.MethodName {
		case openai.MethodChat:
			return apiOpenAIChat
		case openai.MethodResponses:
			return apiOpenAIRespns
		}
	case gemini.Provider:
		switch call.MethodName {
		case gemini.MethodGenerateContent, gemini.MethodStreamGenerateContent:
			return apiGemini
		}
	}
	return apiNone
}

// previewText is the guidance followed by the preview of a trace:
//
//	History: 5 records in this conversation (trace t-1). Latest:
//	- 12:01:03 agent openai.chat.completions.create model=gpt-4o ok chat.completion 812ms
//
// It never holds args, kwargs, output, program_source or error messages.
func (r *Recorder) previewText(trace string) string {
	tail, total := r.history.TraceSummaries(trace, r.cfg.previewLatest)
	var b strings.Builder
	b.Grow(len(HistoryGuidance) + 80 + len(tail)*(maxPreviewLine+1))
	b.WriteString(HistoryGuidance)
	b.WriteString("\n\nHistory: ")
	b.WriteString(strconv.Itoa(total))
	if total == 1 {
		b.WriteString(" record in this conversation (")
	} else {
		b.WriteString(" records in this conversation (")
	}
	if trace == "" {
		b.WriteString("calls without a trace")
	} else {
		b.WriteString("trace ")
		b.WriteString(clipLine(Redact(oneLine(trace)), maxPreviewTrace))
	}
	b.WriteString(").")
	if len(tail) > 0 {
		b.WriteString(" Latest:")
	}
	for i := range tail {
		b.WriteString("\n")
		b.WriteString(summaryLine(&tail[i]))
	}
	return b.String()
}

// summaryLine sums up a record in one line of at most maxPreviewLine
// bytes: when, who, what, which model, how it ended, how long it took.
func summaryLine(rec *record.Record) string {
	var b strings.Builder
	b.WriteString("- ")
	if ts := rec.Timestamp; len(ts) >= 19 && ts[10] == 'T' {
		b.WriteString(ts[11:19]) // hh:mm:ss, UTC
		b.WriteByte(' ')
	}
	for _, s := range []string{rec.Speaker, rec.MethodName} {
		if s != "" {
			b.WriteString(s)
			b.WriteByte(' ')
		}
	}
	if rec.Model != "" {
		b.WriteString("model=")
		b.WriteString(rec.Model)
		b.WriteByte(' ')
	}
	b.WriteString(rec.Outcome.Status)
	if rec.Outcome.OK {
		if rec.Outcome.ValueClass != "" {
			b.WriteByte(' ')
			b.WriteString(rec.Outcome.ValueClass)
		}
	} else if rec.ErrorType != "" {
		b.WriteByte(' ')
		b.WriteString(rec.ErrorType)
	}
	if rec.Attempts > 1 {
		b.WriteString(" attempts=")
		b.WriteString(strconv.Itoa(rec.Attempts))
	}
	if ms := rec.DurationMS; ms > 0 && ms < math.MaxInt32 {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(int(math.Round(ms))))
		b.WriteString("ms")
	}
	// Models and speakers are whatever the wire said: one line, no
	// secrets, bounded.
	return clipLine(Redact(oneLine(b.String())), maxPreviewLine)
}

// oneLine replaces control characters, newlines among them, by spaces.
func oneLine(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029'
}

// clipLine cuts s to at most max bytes, on a rune boundary, marking the
// cut with an ellipsis.
func clipLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	i := max - len(mark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.ToValidUTF8(s[:i], "") + mark
}

// editBody returns body with text added where api takes system guidance,
// and whether it did. The edit is one insertion: every byte of body is
// kept, in order. A body that is not a JSON object of the expected shape
// is returned as it is, with false. body itself is never modified.
func editBody(api previewAPI, body []byte, text string) ([]byte, bool) {
	// sjson rewrites the bytes around a top-level object (it drops
	// whitespace before and after it): edit the object alone.
	start, end := trimSpace(body)
	obj := body[start:end]
	if len(obj) < 2 || obj[0] != '{' || !gjson.ValidBytes(obj) {
		return body, false
	}
	var edited []byte
	switch api {
	case apiOpenAIChat:
		edited = insertSystemMessage(obj, text)
	case apiOpenAIRespns:
		edited = addInstructions(obj, text)
	case apiGemini:
		edited = addSystemPart(obj, text)
	}
	if edited == nil {
		return body, false
	}
	if start == 0 && end == len(body) {
		return edited, true // a fresh slice already: the usual case
	}
	out := make([]byte, 0, start+len(edited)+len(body)-end)
	out = append(out, body[:start]...)
	out = append(out, edited...)
	return append(out, body[end:]...), true
}

// insertSystemMessage puts a system message first in "messages". sjson
// can only append to an array, and the guidance must come before the
// conversation: splice it in after the bracket.
func insertSystemMessage(obj []byte, text string) []byte {
	msgs := get(obj, "messages")
	if !msgs.IsArray() || msgs.Index <= 0 {
		return nil
	}
	msg := marshalText(`{"role":"system","content":`, text, `}`)
	at := msgs.Index + 1 // just after '['
	if first := bytes.TrimLeft(obj[at:msgs.Index+len(msgs.Raw)], " \t\r\n"); first[0] != ']' {
		msg = append(msg, ',')
	}
	return splice(obj, at, msg)
}

// addInstructions sets a Responses API call's instructions, or appends the
// guidance to them after a blank line.
func addInstructions(obj []byte, text string) []byte {
	in := get(obj, "instructions")
	switch {
	case !in.Exists():
		out, err := sjson.SetRawBytes(obj, "instructions", marshalText("", text, ""))
		if err != nil {
			return nil
		}
		return out
	case in.Type == gjson.String && in.Index > 0:
		// Inside the string, before its closing quote: the caller's
		// instructions keep their bytes, escapes included.
		q := marshalText("", "\n\n"+text, "")
		return splice(obj, in.Index+len(in.Raw)-1, q[1:len(q)-1])
	}
	return nil // null or not a string: not ours to rewrite
}

// addSystemPart appends a text part to the systemInstruction (or its
// snake_case spelling), or adds one.
func addSystemPart(obj []byte, text string) []byte {
	if !get(obj, "contents").IsArray() {
		return nil
	}
	key := "systemInstruction"
	si := get(obj, key)
	if snake := get(obj, "system_instruction"); snake.Exists() {
		if si.Exists() {
			return nil // both: which one the server reads is not ours to guess
		}
		key, si = "system_instruction", snake
	}
	part := marshalText(`{"text":`, text, `}`)
	var out []byte
	var err error
	switch {
	case !si.Exists():
		out, err = sjson.SetRawBytes(obj, key, append(append([]byte(`{"parts":[`), part...), ']', '}'))
	case si.IsObject() && si.Get("parts").IsArray():
		out, err = sjson.SetRawBytes(obj, key+".parts.-1", part)
	case si.IsObject() && !si.Get("parts").Exists():
		out, err = sjson.SetRawBytes(obj, key+".parts", append(append([]byte{'['}, part...), ']'))
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return out
}

// get looks path up in b without copying it: b does not change while the
// result is in use, and nothing taken from it is kept.
func get(b []byte, path string) gjson.Result {
	return gjson.Get(unsafe.String(unsafe.SliceData(b), len(b)), path)
}

// marshalText returns prefix, text as a JSON string, suffix.
func marshalText(prefix, text, suffix string) []byte {
	q, _ := json.Marshal(text) // a string always marshals
	out := make([]byte, 0, len(prefix)+len(q)+len(suffix)+1)
	out = append(out, prefix...)
	out = append(out, q...)
	return append(out, suffix...)
}

// splice returns a copy of b with ins inserted at i.
func splice(b []byte, i int, ins []byte) []byte {
	out := make([]byte, 0, len(b)+len(ins))
	out = append(out, b[:i]...)
	out = append(out, ins...)
	return append(out, b[i:]...)
}

// trimSpace returns the bounds of b without JSON whitespace around it.
func trimSpace(b []byte) (start, end int) {
	end = len(b)
	for start < end && isSpace(b[start]) {
		start++
	}
	for end > start && isSpace(b[end-1]) {
		end--
	}
	return start, end
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
