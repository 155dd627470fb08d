package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// leaver is the user whose history the delete tests erase; needles are
// the text only the leaver's records hold, which must be found nowhere
// afterwards.
const leaver = "leaver-7f3a9c"

var needles = []string{leaver, "okapi9917", "quokkameta", "leavertag", "ticket-wombat"}

// eraseData writes a workload of many users over days, and among it the
// leaver's records: a conversation of their own, whose system prompt a
// keeper's conversation of the same hour shares (one message, used by
// both), and a turn in a keeper's conversation, which the keeper's next
// turn builds on (so that it must stand alone once the leaver's goes).
// It returns every record, in the order written.
func eraseData(t *testing.T, s *store.Store) []record.Record {
	start := time.Date(2025, 10, 25, 7, 13, 0, 0, time.UTC)
	w := storebench.NewWorkload(21, start, 23*time.Minute+11*time.Second)
	recs := w.Batch(1500)
	at := start.Add(30*time.Hour + 5*time.Minute)
	msg := func(role, text string) string {
		m := record.TextMessage(role, text)
		return string(m.AppendJSON(nil))
	}
	args := func(ms ...string) json.RawMessage { return json.RawMessage("[" + joinComma(ms) + "]") }
	mk := func(id, user, trace string, t time.Time, out string, ms ...string) record.Record {
		answer := record.TextMessage(record.RoleAssistant, out)
		return record.Record{
			CallID: id, Timestamp: record.FormatTime(t), Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create", Args: args(ms...), Kwargs: json.RawMessage(`{"model":"gpt-4o"}`),
			Outcome: record.Outcome{Status: "ok", OK: true, ValueClass: "text"}, TraceID: trace, UserID: user,
			Model: "gpt-4o", DurationMS: 812, Output: &answer, Version: record.Version,
			Usage: &record.Usage{InputTokens: 40, OutputTokens: 12, TotalTokens: 52},
		}
	}
	sys := msg("system", "You are the shared support assistant.")
	k1 := mk("keep-1", "keeper", "tr-mixed", at, "Hello keeper.", sys, msg("user", "hi, I am the keeper"))
	l1 := mk("leave-1", leaver, "tr-mixed", at.Add(time.Minute), "Here is your refund zebrafinch.", sys, msg("user", "hi, I am the keeper"),
		msg("assistant", "Hello keeper."), msg("user", "and I am someone else: zebrafinch refund"))
	k2 := mk("keep-2", "keeper", "tr-mixed", at.Add(2*time.Minute), "Fine.", sys, msg("user", "hi, I am the keeper"),
		msg("assistant", "Hello keeper."), msg("user", "and I am someone else: zebrafinch refund"),
		msg("assistant", "Here is your refund zebrafinch."), msg("user", "back to me"))
	// k2 repeats the leaver's turn, and brings the answer to it
	// ("zebrafinch"): that text is k2's too, and stays.
	l2 := mk("leave-2", leaver, "tr-leaver", at.Add(3*time.Minute), "The okapi9917 answer.", sys, msg("user", "my own okapi9917 question"))
	l2.Tags = []string{"leavertag", "support"}
	l2.Metadata = map[string]string{"ticket": "ticket-wombat", "note": "quokkameta"}
	l3 := mk("leave-3", leaver, "tr-leaver", at.Add(4*time.Minute), "Another okapi9917 answer.", sys, msg("user", "my own okapi9917 question"),
		msg("assistant", "The okapi9917 answer."), msg("user", "quokkameta follow-up"))
	k3 := mk("keep-3", "keeper", "tr-keeper", at.Add(5*time.Minute), "Sure.", sys, msg("user", "a keeper's own question"))
	// A leaver's call days later, in another month's hours.
	l4 := mk("leave-4", leaver, "tr-late", start.Add(40*24*time.Hour), "okapi9917 late", msg("user", "late okapi9917"))
	l4.DurationMS = 9000
	recs = append(recs, k1, l1, k2, l2, l3, k3, l4)
	for part := range slices.Chunk(recs, 400) {
		_, err := s.Write(context.Background(), part)
		require.NoError(t, err)
	}
	ctx := context.Background()
	for _, sc := range []store.Score{
		{CallID: "leave-2", Name: "thumbs", Value: store.Bool(false), Comment: "quokkameta was wrong", Source: store.SourceHuman, Author: "leaver"},
		{TraceID: "tr-leaver", Name: "resolved", Value: store.Bool(true), Source: store.SourceHuman, Author: "agent-1"},
		{TraceID: "tr-mixed", Name: "resolved", Value: store.Bool(true), Source: store.SourceHuman, Author: "agent-1"},
		{CallID: "keep-2", Name: "thumbs", Value: store.Bool(true), Source: store.SourceHuman, Author: "keeper"},
	} {
		require.NoError(t, s.AddScore(ctx, sc))
	}
	return recs
}

