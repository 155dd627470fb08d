package view

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// FormToken is what a form the viewer serves carries, and a POST must
// send back: derived from the token, so that a page of another site, which
// cannot read the viewer's pages, cannot know it.
func (t *Token) FormToken() string {
	m := hmac.New(sha256.New, []byte(t.secret))
	m.Write([]byte("llmhistory view form"))
	return hex.EncodeToString(m.Sum(nil))
}

// errForbidden: a write the request may not make.
var errForbidden = errors.New("view: forbidden")

// CheckPost reports whether a POST may change anything: it comes from a
// page of the viewer itself (Sec-Fetch-Site same-origin, or an Origin
// naming the host it was sent to), from a browser that holds the token,
// with the form token of the viewer's pages. Cross-site request forgery
// fails each of the three.
func (t *Token) CheckPost(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); {
	case site == "same-origin":
	case site != "":
		return errors.Join(errForbidden, errors.New("a request from another site ("+site+")"))
	default:
		o, err := url.Parse(r.Header.Get("Origin"))
		if err != nil || o.Host == "" || !strings.EqualFold(o.Host, r.Host) {
			return errors.Join(errForbidden, errors.New("a request whose origin is not the viewer's"))
		}
	}
	if !t.Holds(r) {
		return errors.Join(errForbidden, errors.New("this browser does not hold the viewer's token: open the address the command printed"))
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("form_token")), []byte(t.FormToken())) != 1 {
		return errors.Join(errForbidden, errors.New("the form's token is missing or wrong: reload the page"))
	}
	return nil
}

// Annotation lets reviewers add scores from the viewer: thumbs, a
// number, a category, a comment, on a conversation or a call.
type Annotation struct {
	// Sink keeps the scores: the store read (opened for writing), or the
	// scores file beside the history ([ScoresFile]).
	Sink interface {
		AddScore(ctx context.Context, sc store.Score) error
	}
	// Token is the launch's; a browser that does not hold it sees no
	// form. Nil: the handler's [Options.Token].
	Token *Token
	// Author names the reviewer in the scores; default "reviewer".
	Author string
	// Dataset, when not nil, puts an "Add to dataset" button on a call's
	// and a conversation's page, behind the same token: it is given the
	// call's record, or the conversation's records in order
	// (conversation true), and returns how many new items it kept.
	// llmhistory view -dataset FILE keeps them with eval's datasets.
	Dataset func(ctx context.Context, recs []record.Record, conversation bool) (added int, err error)
	// DatasetName names the dataset on the button (its file).
	DatasetName string
}

// annotateForm is what the annotation form of a page needs.
type annotateForm struct {
	FormToken string
	CallID    string // the call annotated, or
	TraceID   string // the conversation
	Name      string // the score's name, prefilled
	Queue     string // the queue's query string, when the page came from it
	Dataset   string // the dataset's name, when the page can add to one
	Added     string // what the last "Add to dataset" of this page did
}

// annotateFormFor returns the form for a page of the request, nil when
// the viewer does not annotate or the browser holds no token.
func (h *Handler) annotateFormFor(r *http.Request, callID, traceID string) *annotateForm {
	a := h.opts.Annotate
	if a == nil || !a.Token.Holds(r) {
		return nil
	}
	f := &annotateForm{FormToken: a.Token.FormToken(), CallID: callID, TraceID: traceID, Name: r.URL.Query().Get("score")}
	if f.Name == "" {
		f.Name = "thumbs"
	}
	if a.Dataset != nil {
		f.Dataset = a.DatasetName
		if f.Dataset == "" {
			f.Dataset = "the dataset"
		}
		switch n := r.URL.Query().Get("added"); n {
		case "":
		case "0":
			f.Added = "Already in " + f.Dataset + "."
		default:
			f.Added = "Added to " + f.Dataset + ": " + n + " new item(s)."
		}
	}
	if r.URL.Query().Get("queue") != "" {
		v := r.URL.Query()
		v.Del("queue")
		v.Del("page")
		f.Queue = v.Encode()
	}
	return f
}

