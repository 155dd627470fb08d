package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Tag marks the calls an evaluator made itself (a judge's): their records
// carry it, and no evaluation here ever judges a record that does, so a
// judge is never judged.
const Tag = "llmhistory.eval"

// Evaluator judges a call, or a conversation, and gives scores.
//
// An Evaluator is shared by every call of a run, online or offline, so it
// must be safe for concurrent use; the built-in ones are.
type Evaluator interface {
	// Info says what the evaluator is: its name, version, source and
	// scope. It is asked once, and must not change.
	Info() Info
	// Evaluate judges s and returns its scores, each with Name and Value
	// set, and a Comment when there is something to say: [Score] fills in
	// the rest (the target, source, author and time). No score and no
	// error means there was nothing to judge (a call without output for a
	// check of its output, a failed call). An error is the evaluator's
	// failure (a judge that timed out or gave a verdict it cannot read),
	// never a low score.
	Evaluate(ctx context.Context, s Subject) ([]store.Score, error)
}

// Info describes an [Evaluator].
type Info struct {
	// Name identifies the evaluator; its scores are named after it unless
	// it says otherwise.
	Name string
	// Version changes whenever what the evaluator judges changes (a new
	// rubric, a new schema), so that its scores are not taken for those
	// of the version before: a store keeps one score per call, name and
	// author, and the author is NAME@VERSION.
	Version string
	// Source is store.SourceCode for a deterministic check,
	// store.SourceModel for a judge.
	Source store.Source
	// Conversation says that the evaluator judges whole conversations:
	// its scores go on the trace. Otherwise it judges calls one by one.
	Conversation bool
}

// Author is the author of the evaluator's scores: NAME@VERSION.
func (i Info) Author() string { return i.Name + "@" + i.Version }

// Subject is what an evaluator judges.
type Subject struct {
	// Records is the call alone, or, for an evaluator of conversations,
	// the conversation's records, oldest first.
	Records []record.Record
}

// Call returns the call judged: the only record, or a conversation's
// last. It is nil when there is none.
func (s Subject) Call() *record.Record {
	if len(s.Records) == 0 {
		return nil
	}
	return &s.Records[len(s.Records)-1]
}

// IsEvaluation reports whether r is a call an evaluator made (it carries
// [Tag]): such a call is never judged.
func IsEvaluation(r *record.Record) bool { return slices.Contains(r.Tags, Tag) }

// Errors of evaluation.
var (
	// ErrVerdict: a judge answered, but not with a verdict it could read
	// (not the JSON asked for, a score out of its range, a category not
	// in the rubric). It is never turned into a score.
	ErrVerdict = errors.New("eval: the judge's verdict cannot be read")
	// ErrRefused: the judge refused to judge.
	ErrRefused = errors.New("eval: the judge refused")
	// ErrBudget: a run's cost bound was reached; the judges stop.
	ErrBudget = errors.New("eval: cost bound reached")
)

// Score runs e on s and returns its scores completed: on the call judged
// (and its trace), or, for an evaluator of conversations, on the trace;
// with the evaluator's source, NAME@VERSION as author, now as time, and
// the evaluator's name where a score has none. Every score is checked
// ([store.Score.Validate]). A subject made by an evaluator ([IsEvaluation])
// gets none.
func Score(ctx context.Context, e Evaluator, s Subject) ([]store.Score, error) {
	info := e.Info()
	call := s.Call()
	if call == nil || IsEvaluation(call) {
		return nil, nil
	}
	scores, err := safeEvaluate(ctx, e, s)
	if err != nil {
		return nil, fmt.Errorf("eval: %s on %s: %w", info.Author(), call.CallID, err)
	}
	now := time.Now().UTC()
	for i := range scores {
		sc := &scores[i]
		if info.Conversation {
			sc.CallID, sc.TraceID = "", call.TraceID
		} else {
			sc.CallID, sc.TraceID = call.CallID, call.TraceID
		}
		if sc.Name == "" {
			sc.Name = info.Name
		}
		sc.Source, sc.Author = info.Source, info.Author()
		if sc.Time.IsZero() {
			sc.Time = now
		}
		if err := sc.Validate(); err != nil {
			return nil, fmt.Errorf("eval: %s on %s: %w", info.Author(), call.CallID, err)
		}
	}
	return scores, nil
}

// safeEvaluate calls e.Evaluate, turning a panic into an error: an
// evaluator of one's own that panics costs its own score, nothing more.
func safeEvaluate(ctx context.Context, e Evaluator, s Subject) (scores []store.Score, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("eval: evaluator panicked: %v", p)
		}
	}()
	return e.Evaluate(ctx, s)
}

// ScoreSink takes scores: a [*store.Store] and a [*store.ScoreJSONL] both
// are one.
type ScoreSink interface {
	AddScore(ctx context.Context, sc store.Score) error
}