func joinComma(ms []string) string {
	var b bytes.Buffer
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	return b.String()
}

// Delete erases a user's history: their records, text, tags, metadata,
// scores, the messages and filter values no one else has, and their share
// of the rollups, leaving a store whose every aggregate, facet and record
// is what a store that never had them holds; nothing of their text is
// found by a query, or in the database's files.
func testDelete(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	recs := eraseData(t, s)
	var kept []record.Record
	for _, r := range recs {
		if r.UserID != leaver {
			kept = append(kept, r)
		}
	}
	// The planner's statistics sample the values too, as they do once
	// autovacuum or a user runs ANALYZE: pg_statistic, sqlite_stat4.
	harness.Exec(t, url, "ANALYZE")
	if harness.Files != nil {
		raw := harness.Files(t, url)
		for _, n := range needles {
			require.True(t, bytes.Contains(raw, []byte(n)), "before: %q is in the files (else the test proves nothing)", n)
		}
	}

	_, err := s.Delete(ctx, store.Filter{})
	require.ErrorIs(t, err, store.ErrEmptyFilter)
	_, err = s.Delete(ctx, store.Filter{Tags: []string{}})
	require.ErrorIs(t, err, store.ErrEmptyFilter)

	rc, err := s.Delete(ctx, store.Filter{UserID: leaver})
	require.NoError(t, err)
	t.Logf("receipt: %+v", rc)
	assert.EqualValues(t, 4, rc.Records)
	assert.EqualValues(t, 2, rc.Traces, "tr-leaver and tr-late went whole; tr-mixed stays")
	assert.EqualValues(t, 4, rc.TextEntries)
	assert.EqualValues(t, 4, rc.Attributes, "two tags and two metadata values")
	assert.EqualValues(t, 2, rc.Scores, "leave-2's and tr-leaver's; tr-mixed's stays")
	assert.EqualValues(t, 1, rc.Restacked, "keep-2 built on leave-1")
	assert.Positive(t, rc.Messages)
	assert.GreaterOrEqual(t, rc.MessagesShared, int64(3), "the shared system prompt, and leave-1's turn that keep-2 repeats")
	assert.GreaterOrEqual(t, rc.Names, int64(2), "the leaver and their tag")
	assert.Positive(t, rc.RollupRows)
	assert.NotEmpty(t, rc.Scrubbed)
	require.NotEmpty(t, rc.Checks)
	assert.True(t, rc.Clean())
	for _, c := range rc.Checks {
		assert.Zero(t, c.Found, c.Name)
	}

	// No query finds them.
	for _, id := range []string{"leave-1", "leave-2", "leave-3", "leave-4"} {
		_, err := s.Get(ctx, id)
		assert.ErrorIs(t, err, store.ErrNotFound, id)
	}
	for _, text := range []string{"okapi9917", "quokkameta"} {
		p, err := s.Query(ctx, store.Query{Filter: store.Filter{Text: text}})
		require.NoError(t, err)
		assert.Empty(t, p.Records, text)
	}
	n, err := s.Count(ctx, store.Filter{Tags: []string{"leavertag"}})
	require.NoError(t, err)
	assert.Zero(t, n)
	tr, err := s.Trace(ctx, "tr-leaver")
	require.NoError(t, err)
	assert.Empty(t, tr)
	scores, err := s.Scores(ctx, store.ScoreQuery{})
	require.NoError(t, err)
	assert.Len(t, scores, 2, "tr-mixed's and keep-2's")

	// Every other record reads back whole: keep-2, which built on
	// leave-1, and keep-3, which shares the leaver's system prompt.
	for _, r := range kept {
		got, err := s.Get(ctx, r.CallID)
		require.NoError(t, err)
		assertSame(t, r, got)
	}

	// A store that never had the leaver's records holds the same.
	fresh := open(t, harness.NewURL(t), store.Options{})
	for part := range slices.Chunk(kept, 300) {
		_, err := fresh.Write(ctx, part)
		require.NoError(t, err)
	}
	for _, sc := range scores {
		require.NoError(t, fresh.AddScore(ctx, sc))
	}
	sameStores(t, fresh, s)

	// The text is gone from the files too.
	if harness.Files != nil {
		raw := harness.Files(t, url)
		for _, n := range needles {
			if i := bytes.Index(raw, []byte(n)); i >= 0 {
				t.Errorf("after: %q is still in the files: …%q…", n, raw[max(0, i-60):min(len(raw), i+len(n)+60)])
			}
		}
	}

	// By call, by trace, by time: each takes what it names.
	rc, err = s.Delete(ctx, store.Filter{CallID: "keep-3"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, rc.Records)
	rc, err = s.Delete(ctx, store.Filter{TraceID: "tr-mixed"})
	require.NoError(t, err)
	assert.EqualValues(t, 2, rc.Records)
	assert.EqualValues(t, 2, rc.Scores, "keep-2's and the conversation's")
	first, err := record.ParseTime(kept[100].Timestamp)
	require.NoError(t, err)
	want, err := s.Count(ctx, store.Filter{Until: first})
	require.NoError(t, err)
	rc, err = s.Delete(ctx, store.Filter{Until: first})
	require.NoError(t, err)
	assert.Equal(t, want, rc.Records)
	assert.True(t, rc.Clean())
	rc, err = s.Delete(ctx, store.Filter{UserID: "nobody-at-all"})
	require.NoError(t, err)
	assert.Zero(t, rc.Records)
}

// sameStores checks that two stores answer alike: every aggregate (from
// the rollups and from the records), the facets, the conversations.
func sameStores(t *testing.T, want, got *store.Store) {
	t.Helper()
	ctx := context.Background()
	var groupings []store.Grouping
	for _, by := range [][]store.GroupBy{
		nil, {store.ByHour}, {store.ByDay}, {store.ByUser}, {store.ByTag}, {store.ByModel}, {store.ByProvider},
		{store.ByMethod}, {store.ByErrorType}, {store.ByDay, store.ByModel}, {store.ByUser, store.ByTag}, {store.ByTag, store.ByDay},
	} {
		groupings = append(groupings, store.Grouping{By: by}, store.Grouping{By: by, NoLatency: true})
	}
	for _, f := range []store.Filter{{}, {UserID: "keeper"}, {Tags: []string{"support"}}, {Model: "gpt-4o"},
		{Since: time.Date(2025, 10, 26, 13, 0, 0, 0, time.UTC), Until: time.Date(2025, 10, 26, 14, 30, 0, 0, time.UTC)},
		{MinDuration: time.Nanosecond}} {
		w, err := want.Aggregates(ctx, f, groupings...)
		require.NoError(t, err)
		g, err := got.Aggregates(ctx, f, groupings...)
		require.NoError(t, err)
		for i, by := range groupings {
			name := fmt.Sprintf("filter %+v, by %+v", f, by)
			require.Equal(t, len(w[i]), len(g[i]), name)
			for j := range w[i] {
				a, b := w[i][j], g[i][j]
				assert.Equal(t, a.Key, b.Key, name)
				assert.Equal(t, [9]int64{a.Calls, a.Errors, a.InputTokens, a.OutputTokens, a.TotalTokens, a.Unpriced, a.UnpricedTokens},
					[9]int64{b.Calls, b.Errors, b.InputTokens, b.OutputTokens, b.TotalTokens, b.Unpriced, b.UnpricedTokens}, "%s %v", name, a.Key)
				assert.InDelta(t, a.CostUSD, b.CostUSD, 1e-9, name)
				assert.Equal(t, a.LatencyP50MS, b.LatencyP50MS, "%s %v", name, a.Key)
				assert.Equal(t, a.LatencyP95MS, b.LatencyP95MS, "%s %v", name, a.Key)
			}
		}
	}
	wf, err := want.Facets(ctx)
	require.NoError(t, err)
	gf, err := got.Facets(ctx)
	require.NoError(t, err)
	assert.Equal(t, wf, gf, "the values a filter offers")
	wt, err := want.Traces(ctx, store.Query{Limit: 1000})
	require.NoError(t, err)
	gt, err := got.Traces(ctx, store.Query{Limit: 1000})
	require.NoError(t, err)
	require.Equal(t, len(wt.Traces), len(gt.Traces))
	wd, err := want.Describe(ctx)
	require.NoError(t, err)
	gd, err := got.Describe(ctx)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{wd.Records, wd.Messages, wd.Traces}, [3]int64{gd.Records, gd.Messages, gd.Traces}, "records, messages, traces")
}