// annotate keeps the score a reviewer gave, and returns to the page
// (or to the queue's next conversation).
func (h *Handler) annotate(w http.ResponseWriter, r *http.Request) {
	a := h.opts.Annotate
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := a.Token.CheckPost(r); err != nil {
		http.Error(w, "llmhistory view: "+err.Error(), http.StatusForbidden)
		return
	}
	sc := store.Score{
		CallID: r.PostFormValue("call_id"), TraceID: r.PostFormValue("trace_id"),
		Name: strings.TrimSpace(r.PostFormValue("name")), Comment: strings.TrimSpace(r.PostFormValue("comment")),
		Source: store.SourceHuman, Author: a.Author, Time: time.Now().UTC(),
	}
	if sc.CallID != "" {
		sc.TraceID = "" // a call's: keyed by the call
	}
	if sc.Author == "" {
		sc.Author = "reviewer"
	}
	switch thumb, number, label := r.PostFormValue("thumb"), strings.TrimSpace(r.PostFormValue("number")), strings.TrimSpace(r.PostFormValue("label")); {
	case thumb == "up" || thumb == "down":
		sc.Value = store.Bool(thumb == "up")
	case number != "":
		f, err := strconv.ParseFloat(number, 64)
		if err != nil {
			h.fail(w, r, http.StatusBadRequest, "The number is not a number: "+number)
			return
		}
		sc.Value = store.Number(f)
	case label != "":
		sc.Value = store.Category(label)
	}
	if err := sc.Validate(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "This score cannot be kept: "+err.Error())
		return
	}
	if err := a.Sink.AddScore(r.Context(), sc); err != nil {
		h.opts.Logger.Error("llmhistory view: annotate", "err", err)
		h.fail(w, r, http.StatusInternalServerError, "The score could not be kept: "+err.Error())
		return
	}
	next := h.opts.Prefix + "c/" + url.PathEscape(sc.TraceID)
	if sc.CallID != "" {
		next = h.opts.Prefix + "call/" + url.PathEscape(sc.CallID)
	}
	if q := r.PostFormValue("queue"); q != "" {
		if v, err := url.ParseQuery(q); err == nil {
			next = h.opts.Prefix + "queue?" + v.Encode()
		}
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// addToDataset gives the call's record, or the conversation's records,
// to the Annotation's Dataset, and returns to the page saying what it did.
func (h *Handler) addToDataset(w http.ResponseWriter, r *http.Request) {
	a := h.opts.Annotate
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := a.Token.CheckPost(r); err != nil {
		http.Error(w, "llmhistory view: "+err.Error(), http.StatusForbidden)
		return
	}
	callID, traceID := r.PostFormValue("call_id"), r.PostFormValue("trace_id")
	var recs []record.Record
	next := h.opts.Prefix + "c/" + url.PathEscape(traceID)
	switch {
	case callID != "":
		c, err := h.src.Call(r.Context(), callID)
		if err != nil {
			h.failErr(w, r, err)
			return
		}
		recs, next = []record.Record{c.Record}, h.opts.Prefix+"call/"+url.PathEscape(callID)
	case traceID != "":
		tp, err := h.src.Trace(r.Context(), TraceQuery{ID: traceID})
		if err != nil {
			h.failErr(w, r, err)
			return
		}
		for _, c := range tp.Calls {
			recs = append(recs, c.Record)
		}
	default:
		h.fail(w, r, http.StatusBadRequest, "Add to dataset needs a call or a conversation.")
		return
	}
	added, err := a.Dataset(r.Context(), recs, callID == "")
	if err != nil {
		h.opts.Logger.Error("llmhistory view: add to dataset", "err", err)
		h.fail(w, r, http.StatusInternalServerError, "The dataset could not be written: "+err.Error())
		return
	}
	http.Redirect(w, r, next+"?added="+strconv.Itoa(added)+"#scores", http.StatusSeeOther)
}

// queueScan bounds the conversations the queue looks through.
const queueScan = 2000

// queue sends the reviewer to the newest conversation the filters select
// that has no score of the name asked (?score=) yet.
func (h *Handler) queue(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.URL.Query().Get("score"))
	if name == "" {
		h.fail(w, r, http.StatusBadRequest, "The queue needs the name of the score to give: /queue?score=helpfulness")
		return
	}
	q, _, err := parseForm(r)
	if err != nil {
		h.failErr(w, r, err)
		return
	}
	q.Limit = 100
	for seen := 0; seen < queueScan; {
		pg, err := h.src.Conversations(r.Context(), q)
		if err != nil {
			h.failErr(w, r, err)
			return
		}
		for _, c := range pg.Conversations {
			if len(h.scoresOf(r.Context(), store.ScoreQuery{TraceID: c.ID, Name: name, Limit: 1})) == 0 {
				v := r.URL.Query()
				v.Set("queue", "1")
				http.Redirect(w, r, h.opts.Prefix+"c/"+url.PathEscape(c.ID)+"?"+v.Encode(), http.StatusSeeOther)
				return
			}
		}
		seen += len(pg.Conversations)
		if pg.Next == "" {
			break
		}
		q.Cursor = pg.Next
	}
	p := h.newPage("Queue", "conversations", struct {
		Code    int
		Message string
	}{http.StatusOK, "No conversation these filters select is left without a " + name + " score."})
	h.render(w, r, "error", p)
}
