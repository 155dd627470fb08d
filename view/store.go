package view

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Store is a [Source] over a store (package store: SQLite or PostgreSQL),
// made with [FromStore]. It asks the store for what each page shows, so
// the history can be as big as the store holds and be written by other
// processes meanwhile. It differs from a [JSONL] source where the store's
// queries do:
//
//   - a text search matches whole words (the store's full-text search),
//     not any substring;
//   - outcome "retried" is not a filter the store has, and the list does
//     not count retried calls (a call's page shows its attempts); "ok"
//     selects conversations with a call that did not fail;
//   - the overview's series is by hour or by day;
//   - Total is -1: the store does not count conversations.
//
// Every page asks the store a bounded question: the overview is one call
// of [store.Store.Aggregates], answered from its rollups; the values the
// filters offer are read from the store's table of names
// ([store.Store.Facets]); a page of conversations reads the records of
// the fifty conversations it lists, and their first records whole, for
// their first user messages.
//
// Records without a trace_id are not listed; each is found by its
// call_id.
type Store struct {
	s    *store.Store
	poll time.Duration
}

var _ Source = (*Store)(nil)

// FromStore returns a Source over s, which the caller keeps and closes.
// New records are looked for every poll (default 250 ms).
func FromStore(s *store.Store, poll time.Duration) *Store {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	return &Store{s: s, poll: poll}
}

func (v *Store) filter(q Query) (store.Filter, error) {
	f := store.Filter{Since: q.From, Until: q.To, UserID: q.User, Model: q.Model, Provider: q.Provider, Text: q.Text}
	if q.Tag != "" {
		f.Tags = []string{q.Tag}
	}
	switch q.Outcome {
	case "":
	case OutcomeOK:
		f.Status = record.StatusOK
	case OutcomeError:
		f.Status = record.StatusError
	default:
		return f, fmt.Errorf("%w: a store cannot select the %q outcome", errBadQuery, q.Outcome)
	}
	return f, nil
}

func storeErr(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, store.ErrBadCursor):
		return ErrBadCursor
	}
	return err
}

// Conversations implements [Source].
func (v *Store) Conversations(ctx context.Context, q Query) (Page, error) {
	f, err := v.filter(q)
	if err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	tp, err := v.s.Traces(ctx, store.Query{Filter: f, Limit: min(limit, MaxLimit), Cursor: q.Cursor})
	if err != nil {
		return Page{}, storeErr(err)
	}
	p := Page{Next: tp.Next, Total: -1}
	var firsts []string
	for _, t := range tp.Traces {
		firsts = append(firsts, t.FirstCallID)
	}
	// The first record of each, whole: its first user message, and
	// whether the recorder found the conversation.
	recs, err := v.s.GetMany(ctx, firsts)
	if err != nil {
		return Page{}, storeErr(err)
	}
	first := make(map[string]*record.Record, len(recs))
	for i := range recs {
		first[recs[i].CallID] = &recs[i]
	}
	for _, t := range tp.Traces {
		if t.TraceID == "" {
			continue
		}
		c := Conversation{
			ID: t.TraceID, Calls: int(t.Calls), Errors: int(t.Errors), Tokens: t.TotalTokens, CostUSD: t.CostUSD, Unpriced: int(t.Unpriced),
			First: t.First.UTC(), Last: t.Last.UTC(), Models: t.Models, Providers: t.Providers, Turns: t.Messages, Tags: t.Tags,
		}
		if t.UserID != "" {
			c.Users = []string{t.UserID}
		}
		if r := first[t.FirstCallID]; r != nil {
			c.Inferred = r.TraceInferred
			c.FirstUserMessage, _ = firstUserText(r.Args)
		}
		p.Conversations = append(p.Conversations, c)
	}
	return p, nil
}

// Trace implements [Source].
func (v *Store) Trace(ctx context.Context, q TraceQuery) (TracePage, error) {
	recs, err := v.s.Trace(ctx, q.ID)
	if err != nil {
		return TracePage{}, storeErr(err)
	}
	if len(recs) == 0 {
		// A record without a trace is a conversation of its own.
		r, err := v.s.Get(ctx, q.ID)
		if err != nil {
			return TracePage{}, storeErr(err)
		}
		if r.TraceID != "" {
			return TracePage{}, ErrNotFound
		}
		recs = []record.Record{r}
	}
	// The summary, as the JSONL index makes it, from every record.
	ix := newIndex()
	ix.segs = []*segment{{}}
	for i := range recs {
		s := summarize(&recs[i])
		ix.add(0, &s)
	}
	from := min(max(q.Offset, 0), len(recs))
	to := len(recs)
	if q.Limit > 0 {
		to = min(from+q.Limit, to)
	}
	tp := TracePage{Conversation: ix.conversation(0), Offset: from}
	for _, r := range recs[from:to] {
		c := Call{Record: r, Raw: r.AppendJSON(nil)}
		if q.SkipArgs {
			c.Record.Args = nil
		}
		tp.Calls = append(tp.Calls, c)
	}
	return tp, nil
}

