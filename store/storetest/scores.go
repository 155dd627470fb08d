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

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// scoreRecords writes six calls in three conversations, on two days,
// models, users and tags:
//
//	t1: a1 a2 (gpt-a, user u1, tag support, day 1)
//	t2: b1 b2 (gpt-b, user u2, tags support and beta, day 1)
//	t3: c1 c2 (gpt-a, user u2, tag beta, day 2)
func scoreRecords(t *testing.T, s *store.Store) time.Time {
	day1 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var recs []record.Record
	add := func(id, trace, model, user string, at time.Time, tags ...string) {
		recs = append(recs, record.Record{
			CallID: id, Timestamp: record.FormatTime(at), Speaker: "user", MethodName: "openai.chat.completions.create",
			Args: json.RawMessage(`[{"role":"user","content":"` + id + `"}]`), Kwargs: json.RawMessage(`{}`),
			Outcome: record.Success("chat.completion"), TraceID: trace, Model: model, UserID: user, Tags: tags,
			HistoryQueryPatterns: []string{}, Version: 1,
		})
	}
	add("a1", "t1", "gpt-a", "u1", day1, "support")
	add("a2", "t1", "gpt-a", "u1", day1.Add(time.Minute), "support")
	add("b1", "t2", "gpt-b", "u2", day1.Add(time.Hour), "support", "beta")
	add("b2", "t2", "gpt-b", "u2", day1.Add(time.Hour+time.Minute), "support", "beta")
	day2 := day1.Add(24 * time.Hour)
	add("c1", "t3", "gpt-a", "u2", day2, "beta")
	add("c2", "t3", "gpt-a", "u2", day2.Add(time.Minute), "beta")
	_, err := s.Write(context.Background(), recs)
	require.NoError(t, err)
	return day1
}

