package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/llmhistory/llmhistory/store"
)

// Rules say what to judge and how: a filter, evaluators and a budget for
// the judges. [ParseRules] reads them from a small JSON file:
//
//	{
//	  "filter": {"since": "24h", "tags": ["checkout"], "scores": ["!helpfulness"]},
//	  "evaluators": [
//	    {"type": "json_valid"},
//	    {"type": "json_schema", "name": "order", "schema_file": "order.schema.json"},
//	    {"type": "tool_args", "tools_file": "tools.json"},
//	    {"type": "regex", "name": "order_id", "pattern": "ORD-[0-9]+"},
//	    {"type": "contains", "name": "apology", "text": "sorry"},
//	    {"type": "latency", "max": "2s"},
//	    {"type": "cost", "max_usd": 0.01},
//	    {"type": "answer"},
//	    {"type": "judge", "name": "helpfulness", "rubric": "The answer solves the user's problem.",
//	     "scale": {"kind": "number", "min": 0, "max": 1}, "model": "gpt-4o-mini",
//	     "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"}
//	  ],
//	  "budget": {"max_usd": 1, "max_calls": 500}
//	}
//
// Files named are read relative to the rules file. "schema" and "tools"
// may hold the JSON itself instead. A judge's "scale" kind is number
// (min, max), boolean, or category (categories); "conversation": true
// judges whole conversations; "template" and "system" replace the
// prompt; its key is read from the environment variable api_key_env,
// never from the file.
type Rules struct {
	Filter     store.Filter
	Evaluators []Evaluator
	Budget     *Budget
}

// RulesOptions is what [ParseRules] needs beyond the file.
type RulesOptions struct {
	// Dir is where files the rules name are read from.
	Dir string
	// Client sends the judges' calls: the recorder's, so that they are
	// recorded. Nil is http.DefaultClient.
	Client *http.Client
	// Getenv reads a judge's key; nil is os.Getenv.
	Getenv func(string) string
	// Now is the present, for "since": "24h"; zero is time.Now().
	Now time.Time
}

// ErrRules: a rules file that cannot be used.
var ErrRules = errors.New("eval: invalid rules")

type rulesFile struct {
	Filter *struct {
		Since, Until                         string
		User, Trace, Model, Provider, Method string
		Status                               string
		ErrorType                            string `json:"error_type"`
		Tags                                 []string
		Metadata                             map[string]string
		Text                                 string
		Scores                               []string
		MinCostUSD                           float64 `json:"min_cost_usd"`
		MinDuration                          string  `json:"min_duration"`
	}
	Evaluators []rule
	Budget     *struct {
		MaxUSD   float64 `json:"max_usd"`
		MaxCalls int     `json:"max_calls"`
	}
}

type rule struct {
	Type       string
	Name       string
	Schema     json.RawMessage
	SchemaFile string `json:"schema_file"`
	Tools      json.RawMessage
	ToolsFile  string `json:"tools_file"`
	Pattern    string
	Text       string
	Max        string
	MaxUSD     float64 `json:"max_usd"`
	// a judge's
	Rubric string
	Scale  *struct {
		Kind       string
		Min, Max   float64
		Categories []string
	}
	Model        string
	BaseURL      string `json:"base_url"`
	APIKeyEnv    string `json:"api_key_env"`
	Version      string
	System       string
	Template     string
	Conversation bool
	Timeout      string
	PlainText    bool `json:"plain_text"`
}

// ParseRules reads rules. Unknown keys are refused, so that a misspelt
// one is not silently ignored.
func ParseRules(data []byte, o RulesOptions) (*Rules, error) {
	var f rulesFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRules, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrRules)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	r := &Rules{}
	if f.Filter != nil {
		ff := f.Filter
		var err error
		if r.Filter.Since, err = when(ff.Since, o.Now); err != nil {
			return nil, fmt.Errorf("%w: filter.since: %v", ErrRules, err)
		}
		if r.Filter.Until, err = when(ff.Until, o.Now); err != nil {
			return nil, fmt.Errorf("%w: filter.until: %v", ErrRules, err)
		}
		r.Filter.UserID, r.Filter.TraceID, r.Filter.Model, r.Filter.Provider = ff.User, ff.Trace, ff.Model, ff.Provider
		r.Filter.Method, r.Filter.Status, r.Filter.ErrorType = ff.Method, ff.Status, ff.ErrorType
		r.Filter.Tags, r.Filter.Metadata, r.Filter.Text, r.Filter.MinCostUSD = ff.Tags, ff.Metadata, ff.Text, ff.MinCostUSD
		if ff.MinDuration != "" {
			if r.Filter.MinDuration, err = time.ParseDuration(ff.MinDuration); err != nil {
				return nil, fmt.Errorf("%w: filter.min_duration: %v", ErrRules, err)
			}
		}
		for _, s := range ff.Scores {
			sf, err := store.ParseScoreFilter(s)
			if err != nil {
				return nil, fmt.Errorf("%w: filter.scores: %v", ErrRules, err)
			}
			r.Filter.Scores = append(r.Filter.Scores, sf)
		}
	}
	if f.Budget != nil {
		r.Budget = &Budget{MaxUSD: f.Budget.MaxUSD, MaxCalls: f.Budget.MaxCalls}
	}
	for i, ru := range f.Evaluators {
		e, err := ru.evaluator(o, r.Budget)
		if err != nil {
			return nil, fmt.Errorf("%w: evaluators[%d] (%s): %v", ErrRules, i, ru.Type, err)
		}
		r.Evaluators = append(r.Evaluators, e)
	}
	if len(r.Evaluators) == 0 {
		return nil, fmt.Errorf("%w: no evaluators", ErrRules)
	}
	return r, nil
}

