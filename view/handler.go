package view

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Options configures a [Handler]. The zero value is the defaults.
type Options struct {
	// Title names the history in the page header; default "llmhistory".
	Title string
	// Prefix is the path the handler is mounted under, when it is mounted
	// with http.StripPrefix (e.g. "/history/"): its links begin with it.
	// Default "/".
	Prefix string
	// AllowedHosts, when not empty, are the only Host headers answered
	// (host or host:port, case-insensitive): a page bound to loopback is
	// then out of reach of DNS rebinding, which has a browser visiting
	// another site send it requests. Others get 403.
	AllowedHosts []string
	// PageSize is conversations per page; default 50, at most 500.
	PageSize int
	// TranscriptCalls is the calls a transcript page shows; default 50.
	TranscriptCalls int
	// Logger receives the errors pages could not hide; default
	// slog.Default().
	Logger *slog.Logger
	// Heartbeat is how often a live page's event stream is kept awake;
	// default 20 s.
	Heartbeat time.Duration
	// Scores, when not nil, is where the pages read scores: on the call
	// and conversation pages, a column of the list, and the overview.
	Scores ScoreReader
	// Annotate, when not nil, lets a reviewer holding its token add
	// scores (annotate.go); the viewer is otherwise read-only.
	Annotate *Annotation
	// Token, when not nil, is asked of every request: pages, assets and
	// the event stream answer 401 without it (see [Token] for how a
	// browser brings it, and a script). llmhistory view gives one when it
	// listens beyond loopback. It is also the annotation's, unless that
	// has its own.
	Token *Token
	// Experiment, when not nil, is shown on an experiment page
	// (/experiment), styled by ExperimentCSS (eval.CompareCSS).
	Experiment    Experiment
	ExperimentCSS string
}

// Handler serves the viewer's pages over a [Source]. It only reads: every
// route answers GET and HEAD alone. It is safe for concurrent use.
type Handler struct {
	src   Source
	opts  Options
	mux   *http.ServeMux
	pages map[string]*template.Template

	mu     sync.Mutex
	closed chan struct{}
}

// Content-Security-Policy of every page: scripts and styles from the
// viewer's own files only (no inline script, no inline style, no eval), no
// image but its own and inline data, no frame, no plugin, and requests
// only to itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// NewHandler returns a handler serving the viewer over src.
func NewHandler(src Source, opts Options) *Handler {
	if opts.Title == "" {
		opts.Title = "llmhistory"
	}
	if opts.Prefix == "" {
		opts.Prefix = "/"
	}
	if !strings.HasSuffix(opts.Prefix, "/") {
		opts.Prefix += "/"
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultLimit
	}
	opts.PageSize = min(opts.PageSize, MaxLimit)
	if opts.TranscriptCalls <= 0 {
		opts.TranscriptCalls = 50
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 20 * time.Second
	}
	if a := opts.Annotate; a != nil && a.Token == nil {
		c := *a // the caller's is not written to
		c.Token = opts.Token
		if c.Token == nil {
			c.Token = NewToken() // nobody holds it: nobody annotates
		}
		opts.Annotate = &c
	}
	h := &Handler{src: src, opts: opts, mux: http.NewServeMux(), closed: make(chan struct{})}
	h.pages = parseTemplates(opts.Prefix)
	assets, _ := fs.Sub(assetFS, "assets")
	files := http.FileServerFS(assets)
	h.mux.Handle("GET /assets/", http.StripPrefix("/assets/", cacheAssets(files)))
	h.mux.HandleFunc("GET /{$}", h.conversationsPage)
	h.mux.HandleFunc("GET /c/{id}", h.conversationPage)
	h.mux.HandleFunc("GET /c/{id}/tree", h.treePage)
	h.mux.HandleFunc("GET /call/{id}", h.callPage)
	h.mux.HandleFunc("GET /overview", h.overviewPage)
	h.mux.HandleFunc("GET /events", h.events)
	h.mux.HandleFunc("GET /queue", h.queue)
	if opts.Experiment != nil {
		h.mux.HandleFunc("GET /experiment", h.experimentPage)
		h.mux.HandleFunc("GET /experiment.css", h.experimentCSS)
	}
	if opts.Annotate != nil {
		h.mux.HandleFunc("POST /annotate", h.annotate)
		if opts.Annotate.Dataset != nil {
			h.mux.HandleFunc("POST /dataset", h.addToDataset)
		}
	}
	h.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "No such page.")
	})
	return h
}

