package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Check returns a code evaluator of calls made of f, which judges one
// record: its value, a comment, and ok false when there is nothing to
// judge. The built-in code evaluators are made with it.
func Check(name, version string, f func(r *record.Record) (v store.Value, comment string, ok bool)) Evaluator {
	return &check{info: Info{Name: name, Version: version, Source: store.SourceCode}, f: f}
}

type check struct {
	info Info
	f    func(r *record.Record) (store.Value, string, bool)
}

func (c *check) Info() Info { return c.info }

func (c *check) Evaluate(_ context.Context, s Subject) ([]store.Score, error) {
	r := s.Call()
	if r == nil {
		return nil, nil
	}
	v, comment, ok := c.f(r)
	if !ok {
		return nil, nil
	}
	return []store.Score{{Name: c.info.Name, Value: v, Comment: comment}}, nil
}

// output returns the text a call answered with, and whether there is one
// to judge: a call that failed, or whose output was not kept
// (middleware.WithoutOutput) or had no text, has none.
func output(r *record.Record) (string, bool) {
	text := r.Output.Text()
	return text, r.Outcome.OK && text != ""
}

// digest is a version made from what configures an evaluator (a schema,
// a pattern): a change of it is a new version by itself.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// JSONValid returns the evaluator "json_valid": true when a call's output
// is one JSON document, as a program that parses it needs (a Markdown
// fence around it fails), false with the parser's complaint otherwise.
// Calls without output are not judged.
func JSONValid() Evaluator {
	return Check("json_valid", "1", func(r *record.Record) (store.Value, string, bool) {
		out, ok := output(r)
		if !ok {
			return store.Value{}, "", false
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			return store.Bool(false), err.Error(), true
		}
		return store.Bool(true), "", true
	})
}

// JSONSchema returns an evaluator named name (default "json_schema"):
// true when a call's output is JSON valid against schema (a JSON Schema,
// draft 2020-12 unless its $schema says another), false with the first
// violation otherwise. Its version is a digest of the schema, so that a
// changed schema's scores are told from the old one's. The schema may
// refer only to itself: no file or URL is ever loaded.
func JSONSchema(name string, schema []byte) (Evaluator, error) {
	if name == "" {
		name = "json_schema"
	}
	sch, err := compileSchema(name, schema)
	if err != nil {
		return nil, err
	}
	return Check(name, digest(string(schema)), func(r *record.Record) (store.Value, string, bool) {
		out, ok := output(r)
		if !ok {
			return store.Value{}, "", false
		}
		if err := sch.validate([]byte(out)); err != nil {
			return store.Bool(false), err.Error(), true
		}
		return store.Bool(true), "", true
	}), nil
}

// Regex returns an evaluator named name (default "regex"): true when a
// call's output matches pattern (RE2 syntax; (?i) for any case), false
// otherwise.
func Regex(name, pattern string) (Evaluator, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("eval: regex %s: %w", name, err)
	}
	if name == "" {
		name = "regex"
	}
	return Check(name, digest(pattern), func(r *record.Record) (store.Value, string, bool) {
		out, ok := output(r)
		if !ok {
			return store.Value{}, "", false
		}
		return store.Bool(re.MatchString(out)), "", true
	}), nil
}

// Contains returns an evaluator named name (default "contains"): true
// when a call's output contains text, byte for byte.
func Contains(name, text string) Evaluator {
	if name == "" {
		name = "contains"
	}
	return Check(name, digest(text), func(r *record.Record) (store.Value, string, bool) {
		out, ok := output(r)
		if !ok {
			return store.Value{}, "", false
		}
		return store.Bool(strings.Contains(out, text)), "", true
	})
}

