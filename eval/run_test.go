package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// history makes n calls in conversations of three: every third answers
// with broken JSON, and one in ten is a judge's own call.
func history(n int) []record.Record {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	recs := make([]record.Record, n)
	for i := range recs {
		r := call(`{"ok":true}`)
		if i%3 == 2 {
			r.Output = answer(`{"ok":`)
		}
		r.CallID = fmt.Sprintf("call-%05d", i)
		r.TraceID = fmt.Sprintf("trace-%04d", i/3)
		r.Timestamp = record.FormatTime(start.Add(time.Duration(i) * time.Second))
		r.HistoryQueryPatterns = []string{}
		r.Version = 1
		if i%10 == 9 {
			r.Tags = []string{eval.Tag}
			r.TraceID = fmt.Sprintf("judge-%05d", i) // as the recorder infers one
		}
		recs[i] = r
	}
	return recs
}

func openStore(t *testing.T, recs []record.Record) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "h.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	_, err = st.Write(context.Background(), recs)
	require.NoError(t, err)
	return st
}

// judgeConversations is a code evaluator of conversations: how many calls.
type judgeConversations struct{}

func (judgeConversations) Info() eval.Info {
	return eval.Info{Name: "turns", Version: "1", Source: store.SourceCode, Conversation: true}
}

func (judgeConversations) Evaluate(_ context.Context, s eval.Subject) ([]store.Score, error) {
	return []store.Score{{Value: store.Number(float64(len(s.Records)))}}, nil
}

func TestRunOverAStoreTwiceWritesOnce(t *testing.T) {
	ctx := context.Background()
	recs := history(1500)
	st := openStore(t, recs)
	evs := []eval.Evaluator{eval.JSONValid(), eval.Latency(time.Second), judgeConversations{}}
	var progress []int64
	res, err := eval.Run(ctx, st, evs, eval.RunOptions{Workers: 3, Progress: func(done, total int64) {
		if total > 0 {
			require.Equal(t, int64(1500), total)
			progress = append(progress, done)
		}
	}})
	require.NoError(t, err)
	require.NoError(t, res.Err())
	judged := int64(1500 - 150) // the judge's own calls are not
	assert.Equal(t, int64(1500), res.Calls)
	assert.Equal(t, int64(500+150), res.Conversations, "the judge's own are read, not judged")
	assert.Equal(t, 2*judged+500, res.Scores)
	assert.Zero(t, res.Skipped)
	assert.Equal(t, []int64{512, 1024, 1500}, progress)

	all, err := st.Scores(ctx, store.ScoreQuery{Name: "json_valid"})
	require.NoError(t, err)
	require.Len(t, all, int(judged))
	bad := 0
	for _, sc := range all {
		if v, _ := sc.Value.Float(); v == 0 {
			bad++
		}
	}
	assert.Equal(t, 500-50, bad, "every third answer is broken, bar the judge's own")
	turns, err := st.Scores(ctx, store.ScoreQuery{Name: "turns", Limit: 1})
	require.NoError(t, err)
	require.Len(t, turns, 1)
	assert.Equal(t, "", turns[0].CallID)
	assert.Contains(t, []string{"2", "3"}, turns[0].Value.String())

	again, err := eval.Run(ctx, st, evs, eval.RunOptions{})
	require.NoError(t, err)
	assert.Zero(t, again.Scores, "run twice, written once")
	assert.Equal(t, res.Scores, again.Skipped)
	n, err := st.Scores(ctx, store.ScoreQuery{})
	require.NoError(t, err)
	assert.Len(t, n, int(res.Scores))

	// A new version of an evaluator scores again, beside the old.
	v2 := eval.Check("json_valid", "2", func(r *record.Record) (store.Value, string, bool) {
		return store.Bool(json.Valid([]byte(r.Output.Text()))), "", true
	})
	res2, err := eval.Run(ctx, st, []eval.Evaluator{v2}, eval.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, judged, res2.Scores)
}

func TestRunResumes(t *testing.T) {
	recs := history(2000)
	st := openStore(t, recs)
	ctx, cancel := context.WithCancel(context.Background())
	first, err := eval.Run(ctx, st, []eval.Evaluator{eval.JSONValid()}, eval.RunOptions{Progress: func(done, _ int64) {
		if done >= 1024 {
			cancel() // stopped half way, as by ^C
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	require.Positive(t, first.Scores)
	require.Less(t, first.Scores, int64(1800))

	second, err := eval.Run(context.Background(), st, []eval.Evaluator{eval.JSONValid()}, eval.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, first.Scores, second.Skipped, "what the first run wrote is not judged again")
	assert.Equal(t, int64(1800), first.Scores+second.Scores)
	all, err := st.Scores(context.Background(), store.ScoreQuery{})
	require.NoError(t, err)
	assert.Len(t, all, 1800)
}

func TestRunFilterAndFailures(t *testing.T) {
	recs := history(30)
	recs[0].Model = "gpt-x"
	recs[1].Model = "gpt-x"
	st := openStore(t, recs)
	m := &fakeModel{reply: eval.Reply{Text: "Looks good to me!"}}
	j := helpfulness(t, m, eval.JudgeOptions{})
	res, err := eval.Run(context.Background(), st, []eval.Evaluator{j, eval.JSONValid()}, eval.RunOptions{Filter: store.Filter{Model: "gpt-x"}})
	require.NoError(t, err, "a failed evaluation does not stop the run")
	assert.Equal(t, int64(2), res.Calls)
	assert.Equal(t, int64(2), res.Failed)
	assert.Equal(t, int64(2), res.Scores, "json_valid's")
	require.ErrorIs(t, res.Err(), eval.ErrVerdict)
	got, err := st.Scores(context.Background(), store.ScoreQuery{Name: "helpfulness"})
	require.NoError(t, err)
	assert.Empty(t, got, "an unreadable verdict is no score")
}

func TestRunRecordsOfAFile(t *testing.T) {
	recs := history(100)
	path := filepath.Join(t.TempDir(), "h.scores.jsonl")
	for range 2 {
		have := readScores(t, path)
		w, err := store.OpenScoreJSONL(path)
		require.NoError(t, err)
		_, err = eval.RunRecords(context.Background(), recs, have, w, []eval.Evaluator{eval.JSONValid(), judgeConversations{}}, eval.RunOptions{})
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	got := readScores(t, path)
	assert.Len(t, got, 90+33, "written once over two runs: 90 calls, 33 conversations")
}

func openIfExists(path string) (*os.File, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return f, err
}

func readScores(t *testing.T, path string) []store.Score {
	t.Helper()
	f, err := openIfExists(path)
	require.NoError(t, err)
	if f == nil {
		return nil
	}
	defer f.Close()
	scores, err := store.ReadScores(f)
	require.NoError(t, err)
	return scores
}