// Close ends the event streams of live pages, so that a server shutting
// down need not wait for them.
func (h *Handler) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.closed:
	default:
		close(h.closed)
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !h.hostAllowed(r.Host) {
		http.Error(w, "llmhistory view: this host name is not allowed; open the address the viewer printed", http.StatusForbidden)
		return
	}
	if t := h.token(); t != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) && t.Admit(w, r, h.opts.Prefix) {
		return // on to the address without the token
	}
	if t := h.opts.Token; t != nil && !t.allows(r) {
		t.refuse(w) // 401
		return
	}
	if r.Method == http.MethodPost && h.opts.Annotate != nil && (r.URL.Path == "/annotate" || r.URL.Path == "/dataset" && h.opts.Annotate.Dataset != nil) {
		h.mux.ServeHTTP(w, r) // annotate checks origin, token and form token
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "llmhistory view is read-only", http.StatusMethodNotAllowed)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// token is the token a browser brings in the address: the reading's,
// else the annotation's.
func (h *Handler) token() *Token {
	if h.opts.Token != nil {
		return h.opts.Token
	}
	if h.opts.Annotate != nil {
		return h.opts.Annotate.Token
	}
	return nil
}

func (h *Handler) hostAllowed(host string) bool {
	if len(h.opts.AllowedHosts) == 0 {
		return true
	}
	name := host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		name = hn
	}
	for _, a := range h.opts.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

func cacheAssets(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// page is what every page template receives.
type page struct {
	Title   string // of the page
	App     string // Options.Title
	Base    string // Options.Prefix
	Nav     string // the tab it belongs to
	Live    bool   // it follows the history
	LiveFor string // the conversation it follows; "" for any
	Status  *Status
	Body    any
	Scores  *pageScores // nil when the viewer reads no scores
	// ExtraCSS is a page's own stylesheet, beside the viewer's.
	ExtraCSS string
	// Experiment says the viewer has an experiment page.
	Experiment bool
}

func (h *Handler) newPage(title, nav string, body any) *page {
	p := &page{Title: title, App: h.opts.Title, Base: h.opts.Prefix, Nav: nav, Body: body, Experiment: h.opts.Experiment != nil}
	if h.opts.Scores != nil {
		p.Scores = &pageScores{Base: h.opts.Prefix, Annotate: h.opts.Annotate != nil}
	}
	if sr, ok := h.src.(StatusReporter); ok {
		st := sr.Status()
		p.Status = &st
	}
	return p
}

// render writes a page, or, for a live page's refresh (X-Live), its
// content alone.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, p *page) {
	t := h.pages[name]
	var buf bytes.Buffer
	tmpl := "layout"
	if r.Header.Get("X-Live") != "" {
		tmpl = "content"
	}
	if err := t.ExecuteTemplate(&buf, tmpl, p); err != nil {
		h.opts.Logger.Error("llmhistory view: render", "page", name, "err", err)
		http.Error(w, "llmhistory view: the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// fail answers with an error page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	p := h.newPage(http.StatusText(code), "", struct {
		Code    int
		Message string
	}{code, msg})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := h.pages["error"].ExecuteTemplate(w, "layout", p); err != nil {
		h.opts.Logger.Error("llmhistory view: render", "page", "error", "err", err)
	}
}

// failErr answers for an error of the source.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		h.fail(w, r, http.StatusNotFound, "Not in this history: it may have been written to another file, or cut by a rotation.")
	case errors.Is(err, ErrBadCursor), errors.Is(err, errBadQuery):
		h.fail(w, r, http.StatusBadRequest, err.Error())
	case errors.Is(err, context.Canceled):
		// The browser went away.
	default:
		h.opts.Logger.Error("llmhistory view", "path", r.URL.Path, "err", err)
		h.fail(w, r, http.StatusInternalServerError, err.Error())
	}
}

var errBadQuery = errors.New("view: bad filter")

// form is a query's fields as given, to fill the filter form again.
type form struct {
	Text, User, Tag, Model, Provider, Outcome, From, To string
}

