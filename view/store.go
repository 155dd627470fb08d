package view

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
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
//   - a conversation's summary in the list takes its first user message
//     and tags from its first and newest records, two more reads per
//     conversation shown;
//   - the overview's series is by hour or by day, and counts as unpriced
//     the calls with no cost, whether they used tokens or not;
//   - Total is -1: the store does not count conversations.
//
// Records without a trace_id are not listed; each is found by its
// call_id.
type Store struct {
	s    *store.Store
	poll time.Duration

	mu        sync.Mutex
	facets    Facets
	facetsAt  time.Time
	facetsErr error
}

var _ Source = (*Store)(nil)

// facetsFor is how long the values of the filters are kept: asking the
// store for them is an aggregate over every record.
const facetsFor = 30 * time.Second

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
	for _, t := range tp.Traces {
		if t.TraceID == "" {
			continue
		}
		c := Conversation{
			ID: t.TraceID, Calls: int(t.Calls), Errors: int(t.Errors), Tokens: t.TotalTokens, CostUSD: t.CostUSD,
			First: t.First.UTC(), Last: t.Last.UTC(),
		}
		if t.UserID != "" {
			c.Users = []string{t.UserID}
		}
		c.Models = t.Models
		c.Providers = t.Providers
		c.Turns = t.Messages
		if err := v.describe(ctx, &c, t.LastCallID); err != nil {
			return Page{}, err
		}
		p.Conversations = append(p.Conversations, c)
	}
	return p, nil
}

// describe fills in what a trace's summary lacks from its first and its
// newest records: its first user message, tags, and whether the recorder
// found it.
func (v *Store) describe(ctx context.Context, c *Conversation, lastCallID string) error {
	var recs []record.Record
	for r, err := range v.s.Records(ctx, store.Filter{TraceID: c.ID}, store.ReadOptions{}) {
		if err != nil {
			return storeErr(err)
		}
		recs = append(recs, r)
		break
	}
	if lastCallID != "" && (len(recs) == 0 || recs[0].CallID != lastCallID) {
		r, err := v.s.Get(ctx, lastCallID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return storeErr(err)
		}
		if err == nil {
			recs = append(recs, r)
		}
	}
	for i := range recs {
		r := &recs[i]
		c.Inferred = c.Inferred || r.TraceInferred
		if c.FirstUserMessage == "" {
			c.FirstUserMessage, _ = firstUserText(r.Args)
		}
		for _, t := range r.Tags {
			if !slices.Contains(c.Tags, t) {
				c.Tags = append(c.Tags, t)
			}
		}
	}
	return nil
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

// Stats implements [Source].
func (v *Store) Stats(ctx context.Context, q Query) (Stats, error) {
	f, err := v.filter(q)
	if err != nil {
		return Stats{}, err
	}
	f.Text = ""
	agg := func(by ...store.GroupBy) ([]store.Group, error) {
		gs, err := v.s.Aggregate(ctx, store.AggregateQuery{Filter: f, By: by})
		return gs, storeErr(err)
	}
	var st Stats
	totals, err := agg()
	if err != nil || len(totals) == 0 || totals[0].Calls == 0 {
		return st, err
	}
	t := totals[0]
	st.Calls, st.Errors = int(t.Calls), int(t.Errors)
	st.InputTokens, st.OutputTokens, st.CostUSD = t.InputTokens, t.OutputTokens, t.CostUSD
	// What a price covers: the calls with a cost (above nothing).
	priced := f
	priced.MinCostUSD = math.SmallestNonzeroFloat64
	if ps, err := v.s.Aggregate(ctx, store.AggregateQuery{Filter: priced}); err == nil && len(ps) > 0 {
		st.Unpriced = int(t.Calls - ps[0].Calls)
		st.UnpricedTokens = t.TotalTokens - ps[0].TotalTokens
	}

	days, err := agg(store.ByDay)
	if err != nil {
		return st, err
	}
	by, bucket := store.ByDay, 24*time.Hour
	if len(days) <= 2 {
		by, bucket = store.ByHour, time.Hour
	}
	series := days
	if by == store.ByHour {
		if series, err = agg(store.ByHour); err != nil {
			return st, err
		}
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
			b.Calls, b.Errors, b.Tokens, b.CostUSD = int(g.Calls), int(g.Errors), g.TotalTokens, g.CostUSD
		}
	}
	for _, d := range []struct {
		by   store.GroupBy
		into *[]Group
	}{{store.ByModel, &st.Models}, {store.ByUser, &st.Users}, {store.ByTag, &st.Tags}, {store.ByProvider, &st.Providers}} {
		gs, err := agg(d.by)
		if err != nil {
			return st, err
		}
		m := map[int32]*groupAcc{}
		names := newStrtab()
		for _, g := range gs {
			if len(g.Key) == 0 || g.Key[0] == "" {
				continue
			}
			m[names.id(g.Key[0])] = &groupAcc{Group: Group{
				Calls: int(g.Calls), Errors: int(g.Errors), Tokens: g.TotalTokens, CostUSD: g.CostUSD,
				P50MS: g.LatencyP50MS, P95MS: g.LatencyP95MS,
			}}
		}
		*d.into = groups(m, names)
	}
	return st, nil
}

// Facets implements [Source]. The values are asked of the store at most
// every 30 seconds.
func (v *Store) Facets(ctx context.Context, limit int) (Facets, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if time.Since(v.facetsAt) < facetsFor {
		return cut(v.facets, limit), v.facetsErr
	}
	var f Facets
	for _, d := range []struct {
		by   store.GroupBy
		into *[]string
	}{{store.ByUser, &f.Users}, {store.ByTag, &f.Tags}, {store.ByModel, &f.Models}, {store.ByProvider, &f.Providers}} {
		gs, err := v.s.Aggregate(ctx, store.AggregateQuery{By: []store.GroupBy{d.by}})
		if err != nil {
			return Facets{}, storeErr(err)
		}
		for _, g := range gs {
			if len(g.Key) > 0 && g.Key[0] != "" {
				*d.into = append(*d.into, g.Key[0])
			}
		}
		slices.Sort(*d.into)
	}
	v.facets, v.facetsAt, v.facetsErr = f, time.Now(), nil
	return cut(f, limit), nil
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

// Status implements [StatusReporter]: the store's URL, without password.
func (v *Store) Status() Status {
	return Status{Description: v.s.URL(), Progress: 1}
}