// Retention rules give a tag's or a user's records a shorter life, and
// go through Delete's machinery: their messages, scores and rollups go
// with them.
func testRetentionRules(t *testing.T, url string) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	var recs []record.Record
	for i := range 60 {
		r := record.Record{
			CallID: fmt.Sprintf("r-%02d", i), Timestamp: record.FormatTime(now.Add(-time.Duration(i)*24*time.Hour - 12*time.Hour)),
			Speaker: record.SpeakerUser, MethodName: "openai.chat.completions.create",
			Args: record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, fmt.Sprintf("question number %d", i))}), Kwargs: json.RawMessage(`{}`),
			Outcome: record.Outcome{Status: "ok", OK: true}, UserID: fmt.Sprintf("u-%d", i%3), DurationMS: float64(100 + i), Version: record.Version,
		}
		if i%2 == 0 {
			r.Tags = []string{"support"}
		}
		recs = append(recs, r)
	}
	s := open(t, url, store.Options{})
	_, err := s.Write(ctx, recs)
	require.NoError(t, err)
	ret, err := store.ParseRetention("support=10d, user:u-1=20d, all=50d")
	require.NoError(t, err)
	assert.Equal(t, "support 10 days, user u-1 20 days, everything 50 days", ret.String())
	res, err := s.Prune(ctx, ret)
	require.NoError(t, err)
	var kept []record.Record
	for i, r := range recs {
		age := time.Duration(i)*24*time.Hour + 12*time.Hour
		if age > 50*24*time.Hour || (i%2 == 0 && age > 10*24*time.Hour) || (i%3 == 1 && age > 20*24*time.Hour) {
			continue
		}
		kept = append(kept, r)
	}
	assert.EqualValues(t, len(recs)-len(kept), res.Records)
	assert.Equal(t, res.Records, res.Deleted.Records)
	assert.Equal(t, res.Records, res.Deleted.TextEntries)
	n, err := s.Count(ctx, store.Filter{})
	require.NoError(t, err)
	assert.EqualValues(t, len(kept), n)
	fresh := open(t, harness.NewURL(t), store.Options{})
	_, err = fresh.Write(ctx, kept)
	require.NoError(t, err)
	sameStores(t, fresh, s)

	// A store opened with rules applies them itself, and says them.
	s.Close()
	_, err = s.Write(ctx, recs)
	require.Error(t, err)
	s2 := open(t, url, store.Options{RetentionRules: []store.RetentionRule{{User: "u-2", MaxAge: time.Hour}}})
	assert.Equal(t, "user u-2 1 hour", s2.Retention().String())
	require.Eventually(t, func() bool {
		n, err := s2.Count(ctx, store.Filter{UserID: "u-2", Until: now.Add(-2 * time.Hour)})
		return err == nil && n == 0
	}, 10*time.Second, 20*time.Millisecond)

	// The store keeps it: a reader says it, a writer opened without one
	// applies it.
	ro := open(t, url, store.Options{ReadOnly: true})
	assert.Equal(t, "user u-2 1 hour", ro.Retention().String())
	plain := open(t, url, store.Options{})
	assert.Equal(t, "user u-2 1 hour", plain.Retention().String())

	_, err = store.OpenWith(ctx, url, store.Options{RetentionRules: []store.RetentionRule{{MaxAge: time.Hour}}})
	assert.ErrorIs(t, err, store.ErrBadRetention)
}