// when reads a time (RFC 3339, or a date) or a duration back from now.
func when(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a time (2026-11-23, 2026-11-23T10:00:00Z) nor a duration (24h)", s)
}

// inline returns the JSON given inline, or read from file.
func inline(raw json.RawMessage, file, dir, what string) ([]byte, error) {
	switch {
	case len(raw) > 0 && file != "":
		return nil, fmt.Errorf("give %s or %s_file, not both", what, what)
	case len(raw) > 0:
		return raw, nil
	case file != "":
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		return os.ReadFile(file)
	}
	return nil, fmt.Errorf("%s or %s_file is needed", what, what)
}

func (ru rule) evaluator(o RulesOptions, budget *Budget) (Evaluator, error) {
	switch ru.Type {
	case "json_valid":
		return JSONValid(), nil
	case "json_schema":
		b, err := inline(ru.Schema, ru.SchemaFile, o.Dir, "schema")
		if err != nil {
			return nil, err
		}
		return JSONSchema(ru.Name, b)
	case "tool_args":
		b, err := inline(ru.Tools, ru.ToolsFile, o.Dir, "tools")
		if err != nil {
			return nil, err
		}
		return ToolArgs(b)
	case "regex":
		if ru.Pattern == "" {
			return nil, errors.New("pattern is needed")
		}
		return Regex(ru.Name, ru.Pattern)
	case "contains":
		if ru.Text == "" {
			return nil, errors.New("text is needed")
		}
		return Contains(ru.Name, ru.Text), nil
	case "latency":
		d, err := time.ParseDuration(ru.Max)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("max must be a positive duration (2s), not %q", ru.Max)
		}
		return Latency(d), nil
	case "cost":
		if ru.MaxUSD <= 0 {
			return nil, errors.New("max_usd must be positive")
		}
		return Cost(ru.MaxUSD), nil
	case "answer":
		return Answer(), nil
	case "judge":
		return ru.judge(o, budget)
	}
	return nil, fmt.Errorf("unknown type %q (json_valid, json_schema, tool_args, regex, contains, latency, cost, answer, judge)", ru.Type)
}

func (ru rule) judge(o RulesOptions, budget *Budget) (Evaluator, error) {
	if ru.Scale == nil {
		return nil, errors.New(`scale is needed: {"kind": "number", "min": 0, "max": 1}, {"kind": "boolean"} or {"kind": "category", "categories": [...]}`)
	}
	var sc Scale
	switch ru.Scale.Kind {
	case "number":
		sc = Scale{Kind: store.NumberValue, Min: ru.Scale.Min, Max: ru.Scale.Max}
	case "boolean":
		sc = Scale{Kind: store.BoolValue}
	case "category":
		sc = Scale{Kind: store.CategoryValue, Categories: ru.Scale.Categories}
	default:
		return nil, fmt.Errorf("scale.kind must be number, boolean or category, not %q", ru.Scale.Kind)
	}
	if ru.Model == "" {
		return nil, errors.New("model is needed")
	}
	var timeout time.Duration
	if ru.Timeout != "" {
		var err error
		if timeout, err = time.ParseDuration(ru.Timeout); err != nil {
			return nil, fmt.Errorf("timeout: %v", err)
		}
	}
	key := ""
	if ru.APIKeyEnv != "" {
		if key = o.Getenv(ru.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("the environment variable %s (api_key_env) is not set", ru.APIKeyEnv)
		}
	}
	m := &OpenAIModel{Client: o.Client, BaseURL: ru.BaseURL, APIKey: key, Model: ru.Model, PlainText: ru.PlainText}
	return NewJudge(JudgeOptions{
		Name: ru.Name, Version: ru.Version, Rubric: ru.Rubric, Scale: sc, System: ru.System, Template: ru.Template,
		Model: m, ModelName: ru.Model, Conversation: ru.Conversation, Timeout: timeout, Budget: budget,
	})
}
