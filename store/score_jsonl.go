package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// ScoreVersion is the version of the score line format: every line of a
// scores file carries "object": "score" and "version": 1.
const ScoreVersion = 1

// ScoresPath returns where the scores of the JSONL history at path are
// kept: beside it, "h.jsonl" → "h.scores.jsonl". A scores file is not a
// history: a reader of records refuses its lines, and one of scores the
// history's.
func ScoresPath(historyPath string) string {
	return strings.TrimSuffix(historyPath, ".jsonl") + ".scores.jsonl"
}

// scoreLine is a score as a line of a scores file.
type scoreLine struct {
	Object  string `json:"object"`
	Version int    `json:"version"`
	Score
}

// AppendScoreJSON appends sc as one line of a scores file, without its
// newline.
func AppendScoreJSON(dst []byte, sc Score) []byte {
	sc.Time = sc.Time.UTC()
	b, err := json.Marshal(scoreLine{Object: "score", Version: ScoreVersion, Score: sc})
	if err != nil {
		// Every field is a string, a time or a Value, whose MarshalJSON
		// cannot fail on a value its constructors made.
		panic("store: encode score: " + err.Error())
	}
	return append(dst, b...)
}

// ErrNotScore: a line of a scores file that is not a score of a version
// this package reads.
var ErrNotScore = errors.New("store: not a score")

// DecodeScoreLine reads one line of a scores file. It is strict: the line
// is a JSON object with "object": "score", a version this package reads,
// and the fields of a valid score ([Score.Validate]); unknown fields are
// ignored, as a later version may add some.
func DecodeScoreLine(line []byte) (Score, error) {
	line = bytes.TrimSpace(line)
	var l struct {
		Object  string `json:"object"`
		Version int    `json:"version"`
		Score
		Time *time.Time `json:"time"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return Score{}, fmt.Errorf("%w: %v", ErrNotScore, err)
	}
	switch {
	case l.Object != "score":
		return Score{}, fmt.Errorf("%w: its object is %q, not \"score\"", ErrNotScore, l.Object)
	case l.Version < 1 || l.Version > ScoreVersion:
		return Score{}, fmt.Errorf("%w: version %d (this llmhistory reads 1 to %d)", ErrNotScore, l.Version, ScoreVersion)
	case l.Time == nil:
		return Score{}, fmt.Errorf("%w: it has no time", ErrNotScore)
	}
	sc := l.Score
	sc.Time = l.Time.UTC()
	if err := sc.Validate(); err != nil {
		return Score{}, err
	}
	return sc, nil
}

// IsScoreLine reports whether line is a score (one of a scores file),
// so that a command handed a file can tell scores from records by the
// first line.
func IsScoreLine(line []byte) bool {
	_, err := DecodeScoreLine(line)
	return err == nil
}

// ScoreReader reads a scores file one score at a time.
type ScoreReader struct {
	br   *bufio.Reader
	line int
	err  error // sticky: io.EOF or a read error
}

// NewScoreReader returns a reader of the scores file r.
func NewScoreReader(r io.Reader) *ScoreReader {
	return &ScoreReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Read returns the next score; io.EOF at the end of the input; for a line
// that is not a score, a *[record.LineError] with its number, and the
// next Read goes on past it. A torn last line (a crash in mid-write) is
// skipped.
func (sr *ScoreReader) Read() (Score, error) {
	for sr.err == nil {
		line, err := sr.br.ReadBytes('\n')
		if err != nil {
			sr.err = err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		sr.line++
		sc, derr := DecodeScoreLine(line)
		switch {
		case derr == nil:
			return sc, nil
		case err != nil && bytes.TrimSpace(line)[0] == '{' && !json.Valid(line):
			continue // torn: the writer was cut in mid-line
		}
		return Score{}, &record.LineError{Line: sr.line, Err: derr}
	}
	return Score{}, sr.err
}

// ReadScores reads every score of a scores file. A line that is not a
// score is skipped and reported, with its number, as a *[record.LineError]
// in the returned error (the first 20), while every valid score is
// returned. Scores come in the order of the file, every line:
// [LatestScores] keeps one per target, name and author, as a store does.
func ReadScores(r io.Reader) ([]Score, error) {
	var out []Score
	var errs []error
	sr := NewScoreReader(r)
	for {
		sc, err := sr.Read()
		if err == io.EOF {
			break
		}
		var le *record.LineError
		switch {
		case err == nil:
			out = append(out, sc)
			continue
		case errors.As(err, &le):
			if len(errs) < 20 {
				errs = append(errs, err)
			}
			continue
		}
		errs = append(errs, err)
		break
	}
	return out, errors.Join(errs...)
}

// scoreKey is what makes a score the same as another: its target, name
// and author. A store keeps one score per key.
type scoreKey struct{ target, name, author string }

func (sc *Score) key() scoreKey {
	return scoreKey{sc.target(), sc.Name, sc.Author}
}

// target is the scored call ("c:" and its ID) or conversation ("t:").
func (sc *Score) target() string {
	if sc.CallID != "" {
		return "c:" + sc.CallID
	}
	return "t:" + sc.TraceID
}

// LatestScores keeps, of scores in the order they were given, the last of
// each target, name and author, as a store keeps them: in the order of
// their last appearance.
func LatestScores(scores []Score) []Score {
	last := make(map[scoreKey]int, len(scores))
	for i := range scores {
		last[scores[i].key()] = i
	}
	out := make([]Score, 0, len(last))
	for i := range scores {
		if last[scores[i].key()] == i {
			out = append(out, scores[i])
		}
	}
	return out
}

// ScoreJSONL writes scores to a scores file, one line each, in whole
// lines. It is safe for concurrent use, and has AddScore as a [*Store]
// does, so that an evaluator or an application writes to either.
type ScoreJSONL struct {
	mu  sync.Mutex
	w   *bufio.Writer
	c   io.Closer // the file, when OpenScoreJSONL opened it
	buf []byte
}

// NewScoreJSONL returns a writer of scores to w. Close flushes it.
func NewScoreJSONL(w io.Writer) *ScoreJSONL {
	return &ScoreJSONL{w: bufio.NewWriter(w)}
}

// OpenScoreJSONL appends to the scores file at path, creating it (0600).
func OpenScoreJSONL(path string) (*ScoreJSONL, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open scores: %w", err)
	}
	j := NewScoreJSONL(f)
	j.c = f
	return j, nil
}

// AddScore writes sc as one line, after checking it ([Score.Validate]).
// A zero Time is the present.
func (j *ScoreJSONL) AddScore(_ context.Context, sc Score) error {
	if sc.Time.IsZero() {
		sc.Time = time.Now()
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf = append(AppendScoreJSON(j.buf[:0], sc), '\n')
	if j.w.Available() < len(j.buf) && j.w.Buffered() > 0 {
		if err := j.w.Flush(); err != nil {
			return fmt.Errorf("store: write score: %w", err)
		}
	}
	if _, err := j.w.Write(j.buf); err != nil {
		return fmt.Errorf("store: write score: %w", err)
	}
	return nil
}

// Flush writes what is buffered.
func (j *ScoreJSONL) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

// Close flushes, and closes the file OpenScoreJSONL opened.
func (j *ScoreJSONL) Close() error {
	err := j.Flush()
	if j.c != nil {
		if cerr := j.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