// Call implements [Source].
func (v *Store) Call(ctx context.Context, callID string) (Call, error) {
	r, err := v.s.Get(ctx, callID)
	if err != nil {
		return Call{}, storeErr(err)
	}
	return Call{Record: r, Raw: r.AppendJSON(nil)}, nil
}

// Stats implements [Source]: one call of [store.Store.Aggregates] (and
// one more when the calls span two days or less: their series is by
// hour).
func (v *Store) Stats(ctx context.Context, q Query) (Stats, error) {
	f, err := v.filter(q)
	if err != nil {
		return Stats{}, err
	}
	f.Text = ""
	// Latency is shown by model and by provider only.
	gs, err := v.s.Aggregates(ctx, f,
		store.Grouping{NoLatency: true}, store.Grouping{By: []store.GroupBy{store.ByDay}, NoLatency: true},
		store.Grouping{By: []store.GroupBy{store.ByModel}}, store.Grouping{By: []store.GroupBy{store.ByUser}, NoLatency: true},
		store.Grouping{By: []store.GroupBy{store.ByTag}, NoLatency: true}, store.Grouping{By: []store.GroupBy{store.ByProvider}})
	if err != nil {
		return Stats{}, storeErr(err)
	}
	var st Stats
	if len(gs[0]) == 0 || gs[0][0].Calls == 0 {
		return st, nil
	}
	t := gs[0][0]
	st.Calls, st.Errors = int(t.Calls), int(t.Errors)
	st.InputTokens, st.OutputTokens, st.CostUSD = t.InputTokens, t.OutputTokens, t.CostUSD
	st.Unpriced, st.UnpricedTokens = int(t.Unpriced), t.UnpricedTokens

	series, bucket := gs[1], 24*time.Hour
	if len(series) <= 2 {
		hours, err := v.s.Aggregate(ctx, store.AggregateQuery{Filter: f, By: []store.GroupBy{store.ByHour}, NoLatency: true})
		if err != nil {
			return st, storeErr(err)
		}
		series, bucket = hours, time.Hour
	}
	if len(series) > 0 {
		slices.SortFunc(series, func(a, b store.Group) int { return a.Time.Compare(b.Time) })
		first, last := series[0].Time.UTC(), series[len(series)-1].Time.UTC()
		st.Bucket = bucket
		st.Series = make([]Bucket, int(last.Sub(first)/bucket)+1)
		for i := range st.Series {
			st.Series[i].Start = first.Add(time.Duration(i) * bucket)
		}
		for _, g := range series {
			b := &st.Series[int(g.Time.UTC().Sub(first)/bucket)]
			b.Calls, b.Errors, b.Tokens, b.CostUSD = int(g.Calls), int(g.Errors), g.InputTokens+g.OutputTokens, g.CostUSD
		}
	}
	for i, into := range []*[]Group{&st.Models, &st.Users, &st.Tags, &st.Providers} {
		m := map[int32]*groupAcc{}
		names := newStrtab()
		for _, g := range gs[2+i] {
			if len(g.Key) == 0 || g.Key[0] == "" {
				continue
			}
			m[names.id(g.Key[0])] = &groupAcc{Group: Group{
				Calls: int(g.Calls), Errors: int(g.Errors), Tokens: g.InputTokens + g.OutputTokens, CostUSD: g.CostUSD,
				Unpriced: int(g.Unpriced), P50MS: g.LatencyP50MS, P95MS: g.LatencyP95MS,
			}}
		}
		*into = groups(m, names)
	}
	return st, nil
}

// Facets implements [Source]: the store keeps them as it writes.
func (v *Store) Facets(ctx context.Context, limit int) (Facets, error) {
	sf, err := v.s.Facets(ctx)
	if err != nil {
		return Facets{}, storeErr(err)
	}
	return cut(Facets{Users: sf.Users, Tags: sf.Tags, Models: sf.Models, Providers: sf.Providers}, limit), nil
}

func cut(f Facets, limit int) Facets {
	if limit <= 0 {
		return f
	}
	c := func(s []string) []string { return s[:min(len(s), limit)] }
	return Facets{Users: c(f.Users), Tags: c(f.Tags), Models: c(f.Models), Providers: c(f.Providers)}
}

// Subscribe implements [Source]: it follows the store for new records.
func (v *Store) Subscribe(ctx context.Context) (<-chan Change, error) {
	fl := v.s.Follow(store.Filter{}, store.FollowOptions{Poll: v.poll, ReadOptions: store.ReadOptions{NoArgs: true, NoOutput: true}})
	out := make(chan Change)
	go func() {
		defer close(out)
		for {
			recs, err := fl.Next(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				select { // a store that fails: try again later
				case <-ctx.Done():
					return
				case <-time.After(v.poll):
				}
				continue
			}
			c := Change{Records: len(recs)}
			for _, r := range recs {
				c = merge(c, Change{Traces: []string{cmpOr(r.TraceID, r.CallID)}})
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// Status implements [StatusReporter]: the store's URL, without password,
// and what it keeps ("retention: support 30 days, everything 1 year").
func (v *Store) Status() Status {
	return Status{Description: v.s.URL() + " · retention: " + v.s.Retention().String(), Progress: 1}
}