// Latency returns the evaluator "latency_ok": true when a call took at
// most max (its duration_ms, over all its attempts), false otherwise,
// with the duration in the comment. Calls without a duration are not
// judged.
func Latency(max time.Duration) Evaluator {
	bound := float64(max) / float64(time.Millisecond)
	return Check("latency_ok", max.String(), func(r *record.Record) (store.Value, string, bool) {
		if r.DurationMS <= 0 {
			return store.Value{}, "", false
		}
		return store.Bool(r.DurationMS <= bound), strconv.FormatFloat(r.DurationMS, 'f', 0, 64) + " ms, bound " + max.String(), true
	})
}

// Cost returns the evaluator "cost_ok": true when a call cost at most
// maxUSD, false otherwise, with the price in the comment. Calls that were
// not priced are not judged.
func Cost(maxUSD float64) Evaluator {
	bound := strconv.FormatFloat(maxUSD, 'f', -1, 64)
	return Check("cost_ok", bound, func(r *record.Record) (store.Value, string, bool) {
		if r.Cost == nil {
			return store.Value{}, "", false
		}
		return store.Bool(r.Cost.USD <= maxUSD), "$" + strconv.FormatFloat(r.Cost.USD, 'f', -1, 64) + ", bound $" + bound, true
	})
}

// The categories of [Answer].
const (
	Answered = "answered" // the model answered: text or tool calls
	Empty    = "empty"    // it gave no text and no tool call
	Refusal  = "refusal"  // it declined, or a content filter stopped it
)

// Answer returns the evaluator "answer", whose value is a category:
// [Refusal] when a content filter stopped the call (its finish reason or
// error type says content_filter), the answer holds a refusal (an OpenAI
// model's refusal part) or its text begins as a refusal does
// ("I'm sorry, but I can't", "I cannot help with"...: English phrases
// only, in the first 200 bytes); [Empty] when the model produced nothing
// visible (no output token beyond its reasoning); [Answered] otherwise.
// A call that failed otherwise, or whose output was not kept while it
// had some, is not judged.
func Answer() Evaluator {
	return Check("answer", "1", func(r *record.Record) (store.Value, string, bool) {
		if providers.FinishReason(r.Outcome.FinishReason) == "content_filter" || r.FailureType() == record.ErrorContentFilter {
			return store.Category(Refusal), "content filter", true
		}
		if !r.Outcome.OK {
			return store.Value{}, "", false
		}
		text, calls := r.Output.Text(), r.Output.Has(record.PartToolCall)
		if r.Output == nil {
			if r.Usage != nil && r.Usage.OutputTokens-r.Usage.ReasoningTokens <= 0 {
				return store.Category(Empty), "", true
			}
			return store.Value{}, "", false // output not kept: nothing to judge
		}
		if r.Output.Has(record.PartRefusal) {
			return store.Category(Refusal), "refusal", true
		}
		if strings.TrimSpace(text) == "" && !calls {
			return store.Category(Empty), "", true
		}
		if phrase, ok := refusing(text); ok {
			return store.Category(Refusal), phrase, true
		}
		return store.Category(Answered), "", true
	})
}

// refusals are how answers that decline usually begin, lower case, with
// the typographic apostrophe folded to the plain one.
var refusals = []string{
	"i'm sorry, but i can't", "i'm sorry, but i cannot", "i'm sorry, i can't", "i'm sorry, i cannot",
	"i am sorry, but i cannot", "i apologize, but i can't", "i apologize, but i cannot",
	"i can't help with", "i cannot help with", "i can't assist with", "i cannot assist with",
	"i can't provide", "i cannot provide", "i can't comply", "i cannot comply",
	"i'm not able to help", "i am not able to help", "i'm unable to help", "i am unable to help",
	"i'm unable to assist", "i am unable to assist", "i won't be able to help", "i must decline",
	"sorry, i can't", "sorry, but i can't",
}

// refusing reports whether text begins (in its first 200 bytes) with a
// refusal, and which.
func refusing(text string) (string, bool) {
	head := text[:min(len(text), 200)]
	head = strings.ToLower(strings.ReplaceAll(head, "\u2019", "'"))
	for _, p := range refusals {
		if strings.Contains(head, p) {
			return p, true
		}
	}
	return "", false
}
