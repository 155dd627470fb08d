package middleware

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
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
// Where the guidance goes is the request's provider's to say
// (providers.GuidanceEditor, asked of the built-in providers and of those
// given with WithProviders): an OpenAI chat completion gets a system
// message inserted first in its messages, a Responses API call its
// instructions (appended after two newlines when it has some), a Gemini
// generateContent or streamGenerateContent call a part in its
// systemInstruction (added when absent), an Anthropic Messages call its
// system prompt (a string appended to, a block added). Every other byte of the body is sent as it was; the record of
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

// addPreview edits the body of out, the clone the recorder sends, to
// carry the guidance and the preview. The request's provider does the edit
// (providers.GuidanceEditor): it alone knows where its API takes system
// guidance. On any doubt it leaves out as it is.
func (r *Recorder) addPreview(a *attempt, req, out *http.Request, c *captured) {
	defer r.recovered("adding the history preview")
	if !c.whole || len(c.buf) == 0 || !jsonRequest(req.Header) {
		return
	}
	ed := r.guidanceEditor(a)
	if ed == nil {
		return
	}
	if r.tracePending(a.trace, 0) {
		// A call of this conversation has ended but is not in the
		// history yet (an agent's previous step, usually): let it in.
		r.work.waitUpTo(settleWait)
	}
	// The body as the caller's SDK wrote it, not a redacted copy: it is
	// what will be sent.
	trace := a.trace
	if trace == "" && r.convs != nil {
		trace = r.inferredTrace(a, c.buf)
	}
	edited, ok := ed.AddGuidance(&providers.Request{Method: a.method, URL: redact.SafeURL(&a.url, a.secrets...), Header: a.header, Body: c.buf}, r.previewText(trace))
	if !ok || len(edited) == 0 || len(edited) > r.cfg.maxReq {
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
	// The record holds what was sent; the dedup key, computed already
	// (begin does not leave it for later when the preview is on), keeps
	// the caller's body so that a resent request still matches.
	if c.pooled != nil {
		releaseBuf(c.pooled)
		c.pooled = nil
	}
	a.reqBody, a.pooled, a.guided = edited, nil, true
}

// inferredTrace returns the conversation a call without a trace continues,
// found from its body as the caller wrote it, for its preview; "" when it
// starts one. It parses the request on the call's path, which only the
// preview asks for; the record is placed by the worker as every other.
func (r *Recorder) inferredTrace(a *attempt, body []byte) string {
	u := a.url
	call, ok := a.prov.ParseRequest(&providers.Request{Method: a.method, URL: &u, Header: a.header, Body: body, MaxArgs: r.cfg.maxReq})
	if !ok {
		return ""
	}
	user := ""
	if at := attributionFrom(a.ctx); at != nil {
		user, _ = record.ClipAttribution(a.redactString(at.user))
	}
	trace, _ := r.convs.find(user, argsForInference(&call), previousResponse(&call))
	return trace
}

// guidanceEditor matches the request to its provider, as the record will:
// by method, URL and headers, in the recorder's order. The match is kept
// for the record's parse, so a request is matched once. It returns the
// provider's GuidanceEditor, or nil when the provider takes no guidance.
func (r *Recorder) guidanceEditor(a *attempt) providers.GuidanceEditor {
	u := a.url
	p, _, ok := providers.Match(r.cfg.providers, &providers.Request{Method: a.method, URL: &u, Header: a.header})
	if !ok {
		return nil
	}
	a.prov = p
	ed, _ := p.(providers.GuidanceEditor)
	return ed
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
		b.WriteString(clipLine(redact.Secrets(oneLine(trace)), maxPreviewTrace))
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
	return clipLine(redact.Secrets(oneLine(b.String())), maxPreviewLine)
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
