package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/detect"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// workQueueSize bounds the calls waiting to be parsed. Past it, finishing
// a call waits for room: memory stays bounded, and nothing is dropped.
const workQueueSize = 256

// job is one unit of the worker's work: the record of a finished attempt,
// or a held failure to emit because its window ended.
type job struct {
	a    *attempt
	f    finishInfo
	res  *providers.Result // already settled on the call's path
	hold *held             // the attempt's failure waits for its retry here
	emit *held             // a held failure whose retry never came
	// keyed: the attempt's key is counted pending by the folder until the worker
	// has settled it, holding it if it turns out a retriable failure
	keyed bool
}

// workQueue runs jobs on one goroutine, in the order they were submitted.
// The order matters: a retry's record is built after the record of the
// failure it retries.
type workQueue struct {
	r    *Recorder
	jobs chan *job
	done chan struct{}

	mu        sync.Mutex // orders submissions; guards closed
	closed    bool
	submitted uint64

	progress  sync.Mutex
	cond      *sync.Cond
	processed uint64
	waiters   int
}

func (q *workQueue) start(r *Recorder) {
	q.r = r
	q.jobs = make(chan *job, workQueueSize)
	q.done = make(chan struct{})
	q.cond = sync.NewCond(&q.progress)
	go q.run()
}

// submit queues j, or runs it at once when the queue has stopped.
func (q *workQueue) submit(j *job) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.r.process(j)
		return
	}
	q.submitted++
	q.jobs <- j // under the lock, so that the channel's order is the count's
	q.mu.Unlock()
}

// wait returns once every job submitted before it has been processed.
func (q *workQueue) wait() {
	q.mu.Lock()
	target := q.submitted
	q.mu.Unlock()
	q.progress.Lock()
	q.waiters++
	for q.processed < target {
		q.cond.Wait()
	}
	q.waiters--
	q.progress.Unlock()
}

// waitUpTo is wait, for at most d.
func (q *workQueue) waitUpTo(d time.Duration) {
	q.mu.Lock()
	target := q.submitted
	q.mu.Unlock()
	q.progress.Lock()
	defer q.progress.Unlock()
	if q.processed >= target {
		return // the usual case: nothing to wait for, no timer
	}
	expired := false
	t := time.AfterFunc(d, func() {
		q.progress.Lock()
		expired = true
		q.cond.Broadcast()
		q.progress.Unlock()
	})
	defer t.Stop()
	q.waiters++
	for q.processed < target && !expired {
		q.cond.Wait()
	}
	q.waiters--
}

func (q *workQueue) pending() int {
	q.mu.Lock()
	s := q.submitted
	q.mu.Unlock()
	q.progress.Lock()
	defer q.progress.Unlock()
	return int(s - q.processed)
}

// stop processes what is queued and ends the goroutine; later jobs run on
// the submitter's goroutine.
func (q *workQueue) stop() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	close(q.jobs)
	q.mu.Unlock()
	<-q.done
}

func (q *workQueue) run() {
	defer close(q.done)
	for j := range q.jobs {
		q.r.process(j)
		q.progress.Lock()
		q.processed++
		if q.waiters > 0 {
			q.cond.Broadcast()
		}
		q.progress.Unlock()
	}
}

// process builds and emits a record, or holds it for its retry.
func (r *Recorder) process(j *job) {
	defer r.recovered("building a record")
	if j.emit != nil {
		r.emit(j.emit.ctx, j.emit.rec, nil) // a held record has Args of its own
		return
	}
	a := j.a
	defer r.tracePending(a.trace, -1)
	var res providers.Result
	if j.res != nil {
		res = *j.res
	} else {
		res = a.result(&j.f)
	}
	if j.f.cap != nil {
		j.f.cap.release()
	}
	a.parse() // a transport error left the request unparsed
	rec := a.record(&j.f, &res)
	// l holds the buffer rec's Args are in, if any, for emit: it goes
	// back to the pool once the history and the sinks are done with them.
	var l *lease
	if buf := a.argsBuf; buf != nil {
		a.argsBuf, a.call.Args = nil, nil // read no more through a
		if j.keyed && mayRetry(&j.f, &res) || j.hold != nil {
			// Held for its retry, the record outlives the buffer.
			rec.Args = bytes.Clone(rec.Args)
			releaseBuf(buf)
		} else {
			a.lease.buf = buf
			l = &a.lease
		}
	}
	if j.keyed {
		defer r.fold.pending(a.key, -1) // after the hold: a waiting retry finds it
		if mayRetry(&j.f, &res) {
			h := a.holding(a.key) // not j.hold, which finish reads after submitting j
			h.rec = rec
			r.fold.hold(h)
			return
		}
	}
	if j.hold != nil {
		j.hold.rec = rec // emitted by its retry's job, its expiry or Close
		return
	}
	r.emit(a.ctx, rec, l)
}