// Encode is the form as a query string, with cursor when given.
func (f form) Encode(cursor string) string {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("q", f.Text)
	set("user", f.User)
	set("tag", f.Tag)
	set("model", f.Model)
	set("provider", f.Provider)
	set("outcome", f.Outcome)
	set("from", f.From)
	set("to", f.To)
	set("cursor", cursor)
	return v.Encode()
}

// Any reports whether a filter or a search is set.
func (f form) Any() bool { return f != form{} }

// Fields counts the filters set, the search aside.
func (f form) Fields() int {
	n := 0
	for _, s := range []string{f.User, f.Tag, f.Model, f.Provider, f.Outcome, f.From, f.To} {
		if s != "" {
			n++
		}
	}
	return n
}

const formTime = "2006-01-02T15:04"

func parseForm(r *http.Request) (Query, form, error) {
	v := r.URL.Query()
	f := form{
		Text: strings.TrimSpace(v.Get("q")), User: v.Get("user"), Tag: v.Get("tag"), Model: v.Get("model"),
		Provider: v.Get("provider"), Outcome: v.Get("outcome"), From: v.Get("from"), To: v.Get("to"),
	}
	q := Query{Text: f.Text, User: f.User, Tag: f.Tag, Model: f.Model, Provider: f.Provider, Cursor: v.Get("cursor")}
	switch f.Outcome {
	case "", OutcomeOK, OutcomeError, OutcomeRetried:
		q.Outcome = f.Outcome
	default:
		return q, f, fmt.Errorf("%w: outcome %q is not ok, error or retried", errBadQuery, f.Outcome)
	}
	parse := func(name, s string) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		for _, layout := range []string{formTime, "2006-01-02T15:04:05", time.RFC3339, "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%w: %s %q is not a time like 2026-03-01T10:00 (UTC)", errBadQuery, name, s)
	}
	var err error
	if q.From, err = parse("from", f.From); err != nil {
		return q, f, err
	}
	if q.To, err = parse("to", f.To); err != nil {
		return q, f, err
	}
	return q, f, nil
}

// listBody is the conversations page.
type listBody struct {
	Form   form
	Page   Page
	Facets Facets
	Next   string // query string of the next page
	First  bool   // the newest page
}

func (h *Handler) conversationsPage(w http.ResponseWriter, r *http.Request) {
	q, f, err := parseForm(r)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	q.Limit = h.opts.PageSize
	pg, err := h.src.Conversations(r.Context(), q)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	facets, err := h.src.Facets(r.Context(), 500)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	b := listBody{Form: f, Page: pg, Facets: facets, First: q.Cursor == ""}
	if pg.Next != "" {
		b.Next = f.Encode(pg.Next)
	}
	p := h.newPage("Conversations", "conversations", b)
	p.Live = b.First
	if p.Scores != nil {
		p.Scores.Summary = map[string][]scoreSummary{}
		for _, c := range pg.Conversations {
			p.Scores.Summary[c.ID] = summarizeScores(h.scoresOf(r.Context(), store.ScoreQuery{TraceID: c.ID}))
		}
	}
	h.render(w, r, "conversations", p)
}

// conversationBody is a transcript page.
type conversationBody struct {
	Conversation Conversation
	Calls        []*turnCall
	From, To     int // calls shown: [From, To) of Conversation.Calls
	Prev, Next   int // page numbers; -1 when none
	Tab          string
}