func testScores(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, store.Options{})
	day1 := scoreRecords(t, s)
	at := day1.Add(48 * time.Hour)
	sc := func(call, trace, name string, v store.Value, author string) store.Score {
		return store.Score{CallID: call, TraceID: trace, Name: name, Value: v, Source: store.SourceCode, Author: author, Time: at}
	}
	scores := []store.Score{
		sc("a1", "t1", "helpfulness", store.Number(0.9), "judge@1"),
		sc("a2", "t1", "helpfulness", store.Number(0.3), "judge@1"),
		sc("b1", "", "helpfulness", store.Number(0.7), "judge@1"),
		sc("c1", "t3", "helpfulness", store.Number(0.2), "judge@1"),
		sc("a1", "", "thumbs", store.Bool(true), "app"),
		sc("b2", "", "thumbs", store.Bool(false), "app"),
		sc("c2", "", "thumbs", store.Bool(true), "app"),
		sc("", "t2", "topic", store.Category("off_topic"), "reviewer"),
		sc("", "t3", "topic", store.Category("on_topic"), "reviewer"),
		sc("", "t1", "topic", store.Category("on_topic"), "reviewer"),
		sc("zz", "", "thumbs", store.Bool(true), "app"), // feedback on a call not (yet) in the store
	}
	n, err := s.AddScores(ctx, scores)
	require.NoError(t, err)
	require.Equal(t, len(scores), n)

	t.Run("ReadBack", func(t *testing.T) {
		got, err := s.Scores(ctx, store.ScoreQuery{})
		require.NoError(t, err)
		require.Len(t, got, len(scores))
		for i := range got {
			assert.Equal(t, scores[i], got[i])
		}
		got, err = s.Scores(ctx, store.ScoreQuery{TraceID: "t2"})
		require.NoError(t, err)
		assert.Equal(t, []store.Score{scores[2], scores[5], scores[7]}, got, "a conversation's scores and its calls'")
		got, err = s.Scores(ctx, store.ScoreQuery{CallIDs: []string{"a1", "c2"}, Name: "thumbs"})
		require.NoError(t, err)
		assert.Equal(t, []store.Score{scores[4], scores[6]}, got)
		got, err = s.Scores(ctx, store.ScoreQuery{Author: "reviewer", Limit: 2})
		require.NoError(t, err)
		assert.Len(t, got, 2)
	})

	t.Run("OneScorePerTargetNameAndAuthor", func(t *testing.T) {
		again := scores[1]
		again.Value, again.Comment, again.Time = store.Number(0.4), "second run", at.Add(time.Hour)
		require.NoError(t, s.AddScore(ctx, again))
		require.NoError(t, s.AddScore(ctx, again))
		other := again
		other.Author = "judge@2" // a new version: a score of its own
		require.NoError(t, s.AddScore(ctx, other))
		got, err := s.Scores(ctx, store.ScoreQuery{CallIDs: []string{"a2"}})
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, again, got[0])
		assert.Equal(t, other, got[1])
		// Put back as it was, for the tests below.
		_, err = s.AddScores(ctx, []store.Score{scores[1]})
		require.NoError(t, err)
		_, err = s.AddScores(ctx, []store.Score{scores[1], {Name: "x"}})
		require.ErrorIs(t, err, store.ErrBadScore, "one bad score: none written")
		got, err = s.Scores(ctx, store.ScoreQuery{Author: "judge@2"})
		require.NoError(t, err)
		require.Len(t, got, 1)
	})

	t.Run("FilterRecordsAndConversations", func(t *testing.T) {
		ids := func(f store.Filter) []string {
			var out []string
			for r, err := range s.Records(ctx, f, store.ReadOptions{NoArgs: true}) {
				require.NoError(t, err)
				out = append(out, r.CallID)
			}
			return out
		}
		parse := func(texts ...string) store.Filter {
			var f store.Filter
			for _, text := range texts {
				sf, err := store.ParseScoreFilter(text)
				require.NoError(t, err)
				f.Scores = append(f.Scores, sf)
			}
			return f
		}
		assert.Equal(t, []string{"a2", "c1"}, ids(parse("helpfulness<0.5")))
		assert.Equal(t, []string{"a1", "a2", "b1", "c1"}, ids(parse("helpfulness>=0.2")))
		assert.Equal(t, []string{"b2"}, ids(parse("thumbs=false")))
		assert.Equal(t, []string{"a1", "c2"}, ids(parse("thumbs=true")))
		assert.Equal(t, []string{"b1", "b2"}, ids(parse("topic=off_topic")), "a conversation's score selects its calls")
		assert.Equal(t, []string{"a1", "a2", "c1", "c2"}, ids(parse("topic!=off_topic")))
		assert.Equal(t, []string{"a2", "b1", "c1"}, ids(parse("helpfulness<0.8", "helpfulness")))
		assert.Equal(t, []string{"a2", "b1", "c1"}, ids(parse("!thumbs")))
		assert.Equal(t, []string{"b2", "c2"}, ids(parse("!helpfulness")))
		none := parse("!topic")
		assert.Empty(t, ids(none), "every conversation has a topic")

		// Conversations where helpfulness < 0.5: t3 and t1, newest first.
		page, err := s.Traces(ctx, store.Query{Filter: parse("helpfulness<0.5")})
		require.NoError(t, err)
		var traces []string
		for _, tr := range page.Traces {
			traces = append(traces, tr.TraceID)
		}
		assert.Equal(t, []string{"t3", "t1"}, traces)
		// Filters combine with the rest.
		f := parse("thumbs=true")
		f.Model = "gpt-a"
		f.UserID = "u2"
		assert.Equal(t, []string{"c2"}, ids(f))

		// An aggregate filtered by a score reads the records, not rollups.
		groups, err := s.Aggregate(ctx, store.AggregateQuery{Filter: parse("thumbs=true"), By: []store.GroupBy{store.ByModel}})
		require.NoError(t, err)
		require.Len(t, groups, 1)
		assert.Equal(t, int64(2), groups[0].Calls)
	})

	t.Run("Aggregates", func(t *testing.T) {
		agg := func(name string, by ...store.GroupBy) map[string]store.ScoreGroup {
			groups, err := s.AggregateScores(ctx, store.ScoreAggregateQuery{Name: name, By: by})
			require.NoError(t, err)
			out := map[string]store.ScoreGroup{}
			for _, g := range groups {
				out[fmt.Sprint(g.Key)] = g
			}
			return out
		}
		all := agg("helpfulness")
		require.Len(t, all, 1)
		// judge@2's 0.4 on a2 counts too: every score of the name.
		g := all["[]"]
		assert.Equal(t, int64(5), g.Count)
		assert.InDelta(t, (0.9+0.3+0.7+0.2+0.4)/5, g.Mean, 1e-9)
		assert.Equal(t, 0.2, g.Min)
		assert.Equal(t, 0.9, g.Max)

		byModel := agg("helpfulness", store.ByModel)
		require.Len(t, byModel, 2)
		assert.Equal(t, int64(4), byModel["[gpt-a]"].Count)
		assert.InDelta(t, 0.7, byModel["[gpt-b]"].Mean, 1e-9)

		thumbs := agg("thumbs", store.ByUser)
		require.Len(t, thumbs, 2, "feedback on a call the store lacks counts nowhere")
		assert.Equal(t, 1.0, thumbs["[u1]"].Mean)
		assert.Equal(t, 0.5, thumbs["[u2]"].Mean, "a boolean's mean is the share of true")

		byTag := agg("thumbs", store.ByTag)
		assert.Equal(t, int64(2), byTag["[support]"].Count)
		assert.Equal(t, int64(2), byTag["[beta]"].Count)
		assert.Equal(t, 0.5, byTag["[beta]"].Mean)

		byDay := agg("topic", store.ByDay)
		require.Len(t, byDay, 2)
		d1 := byDay["["+day1.Truncate(24*time.Hour).Format(time.RFC3339)+"]"]
		assert.Equal(t, map[string]int64{"on_topic": 1, "off_topic": 1}, d1.Labels, "a conversation's score counts on its first call's day")
		assert.Equal(t, day1.Truncate(24*time.Hour), d1.Time)
		assert.Equal(t, int64(2), d1.Count)

		f, err := store.ParseScoreFilter("thumbs=true")
		require.NoError(t, err)
		groups, err := s.AggregateScores(ctx, store.ScoreAggregateQuery{Name: "helpfulness", Filter: store.Filter{Scores: []store.ScoreFilter{f}, Model: "gpt-a"}})
		require.NoError(t, err)
		require.Len(t, groups, 1)
		assert.Equal(t, int64(1), groups[0].Count)
		assert.Equal(t, 0.9, groups[0].Mean)

		_, err = s.AggregateScores(ctx, store.ScoreAggregateQuery{})
		require.Error(t, err)
		_, err = s.AggregateScores(ctx, store.ScoreAggregateQuery{Name: "x", By: []store.GroupBy{"nope"}})
		require.ErrorIs(t, err, store.ErrBadGroup)
	})

	t.Run("ImportAScoresFileTwice", func(t *testing.T) {
		var file bytes.Buffer
		w := store.NewScoreJSONL(&file)
		for _, name := range []string{"imported", "imported", "other"} {
			require.NoError(t, w.AddScore(ctx, store.Score{CallID: "c1", Name: name, Value: store.Number(3), Source: store.SourceHuman, Author: "ann", Time: at}))
		}
		require.NoError(t, w.Close())
		file.WriteString("{\"not\":\"a score\"}\n")
		raw := file.Bytes()
		for range 2 {
			var bad []int
			res, err := s.ImportScores(ctx, bytes.NewReader(raw), func(line int, err error) { bad = append(bad, line) })
			require.NoError(t, err)
			assert.Equal(t, 3, res.Scores)
			assert.Equal(t, 1, res.BadLines)
			assert.Equal(t, []int{4}, bad)
		}
		got, err := s.Scores(ctx, store.ScoreQuery{Author: "ann"})
		require.NoError(t, err)
		assert.Len(t, got, 2)
	})

	t.Run("ReadOnlyRefusesScores", func(t *testing.T) {
		ro := open(t, url, store.Options{ReadOnly: true})
		require.ErrorIs(t, ro.AddScore(ctx, scores[0]), store.ErrReadOnly)
		got, err := ro.Scores(ctx, store.ScoreQuery{Name: "topic"})
		require.NoError(t, err)
		assert.Len(t, got, 3)
		assert.True(t, slices.ContainsFunc(got, func(sc store.Score) bool { return sc.Value.Label() == "off_topic" }))
	})
}
