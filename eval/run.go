package eval

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// RunOptions configures [Run] and [RunRecords]. The zero value is the
// defaults.
type RunOptions struct {
	// Filter picks the records judged (and, for evaluators of
	// conversations, the conversations that have one); zero is all. Only
	// Run reads it: RunRecords judges the records it is given.
	Filter store.Filter
	// Workers is how many evaluations run at once; default GOMAXPROCS.
	Workers int
	// Progress, when not nil, is told how many calls (then conversations)
	// are done, of how many, as the run goes; total is -1 when unknown.
	Progress func(done, total int64)
}

// RunResult counts what a run did.
type RunResult struct {
	Calls         int64 // calls read
	Conversations int64 // conversations read, for evaluators of conversations
	// Skipped counts evaluations not run because the evaluator, at its
	// version, had scored the call or conversation already: a run resumed
	// or run again writes each score once.
	Skipped int64
	Scores  int64 // scores written
	// Failed counts evaluations that failed; Errors holds the first few.
	Failed int64
	Errors []error
}

// maxErrors is how many errors a RunResult keeps.
const maxErrors = 10

// runBatch is how many calls a run judges between two writes.
const runBatch = 512

// Run judges the records of st that o.Filter selects, with each
// evaluator, and keeps the scores in st. It reads a page at a time, asks
// the store which of the page's calls each evaluator has scored already
// at its version (so that a run stopped half way and started again, or
// run twice, judges each call once and writes each score once), judges
// the rest on o.Workers goroutines and writes their scores in one
// transaction per page. Evaluators of conversations then judge each
// conversation that has a selected record, as a whole.
//
// Calls an evaluator made ([IsEvaluation]) are never judged. A failed
// evaluation is counted and the run goes on; Run returns an error only
// when the store fails, or ctx ends.
func Run(ctx context.Context, st *store.Store, evaluators []Evaluator, o RunOptions) (RunResult, error) {
	calls, convs := split(evaluators)
	var res RunResult
	if len(calls) > 0 {
		total, err := st.Count(ctx, o.Filter)
		if err != nil {
			return res, err
		}
		readArgs := false
		for _, e := range calls {
			readArgs = readArgs || e.Info().Source == store.SourceModel
		}
		recs := st.Records(ctx, o.Filter, store.ReadOptions{NoArgs: !readArgs})
		err = judgeCalls(ctx, calls, batches(recs), total, storeScored(st), st, o, &res)
		if err != nil {
			return res, err
		}
	}
	if len(convs) > 0 {
		if err := judgeStoreConversations(ctx, st, convs, o, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// RunRecords judges records (a JSONL history read whole) as [Run] judges
// a store's, skipping what have (the scores already kept, a scores
// file's) says is done, and writes the new scores to dst. Evaluators of
// conversations judge the records grouped by trace.
func RunRecords(ctx context.Context, recs []record.Record, have []store.Score, dst ScoreSink, evaluators []Evaluator, o RunOptions) (RunResult, error) {
	calls, convs := split(evaluators)
	done := map[[2]string]bool{}
	for _, sc := range have {
		done[[2]string{target(sc.CallID, sc.TraceID), sc.Author}] = true
	}
	scored := func(_ context.Context, subjects []Subject, conv bool) (map[[2]string]bool, error) { return done, nil }
	var res RunResult
	if len(calls) > 0 {
		seq := func(yield func([]record.Record, error) bool) {
			for i := 0; i < len(recs); i += runBatch {
				if !yield(recs[i:min(i+runBatch, len(recs))], nil) {
					return
				}
			}
		}
		if err := judgeCalls(ctx, calls, seq, int64(len(recs)), scored, dst, o, &res); err != nil {
			return res, err
		}
	}
	if len(convs) > 0 {
		byTrace := map[string][]record.Record{}
		var order []string
		for _, r := range recs {
			if r.TraceID == "" {
				continue
			}
			if _, ok := byTrace[r.TraceID]; !ok {
				order = append(order, r.TraceID)
			}
			byTrace[r.TraceID] = append(byTrace[r.TraceID], r)
		}
		subjects := make([]Subject, len(order))
		for i, id := range order {
			subjects[i] = Subject{Records: byTrace[id]}
		}
		if err := judgeSubjects(ctx, convs, subjects, true, scored, dst, o, &res); err != nil {
			return res, err
		}
		res.Conversations = int64(len(subjects))
	}
	return res, nil
}

func split(evs []Evaluator) (calls, convs []Evaluator) {
	for _, e := range evs {
		if e.Info().Conversation {
			convs = append(convs, e)
		} else {
			calls = append(calls, e)
		}
	}
	return calls, convs
}

// target is what a score is on, as the done set keys it.
func target(callID, traceID string) string {
	if callID != "" {
		return "c:" + callID
	}
	return "t:" + traceID
}

func subjectTarget(s Subject, conv bool) string {
	c := s.Call()
	if conv {
		return target("", c.TraceID)
	}
	return target(c.CallID, "")
}

// scoredFunc says which (target, author) pairs of subjects are scored
// already.
type scoredFunc func(ctx context.Context, subjects []Subject, conv bool) (map[[2]string]bool, error)

// storeScored asks st which of the subjects are scored.
func storeScored(st *store.Store) scoredFunc {
	return func(ctx context.Context, subjects []Subject, conv bool) (map[[2]string]bool, error) {
		done := map[[2]string]bool{}
		var q store.ScoreQuery
		for _, s := range subjects {
			if conv {
				// A conversation at a time: its trace's scores.
				q := store.ScoreQuery{TraceID: s.Call().TraceID}
				got, err := st.Scores(ctx, q)
				if err != nil {
					return nil, err
				}
				for _, sc := range got {
					done[[2]string{target(sc.CallID, sc.TraceID), sc.Author}] = true
				}
				continue
			}
			q.CallIDs = append(q.CallIDs, s.Call().CallID)
		}
		if len(q.CallIDs) == 0 {
			return done, nil
		}
		got, err := st.Scores(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, sc := range got {
			done[[2]string{target(sc.CallID, ""), sc.Author}] = true
		}
		return done, nil
	}
}

// batches groups a store's records into runBatch at a time.
func batches(recs iter.Seq2[record.Record, error]) iter.Seq2[[]record.Record, error] {
	return func(yield func([]record.Record, error) bool) {
		batch := make([]record.Record, 0, runBatch)
		for r, err := range recs {
			if err != nil {
				yield(nil, err)
				return
			}
			if batch = append(batch, r); len(batch) == runBatch {
				if !yield(batch, nil) {
					return
				}
				batch = make([]record.Record, 0, runBatch)
			}
		}
		if len(batch) > 0 {
			yield(batch, nil)
		}
	}
}

func judgeCalls(ctx context.Context, evs []Evaluator, seq iter.Seq2[[]record.Record, error], total int64, scored scoredFunc, dst ScoreSink, o RunOptions, res *RunResult) error {
	for batch, err := range seq {
		if err != nil {
			return err
		}
		subjects := make([]Subject, 0, len(batch))
		for i := range batch {
			if !IsEvaluation(&batch[i]) {
				subjects = append(subjects, Subject{Records: batch[i : i+1 : i+1]})
			}
		}
		if err := judgeSubjects(ctx, evs, subjects, false, scored, dst, o, res); err != nil {
			return err
		}
		res.Calls += int64(len(batch))
		if o.Progress != nil {
			o.Progress(res.Calls, total)
		}
	}
	return ctx.Err()
}

func judgeStoreConversations(ctx context.Context, st *store.Store, evs []Evaluator, o RunOptions, res *RunResult) error {
	q := store.Query{Filter: o.Filter, Limit: 200}
	var done int64
	for {
		page, err := st.Traces(ctx, q)
		if err != nil {
			return err
		}
		subjects := make([]Subject, 0, len(page.Traces))
		for _, t := range page.Traces {
			recs, err := st.Trace(ctx, t.TraceID)
			if err != nil {
				return err
			}
			if len(recs) > 0 && !IsEvaluation(&recs[len(recs)-1]) {
				subjects = append(subjects, Subject{Records: recs})
			}
		}
		if err := judgeSubjects(ctx, evs, subjects, true, storeScored(st), st, o, res); err != nil {
			return err
		}
		done += int64(len(page.Traces))
		res.Conversations = done
		if o.Progress != nil {
			o.Progress(done, -1)
		}
		if page.Next == "" {
			return ctx.Err()
		}
		q.Cursor = page.Next
	}
}

// batchWriter is a sink that takes a batch in one go (a store).
type batchWriter interface {
	AddScores(ctx context.Context, scores []store.Score) (int, error)
}

// judgeSubjects runs each evaluator on each subject not scored yet, on
// o.Workers goroutines, and writes the scores.
func judgeSubjects(ctx context.Context, evs []Evaluator, subjects []Subject, conv bool, scored scoredFunc, dst ScoreSink, o RunOptions, res *RunResult) error {
	if len(subjects) == 0 {
		return nil
	}
	done, err := scored(ctx, subjects, conv)
	if err != nil {
		return err
	}
	type job struct {
		e Evaluator
		s Subject
	}
	var jobs []job
	for _, s := range subjects {
		t := subjectTarget(s, conv)
		for _, e := range evs {
			if done[[2]string{t, e.Info().Author()}] {
				res.Skipped++
				continue
			}
			jobs = append(jobs, job{e, s})
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu     sync.Mutex
		scores []store.Score
		wg     sync.WaitGroup
		next   = make(chan job)
	)
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				got, err := Score(ctx, j.e, j.s)
				mu.Lock()
				if err != nil {
					res.Failed++
					if len(res.Errors) < maxErrors {
						res.Errors = append(res.Errors, err)
					}
				}
				scores = append(scores, got...)
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if bw, ok := dst.(batchWriter); ok {
		n, err := bw.AddScores(ctx, scores)
		res.Scores += int64(n)
		if err != nil {
			return err
		}
	} else {
		for _, sc := range scores {
			if err := dst.AddScore(ctx, sc); err != nil {
				return err
			}
			res.Scores++
		}
	}
	for _, s := range scores {
		// What was written is done: a subject met twice in one run (a
		// file that holds a call twice) is judged once.
		done[[2]string{target(s.CallID, s.TraceID), s.Author}] = true
	}
	return ctx.Err()
}

// Err returns the run's failures as one error, nil when none failed.
func (r RunResult) Err() error {
	if r.Failed == 0 {
		return nil
	}
	return fmt.Errorf("eval: %d evaluations failed: %w", r.Failed, errors.Join(r.Errors...))
}