// mayRetry reports whether an attempt the worker settled failed in a way
// its caller may retry: retriable, or JSON cut short in a 2xx body that
// came whole (a decode error that SDKs report as an unexpected EOF).
func mayRetry(f *finishInfo, res *providers.Result) bool {
	return res.Outcome.Retriable || f.cutWhole
}

// record builds the record of an attempt, folding in the failed attempts
// it retried.
func (a *attempt) record(f *finishInfo, res *providers.Result) record.Record {
	speaker := a.speaker
	if speaker == "" {
		speaker = a.call.Speaker
	}
	if speaker == "" {
		speaker = record.SpeakerUser
	}
	// The record's small optional parts, in one allocation.
	parts := &struct {
		depth int
		cost  record.Cost
	}{depth: a.depth}
	rec := record.Record{
		CallID:       a.callID,
		Timestamp:    a.timestamp,
		Speaker:      speaker,
		MethodName:   a.call.MethodName,
		Args:         a.call.Args,
		Kwargs:       a.call.Kwargs,
		Outcome:      res.Outcome,
		TraceID:      a.trace,
		ParentCallID: a.parent,
		Depth:        &parts.depth,
		ErrorType:    res.Outcome.ErrorType,
		Model:        res.Model,
		Usage:        res.Usage,
		Truncated:    joinTruncated(a.call.Truncated, res.Truncated),
		Attempts:     a.attempts(),
		Hops:         a.hops(),

		HistoryGuidance: a.guided,
	}
	if !res.Outcome.OK {
		rec.ErrorMessage = clipMessage(a.redactString(res.ErrorMessage))
	}
	if at := attributionFrom(a.ctx); at != nil {
		a.attribute(&rec, at)
	}
	if c := a.r.convs; c != nil {
		a.placeInConversation(c, &rec, res)
	}
	// What the response said of itself, in case it says a secret (the
	// body of a success is not redacted whole unless its text is kept).
	rec.Outcome.ResponseID = a.redactString(rec.Outcome.ResponseID)
	rec.Outcome.FinishReason = a.redactString(rec.Outcome.FinishReason)
	if rec.Model == "" {
		rec.Model = a.call.Model
	}
	rec.Model = a.redactString(rec.Model)
	rec.ServerAddress, rec.ServerPort = server(&a.url)
	if res.ServiceTier != "" {
		rec.ServiceTier = clipMessage(a.redactString(res.ServiceTier))
	}
	if res.SystemFingerprint != "" {
		rec.SystemFingerprint = clipMessage(a.redactString(res.SystemFingerprint))
	}
	if rec.Timestamp == "" {
		rec.Timestamp = record.FormatTime(a.start)
	}
	if h := a.claimed; h != nil {
		// The held record was built first: the queue is in order.
		rec.CallID, rec.Timestamp = h.rec.CallID, h.rec.Timestamp
		if a.hop {
			// What the caller asked is the first hop's request: a 303 (or
			// a 301/302 after a POST) sends the next hop without a body.
			rec.Speaker, rec.MethodName, rec.Args, rec.Kwargs = h.rec.Speaker, h.rec.MethodName, h.rec.Args, h.rec.Kwargs
			rec.Truncated, rec.HistoryGuidance = h.rec.Truncated, h.rec.HistoryGuidance
			if rec.Model == "" {
				rec.Model = h.rec.Model
			}
		}
	}
	rec.DurationMS = float64(f.end.Sub(a.firstStart()).Microseconds()) / 1000
	if f.stream && !f.firstChunk.IsZero() {
		// From the logical call's start, as gen_ai.client.operation.time_to_first_chunk.
		rec.TimeToFirstChunkMS = float64(f.firstChunk.Sub(a.firstStart()).Microseconds()) / 1000
	}
	a.r.scanCode(&rec, res)
	if p := a.r.cfg.prices; p != nil && rec.Usage != nil && rec.Model != "" && !cost.Local(rec.MethodName) {
		// After the model and usage are final. Table.Apply would allocate
		// the cost; Table.Cost does not.
		if c, ok := p.Cost(rec.Model, *rec.Usage); ok {
			parts.cost = c
			rec.Cost = &parts.cost
		}
	}
	if a.r.cfg.storeOutput {
		a.keepOutput(&rec, res)
	}
	return rec
}