func (h *Handler) conversationPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	per := h.opts.TranscriptCalls
	pageNo := 0
	if s := r.URL.Query().Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			h.fail(w, r, http.StatusBadRequest, "page must be a number from 0")
			return
		}
		pageNo = n
	}
	from := pageNo * per
	// Read a few calls before and one after the page, to see what its
	// first calls continue and what its last call was answered.
	before := min(from, 8)
	tp, err := h.src.Trace(r.Context(), TraceQuery{ID: id, Offset: from - before, Limit: before + per + 1})
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	total := tp.Conversation.Calls
	if from > 0 && from >= total {
		h.fail(w, r, http.StatusNotFound, "This conversation has fewer calls than that page.")
		return
	}
	first := tp.Offset
	shownFrom := from - first
	shownTo := min(shownFrom+per, len(tp.Calls))
	all := buildTranscript(tp.Calls, first, shownFrom, shownTo)
	b := conversationBody{Conversation: tp.Conversation, From: from, To: from + (shownTo - shownFrom), Prev: pageNo - 1, Next: -1, Tab: "transcript"}
	for _, tc := range all {
		if tc.Shown {
			b.Calls = append(b.Calls, tc)
		}
	}
	if b.To < total {
		b.Next = pageNo + 1
	}
	p := h.newPage(conversationTitle(tp.Conversation), "conversations", b)
	p.Live, p.LiveFor = b.Next < 0, tp.Conversation.ID
	if p.Scores != nil {
		p.Scores.List = h.scoresOf(r.Context(), store.ScoreQuery{TraceID: tp.Conversation.ID})
		if !tp.Conversation.NoTrace {
			p.Scores.Form = h.annotateFormFor(r, "", tp.Conversation.ID)
		}
	}
	h.render(w, r, "conversation", p)
}

func conversationTitle(c Conversation) string {
	if c.FirstUserMessage != "" {
		t := c.FirstUserMessage
		if len(t) > 80 {
			t = snippetN(t, 80)
		}
		return t
	}
	return "Conversation " + c.ID
}

func snippetN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// maxTreeCalls bounds the calls a trace tree draws.
const maxTreeCalls = 2000

func (h *Handler) treePage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	tp, err := h.src.Trace(r.Context(), TraceQuery{ID: id, Limit: maxTreeCalls, SkipArgs: true})
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	b := buildTree(tp)
	p := h.newPage("Timeline: "+conversationTitle(tp.Conversation), "conversations", b)
	p.Live, p.LiveFor = true, tp.Conversation.ID
	h.render(w, r, "tree", p)
}

// callBody is a call page.
type callBody struct {
	Call     Call
	Messages []*message
	Answer   *message
	Kwargs   string
	Raw      string
	Extra    []extraField
	Parent   string
	Start    time.Time
}

type extraField struct {
	Name, Value string
}

func (h *Handler) callPage(w http.ResponseWriter, r *http.Request) {
	c, err := h.src.Call(r.Context(), r.PathValue("id"))
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	rec := &c.Record
	b := callBody{Call: c, Messages: callMessages(rec.Args), Answer: recordedAnswer(&c), Kwargs: indentJSON(rec.Kwargs)}
	if len(c.Raw) > 0 {
		b.Raw = indentJSON(c.Raw)
		b.Extra = extraFields(c.Raw)
	}
	if t, err := time.Parse(time.RFC3339Nano, rec.Timestamp); err == nil {
		b.Start = t
	}
	title := rec.MethodName
	if m := modelOf(rec); m != "" {
		title += " · " + m
	}
	p := h.newPage(title, "conversations", b)
	if p.Scores != nil {
		p.Scores.List = h.scoresOf(r.Context(), store.ScoreQuery{CallIDs: []string{rec.CallID}})
		p.Scores.Form = h.annotateFormFor(r, rec.CallID, "")
	}
	h.render(w, r, "call", p)
}

// shownFields are the record fields the call page shows in its own
// sections; any other field of the raw record is listed as it is.
var shownFields = map[string]bool{
	"call_id": true, "timestamp": true, "speaker": true, "method_name": true, "args": true, "kwargs": true,
	"outcome_summary": true, "args_prefix": true, "trace_id": true, "trace_inferred": true, "parent_call_id": true,
	"depth": true, "user_id": true, "tags": true, "metadata": true, "duration_ms": true, "time_to_first_chunk_ms": true,
	"error_type": true, "error_message": true, "program_source": true, "output": true, "artifact_hit": true,
	"attempts": true, "hops": true, "model": true, "usage": true, "cost": true, "truncated": true,
	"history_guidance": true, "history_record_appended": true, "conversation_history_size": true,
	"history_access_detected": true, "history_query_patterns": true, "version": true,
	"tool_calls": true, "reasoning": true, "output_message": true, "server_address": true, "server_port": true,
	"service_tier": true, "system_fingerprint": true,
}

