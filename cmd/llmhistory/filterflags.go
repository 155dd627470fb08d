package main

import (
	"flag"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/store"
)

// filterFlags are the flags that select records, shared by the commands
// that read a store (query, eval): defined once, so that they mean the
// same everywhere.
type filterFlags struct {
	f            store.Filter
	since, until string
	tags, meta   listFlag
	scores       listFlag
}

// filterFlagsOn defines the filter flags on fs.
func filterFlagsOn(fs *flag.FlagSet) *filterFlags {
	ff := &filterFlags{}
	f := &ff.f
	fs.StringVar(&ff.since, "since", "", "records at or after this `time` or this long ago")
	fs.StringVar(&ff.until, "until", "", "records before this `time` or this long ago")
	fs.StringVar(&f.UserID, "user", "", "records of this user `id`")
	fs.StringVar(&f.TraceID, "trace", "", "records of this `trace` (conversation)")
	fs.StringVar(&f.Model, "model", "", "records of this `model`")
	fs.StringVar(&f.Provider, "provider", "", "records of this `provider` (openai, gemini, anthropic, ...)")
	fs.StringVar(&f.Method, "method", "", "records of this `method_name`")
	fs.StringVar(&f.Status, "status", "", "records whose outcome is this `status`: ok, error or canceled")
	fs.StringVar(&f.ErrorType, "error-type", "", "records that failed with this error `type`")
	fs.Float64Var(&f.MinCostUSD, "min-cost", 0, "records that cost at least this many US `dollars`")
	fs.DurationVar(&f.MinDuration, "min-duration", 0, "records that took at least this `long`")
	fs.StringVar(&f.Text, "text", "", "records where these `words` entered their conversation, or in their output")
	fs.Var(&ff.tags, "tag", "records with this `tag` (may be given several times)")
	fs.Var(&ff.meta, "meta", "records with this metadata `key=value` (may be given several times)")
	fs.Var(&ff.scores, "score", "records with a score, or a conversation with one, that holds: `NAME<0.5`, NAME=true, NAME=LABEL, NAME (any), !NAME (none) (may be given several times)")
	return ff
}

// given reports whether any filter flag was set.
func (ff *filterFlags) given() bool {
	f, err := ff.filter(time.Now())
	return err != nil || !emptyFilter(f)
}

// emptyFilter reports whether f selects every record.
func emptyFilter(f store.Filter) bool { return reflect.DeepEqual(f, store.Filter{}) }

// filter returns the filter the flags say; an error names the flag.
func (ff *filterFlags) filter(now time.Time) (store.Filter, error) {
	f := ff.f
	var err error
	if f.Since, err = parseWhen(ff.since, now); err != nil {
		return f, fmt.Errorf("-since: %v", err)
	}
	if f.Until, err = parseWhen(ff.until, now); err != nil {
		return f, fmt.Errorf("-until: %v", err)
	}
	f.Tags = ff.tags
	for _, kv := range ff.meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return f, fmt.Errorf("-meta wants KEY=VALUE, not %q", kv)
		}
		if f.Metadata == nil {
			f.Metadata = map[string]string{}
		}
		f.Metadata[k] = v
	}
	for _, s := range ff.scores {
		sf, err := store.ParseScoreFilter(s)
		if err != nil {
			return f, fmt.Errorf("-score: %v", err)
		}
		f.Scores = append(f.Scores, sf)
	}
	return f, nil
}