// server returns the host of u without its port, in lower case (as DNS
// reads it, so that one server is one value), and its port: the one it
// names, else its scheme's (443, 80). User info, path and query are never
// part of it. No allocation for a host in lower case: it is a part of
// u.Host.
func server(u *url.URL) (host string, port int) {
	host = strings.ToLower(u.Hostname())
	if host == "" {
		return "", 0
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil && n > 0 && n < 1<<16 {
			return host, n
		}
		return host, 0
	}
	switch {
	case strings.EqualFold(u.Scheme, "https"), strings.EqualFold(u.Scheme, "wss"):
		port = 443
	case strings.EqualFold(u.Scheme, "http"), strings.EqualFold(u.Scheme, "ws"):
		port = 80
	}
	return host, port
}

// keepOutput gives rec the answer, the message the model generated (kept
// unless WithoutOutput): its parts copied (a provider may build their
// text in a lent buffer), bounded, and redacted. The body they were read
// from was redacted before the provider read it; they are redacted again
// once put together, since a stream may split a secret across its
// events.
func (a *attempt) keepOutput(rec *record.Record, res *providers.Result) {
	if len(res.Output.Parts) == 0 {
		return
	}
	out, cut := a.boundedMessage(&res.Output)
	rec.Output = out
	if cut {
		cutField(rec, "output_message")
	}
}

// maxOutputParts bounds the parts of an answer a record keeps.
const maxOutputParts = 128

// boundedMessage returns m as a record keeps it: at most maxOutputParts
// parts; of each kind of what the model said (text, reasoning, refusals,
// tool results, and tool calls' arguments with data kept as sent) at most
// maxOutput bytes, redacted (a secret may be split between a stream's
// events); ids, names, types and references at most maxMessage bytes
// each. cut reports that something was left out. m's strings are its own
// (providers.Result's are): what is kept whole is kept as it is, what is
// cut is copied, so that the record holds nothing of the rest.
func (a *attempt) boundedMessage(m *record.Message) (*record.Message, bool) {
	n := min(len(m.Parts), maxOutputParts)
	cut := n < len(m.Parts)
	out := &record.Message{Role: m.Role, Parts: make([]record.Part, n)}
	var room [5]int // bytes used, by kind: text, reasoning, refusal, tool result, JSON
	kind := func(typ string) *int {
		switch typ {
		case record.PartText:
			return &room[0]
		case record.PartReasoning:
			return &room[1]
		case record.PartRefusal:
			return &room[2]
		}
		return &room[3]
	}
	fit := func(s string, n int) string {
		c, over := clip(s, n)
		if !over {
			return s
		}
		cut = true
		return strings.Clone(c)
	}
	for i := range out.Parts {
		p, q := &m.Parts[i], &out.Parts[i]
		*q = *p
		q.Type, q.ID, q.Name, q.MIMEType, q.URI = fit(p.Type, maxMessage), fit(p.ID, maxMessage), fit(p.Name, maxMessage), fit(p.MIMEType, maxMessage), fit(a.redactString(p.URI), maxMessage)
		if p.Content != "" {
			used := kind(p.Type)
			q.Content = fit(a.redactString(p.Content), maxOutput-*used)
			*used += len(q.Content)
		}
		for _, raw := range []*json.RawMessage{&q.Arguments, &q.Data} {
			if len(*raw) == 0 {
				continue
			}
			b := a.redact(*raw)
			if left := maxOutput - room[4]; len(b) > left {
				// Cut JSON is JSON no more: the text, as a string, cut
				// until its quoted form fits.
				text := string(b)
				for len(b) > left && text != "" {
					text, _ = clip(text, max(len(text)-(len(b)-left), 0))
					b = record.AppendCanonicalJSON(nil, []byte(text))
				}
				if len(b) > left {
					b = nil
				}
				cut = true
			}
			*raw = b
			room[4] += len(b)
		}
	}
	return out, cut
}

// clip returns s cut to at most n bytes, on a rune boundary, and whether
// it was cut.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return strings.ToValidUTF8(s[:n], ""), true
}

// cutField names field in rec.Truncated, which may share its array with
// the call's: appended to a copy.
func cutField(rec *record.Record, field string) {
	if !slices.Contains(rec.Truncated, field) {
		rec.Truncated = append(append([]string(nil), rec.Truncated...), field)
	}
}