// extraFields lists the members of raw the call page has no section for:
// those a newer writer added.
func extraFields(raw []byte) []extraField {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []extraField
	for k, v := range m {
		if shownFields[k] {
			continue
		}
		val := string(v)
		if s, err := strconv.Unquote(val); err == nil && len(v) > 0 && v[0] == '"' {
			val = s
		} else {
			val = indentJSON(v)
		}
		out = append(out, extraField{Name: k, Value: val})
	}
	slices.SortFunc(out, func(a, b extraField) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// overviewBody is the overview page.
type overviewBody struct {
	Form   form
	Facets Facets
	Stats  Stats
	Charts []chart
	Max    struct{ ModelLatency, ModelCost, UserCost, TagCost float64 }
}

func (h *Handler) overviewPage(w http.ResponseWriter, r *http.Request) {
	q, f, err := parseForm(r)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	st, err := h.src.Stats(r.Context(), q)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	facets, err := h.src.Facets(r.Context(), 500)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	f.Text = "" // the overview counts calls; it does not search
	b := overviewBody{Form: f, Facets: facets, Stats: st}
	bucket := bucketName(st.Bucket)
	tip := func(b Bucket) string {
		return fmt.Sprintf("%s: %s, %s, %s tokens, %s", b.Start.UTC().Format("2006-01-02 15:04"),
			plural(b.Calls, "call", "calls"), plural(b.Errors, "error", "errors"), group(b.Tokens), usd(b.CostUSD))
	}
	b.Charts = []chart{
		seriesChart("chart-calls", "Calls and errors per "+bucket, plural(st.Calls, "call", "calls")+", "+plural(st.Errors, "error", "errors"), &st,
			func(b Bucket) float64 { return float64(b.Calls) }, func(b Bucket) float64 { return float64(b.Errors) },
			func(v float64) string { return short(int64(v)) }, tip),
		seriesChart("chart-tokens", "Tokens per "+bucket, short(st.InputTokens+st.OutputTokens)+" tokens", &st,
			func(b Bucket) float64 { return float64(b.Tokens) }, nil,
			func(v float64) string { return short(int64(v)) }, tip),
		seriesChart("chart-spend", "Spend per "+bucket, usd(st.CostUSD), &st,
			func(b Bucket) float64 { return b.CostUSD }, nil, usdTick, tip),
	}
	b.Charts[0].Legend = []chartLegend{{"bar", "calls"}, {"bar err", "errors"}}
	// The bars are drawn to the largest group listed: the row of the
	// others, which sums hundreds of users, would shrink every other bar
	// to a sliver (it has no bar).
	for _, g := range st.Models {
		if !isOther(g.Name) {
			b.Max.ModelLatency = max(b.Max.ModelLatency, g.P95MS)
			b.Max.ModelCost = max(b.Max.ModelCost, g.CostUSD)
		}
	}
	for _, g := range st.Users {
		if !isOther(g.Name) {
			b.Max.UserCost = max(b.Max.UserCost, g.CostUSD)
		}
	}
	for _, g := range st.Tags {
		if !isOther(g.Name) {
			b.Max.TagCost = max(b.Max.TagCost, g.CostUSD)
		}
	}
	p := h.newPage("Overview", "overview", b)
	p.Live = true
	if p.Scores != nil {
		p.Scores.Overview = h.overviewScores(r.Context())
	}
	h.render(w, r, "overview", p)
}

func bucketName(d time.Duration) string {
	switch d {
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "day"
	case 7 * 24 * time.Hour:
		return "week"
	case 0:
		return "period"
	}
	if d%time.Hour == 0 {
		return strconv.Itoa(int(d/time.Hour)) + " hours"
	}
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
	return strconv.Itoa(int(d/time.Minute)) + " minutes"
}

// events streams the source's changes to a live page as Server-Sent
// Events: "change" events whose data is a Change as JSON.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	changes, err := h.src.Subscribe(ctx)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	beat := time.NewTicker(h.opts.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.closed:
			return
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": awake\n\n"); err != nil {
				return
			}
		case c, ok := <-changes:
			if !ok {
				return
			}
			data, _ := json.Marshal(struct {
				Records int      `json:"records"`
				Traces  []string `json:"traces"`
				More    bool     `json:"more"`
				Reset   bool     `json:"reset"`
			}{c.Records, c.Traces, c.More, c.Reset})
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", data); err != nil {
				return
			}
		}
		flusher.Flush()
	}
}
