package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Source says who gave a score.
type Source string

// The sources of a score.
const (
	SourceHuman Source = "human" // a person: a user's thumbs, a reviewer's annotation
	SourceCode  Source = "code"  // a deterministic check (package eval's code evaluators)
	SourceModel Source = "model" // a model judging another (an LLM-as-judge)
)

// Score is a judgement of a call or of a conversation: a thumbs-up from
// the application's user, a check that the answer is valid JSON, a judge
// model's 0.8 for helpfulness, a reviewer's "off_topic".
//
// A score is on a call when CallID is set, and on a conversation (a
// trace) when only TraceID is. A store keeps one score per target, name
// and author: adding the same again replaces it (a user who changes a
// thumbs-up to a thumbs-down has one score, the latest), and an evaluator
// of one version run twice over a call gives one score, not two.
type Score struct {
	// CallID is the call scored; "" for a conversation's score.
	CallID string `json:"call_id,omitempty"`
	// TraceID is the conversation scored, when CallID is "". A call's
	// score may name its call's trace too; nothing depends on it.
	TraceID string `json:"trace_id,omitempty"`
	// Name is what is judged: "thumbs", "helpfulness", "json_valid".
	Name    string `json:"name"`
	Value   Value  `json:"value"`
	Comment string `json:"comment,omitempty"`
	Source  Source `json:"source"`
	// Author is who gave it: an evaluator as NAME@VERSION (package eval
	// writes it so), or a person's or an application's name. Scores of
	// different authors on one target are kept side by side.
	Author string    `json:"author,omitempty"`
	Time   time.Time `json:"time"`
}

// Bounds of a score's text fields, in bytes.
const (
	MaxScoreName    = 200
	MaxScoreAuthor  = 200
	MaxScoreComment = 4096
	MaxScoreLabel   = 200 // a category's name
)

// ErrBadScore: a score [Score.Validate] refuses.
var ErrBadScore = errors.New("store: invalid score")

// Validate reports what makes the score unfit to keep: no target, no
// name, no value, an unknown source, text too long or not UTF-8.
func (sc *Score) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadScore, fmt.Sprintf(format, a...))
	}
	switch {
	case sc.CallID == "" && sc.TraceID == "":
		return bad("it names neither a call nor a conversation (call_id, trace_id)")
	case sc.Name == "":
		return bad("it has no name")
	case sc.Value.Kind() == NoValue:
		return bad("%q has no value", sc.Name)
	}
	switch sc.Source {
	case SourceHuman, SourceCode, SourceModel:
	default:
		return bad("source %q is not human, code or model", sc.Source)
	}
	for _, f := range []struct {
		field, s string
		max      int
	}{
		{"call_id", sc.CallID, MaxScoreName},
		{"trace_id", sc.TraceID, MaxScoreName},
		{"name", sc.Name, MaxScoreName},
		{"author", sc.Author, MaxScoreAuthor},
		{"comment", sc.Comment, MaxScoreComment},
		{"value", sc.Value.label, MaxScoreLabel},
	} {
		if len(f.s) > f.max {
			return bad("its %s is %d bytes, more than %d", f.field, len(f.s), f.max)
		}
		if !utf8.ValidString(f.s) {
			return bad("its %s is not UTF-8", f.field)
		}
	}
	return nil
}

// ValueKind is the kind of a score's value.
type ValueKind uint8

// The kinds of value.
const (
	NoValue       ValueKind = iota // the zero Value: not set
	NumberValue                    // a number: 0.8, 4
	BoolValue                      // true or false: a thumbs-up or down, a check passed or failed
	CategoryValue                  // a label: "off_topic", "refusal"
)

func (k ValueKind) String() string {
	switch k {
	case NumberValue:
		return "number"
	case BoolValue:
		return "boolean"
	case CategoryValue:
		return "category"
	}
	return "none"
}

// Value is a score's value: a number, a boolean or a category. Make one
// with [Number], [Bool] or [Category]. In JSON it is a number, true or
// false, or a string.
type Value struct {
	kind  ValueKind
	num   float64 // the number; 1 or 0 for a boolean
	label string  // the category
}

// Number returns a numeric value. NaN and infinities are no value.
func Number(f float64) Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}
	}
	return Value{kind: NumberValue, num: f}
}

// Bool returns a boolean value.
func Bool(b bool) Value {
	if b {
		return Value{kind: BoolValue, num: 1}
	}
	return Value{kind: BoolValue}
}

// Category returns a categorical value; "" is no value.
func Category(label string) Value {
	if label == "" {
		return Value{}
	}
	return Value{kind: CategoryValue, label: label}
}

// Kind returns the kind of the value.
func (v Value) Kind() ValueKind { return v.kind }

// Float returns the value as a number: the number itself, 1 for true and
// 0 for false, so that a boolean's mean is the share of true. A category
// has none: ok is false.
func (v Value) Float() (f float64, ok bool) {
	return v.num, v.kind == NumberValue || v.kind == BoolValue
}

// Label returns a category's label, "" for other kinds.
func (v Value) Label() string { return v.label }

// String returns the value as a person reads it: "0.8", "true", "off_topic".
func (v Value) String() string {
	switch v.kind {
	case NumberValue:
		return strconv.FormatFloat(v.num, 'g', -1, 64)
	case BoolValue:
		return strconv.FormatBool(v.num != 0)
	case CategoryValue:
		return v.label
	}
	return ""
}

// MarshalJSON writes a number, true or false, a string, or null for no
// value.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case NumberValue:
		return strconv.AppendFloat(nil, v.num, 'g', -1, 64), nil
	case BoolValue:
		return []byte(strconv.FormatBool(v.num != 0)), nil
	case CategoryValue:
		return json.Marshal(v.label)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads what MarshalJSON writes; any other JSON is an error.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return fmt.Errorf("%w: an empty value", ErrBadScore)
	case string(b) == "null":
		*v = Value{}
	case string(b) == "true" || string(b) == "false":
		*v = Bool(b[0] == 't')
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%w: value %s: %v", ErrBadScore, b, err)
		}
		*v = Category(s)
	default:
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || !json.Valid(b) {
			return fmt.Errorf("%w: value %.40s is not a number, a boolean or a string", ErrBadScore, b)
		}
		if *v = Number(f); v.kind == NoValue {
			return fmt.Errorf("%w: value %.40s is out of range", ErrBadScore, b)
		}
	}
	return nil
}