// attribute gives rec the user, tags and metadata of the call's context,
// redacted (a key-shaped value never reaches a record) and bounded.
func (a *attempt) attribute(rec *record.Record, at *attribution) {
	var cut []string
	clip := func(s, field string) string {
		s, over := record.ClipAttribution(a.redactString(s))
		if over && !slices.Contains(cut, field) {
			cut = append(cut, field)
		}
		return s
	}
	if at.user != "" {
		rec.UserID = clip(at.user, "user_id")
	}
	if len(at.tags) > 0 {
		rec.Tags = make([]string, 0, len(at.tags))
		for _, t := range at.tags {
			if t = clip(t, "tags"); !slices.Contains(rec.Tags, t) {
				rec.Tags = append(rec.Tags, t)
			}
		}
	}
	if at.tagsOver && !slices.Contains(cut, "tags") {
		cut = append(cut, "tags")
	}
	if len(at.meta) > 0 {
		rec.Metadata = make(map[string]string, len(at.meta))
		for _, p := range at.meta {
			rec.Metadata[clip(p.key, "metadata")] = clip(p.value, "metadata")
		}
	}
	if at.metaOver && !slices.Contains(cut, "metadata") {
		cut = append(cut, "metadata")
	}
	if len(cut) > 0 {
		rec.Truncated = joinTruncated(rec.Truncated, cut)
	}
}

// placeInConversation gives a call without a trace the trace of the
// conversation it continues, or a fresh one. The attempts of one logical
// call are placed once, by the first: a retry takes its trace.
func (a *attempt) placeInConversation(c *conversations, rec *record.Record, res *providers.Result) {
	t := turn{method: a.call.MethodName, user: rec.UserID, trace: a.trace, args: argsForInference(&a.call), previous: previousResponse(&a.call), res: res}
	inferredBefore := false
	if h := a.claimed; h != nil && t.trace == "" {
		t.trace, inferredBefore = h.rec.TraceID, h.rec.TraceInferred
	}
	trace, inferred := c.place(t)
	rec.TraceID, rec.TraceInferred = trace, inferred || inferredBefore
}

// joinTruncated is what the request's parse cut, then what the
// response's did; req itself when the response cut nothing.
func joinTruncated(req, resp []string) []string {
	if len(resp) == 0 {
		return req
	}
	return append(append(make([]string, 0, len(req)+len(resp)), req...), resp...)
}

// maxOutput bounds the generated text a record keeps.
const maxOutput = 64 << 10

// maxProgramSource bounds the generated code a record keeps.
const maxProgramSource = 16 << 10

// scanCode fills the history telemetry from what the model generated: its
// text and the arguments of its tool calls, streams assembled. With
// WithProgramSource, the generated text that reads the history is kept in
// the record, so a report can show where.
func (r *Recorder) scanCode(rec *record.Record, res *providers.Result) {
	var found detect.Result
	var source string
	if text := res.Output.Text(); text != "" {
		if d := r.cfg.detector.ScanOutput(text); d.Access {
			found.Access, found.Tags, source = true, found.Tags|d.Tags, text
		}
	}
	for i := range res.Output.Parts {
		p := &res.Output.Parts[i]
		if p.Type != record.PartToolCall {
			continue
		}
		args := p.ArgumentsText()
		if d := r.cfg.detector.ScanToolArguments(args); d.Access {
			found.Access, found.Tags = true, found.Tags|d.Tags
			if source == "" {
				source = args
			}
		}
	}
	rec.HistoryAccessDetected = found.Access
	rec.HistoryQueryPatterns = found.Tags.Names()
	if r.cfg.programSrc && source != "" {
		if len(source) > maxProgramSource {
			source = strings.ToValidUTF8(source[:maxProgramSource], "")
			rec.Truncated = append(append([]string(nil), rec.Truncated...), "program_source")
		}
		rec.ProgramSource = strings.Clone(source) // res.Output may be a lent buffer
	}
}

const maxMessage = 1024

func clipMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}

// emit appends rec to the history, then hands it to the sinks. A non-nil
// l holds the pool buffer rec's Args are in (attempt.argsBuf): the
// history keeps copies, the sinks keep nothing (lendsArgs), and the
// buffer goes back to the pool once the last of them is done.
func (r *Recorder) emit(ctx context.Context, rec record.Record, l *lease) {
	defer r.recovered("emitting a record")
	if len(r.cfg.redactors) > 0 {
		rec = r.redactHooks(rec) // apart: taking rec's address would put every record on the heap
	}
	var stored record.Record
	if l != nil {
		stored = r.history.AddBorrowed(rec)
	} else {
		stored = r.history.Add(rec)
	}
	r.recorded.Add(1)
	r.appendSinks(ctx, stored, l)
}

func (r *Recorder) redactHooks(rec record.Record) record.Record {
	for _, fn := range r.cfg.redactors {
		r.redactHook(fn, &rec)
	}
	return rec
}

func (r *Recorder) redactHook(fn func(*record.Record), rec *record.Record) {
	defer r.recovered("a redactor")
	fn(rec)
}
