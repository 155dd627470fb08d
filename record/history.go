package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
)

// HistoryKey is the key under which a context map holds the conversation
// history, as generated code reads it: context[:conversation_history].
const HistoryKey = "conversation_history"

// HistoryFrom loads the history stored under [HistoryKey] in m; see
// [NormalizeHistory]. A nil map or a missing key gives an empty history.
func HistoryFrom(m map[string]any, logger *slog.Logger) (records []Record, dropped int) {
	return NormalizeHistory(m[HistoryKey], logger)
}

// NormalizeHistory loads a history from untyped data: a value decoded from
// JSON, a slice a user built, a []Record. It always returns a non-nil slice
// and never fails:
//
//   - nil gives an empty history;
//   - a value that is not a list (a map, a string, a number) gives an empty
//     history and a debug line on logger;
//   - elements that are not records are dropped and counted in dropped, with
//     one debug line naming the first; the valid ones are kept in order.
//
// An element is a record when it is a [Record], a non-nil *Record, or an
// object (a map, a struct) with non-empty string "call_id" and
// "method_name", in which each required field that is present has its
// proper JSON type: strings for "timestamp" and "speaker", an array for
// "args", objects for "kwargs" and "outcome_summary". Missing args and
// kwargs become empty. A nil logger means [slog.Default].
func NormalizeHistory(v any, logger *slog.Logger) (records []Record, dropped int) {
	if logger == nil {
		logger = slog.Default()
	}
	records = []Record{}
	switch x := v.(type) {
	case nil:
		return records, 0
	case []Record:
		for _, r := range x {
			if err := checkRecord(&r); err != nil {
				dropped++
				logDropped(logger, dropped, len(records)+dropped-1, err)
				continue
			}
			c := r.Clone()
			c.Normalize()
			records = append(records, c)
		}
		return records, dropped
	case json.RawMessage:
		var decoded any
		if err := json.Unmarshal(x, &decoded); err != nil {
			logger.LogAttrs(context.Background(), slog.LevelDebug, "llmhistory: history is not valid JSON; using an empty history",
				slog.String("error", err.Error()))
			return records, 0
		}
		return NormalizeHistory(decoded, logger)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		logger.LogAttrs(context.Background(), slog.LevelDebug, "llmhistory: history is not a list; using an empty history",
			slog.String("type", rv.Type().String()))
		return records, 0
	}
	for i := range rv.Len() {
		r, err := historyElement(rv.Index(i).Interface())
		if err != nil {
			dropped++
			logDropped(logger, dropped, i, err)
			continue
		}
		records = append(records, r)
	}
	return records, dropped
}

// logDropped logs the first dropped element only: a history of a million
// bad elements must not write a million lines.
func logDropped(logger *slog.Logger, dropped, index int, err error) {
	if dropped != 1 {
		return
	}
	logger.LogAttrs(context.Background(), slog.LevelDebug, "llmhistory: dropping history elements that are not records",
		slog.Int("first_index", index), slog.String("reason", err.Error()))
}

var errNotObject = errors.New("not an object")

func historyElement(e any) (Record, error) {
	switch x := e.(type) {
	case Record:
		x = x.Clone()
		x.Normalize()
		return x, checkRecord(&x)
	case *Record:
		if x == nil {
			return Record{}, errNotObject
		}
		c := x.Clone()
		c.Normalize()
		return c, checkRecord(&c)
	}
	safe := Safe(e)
	obj, ok := safe.(map[string]any)
	if !ok {
		return Record{}, fmt.Errorf("%w: %s", errNotObject, Inspect(e))
	}
	for _, f := range []struct{ key, want string }{
		{"timestamp", "a string"}, {"speaker", "a string"}, {"args", "an array"},
		{"kwargs", "an object"}, {"outcome_summary", "an object"},
	} {
		v, present := obj[f.key]
		if !present || v == nil {
			continue
		}
		var ok bool
		switch f.want {
		case "a string":
			_, ok = v.(string)
		case "an array":
			_, ok = v.([]any)
		case "an object":
			_, ok = v.(map[string]any)
		}
		if !ok {
			return Record{}, fmt.Errorf("%s is not %s", f.key, f.want)
		}
	}
	var r Record
	if err := json.Unmarshal(appendSafe(nil, obj), &r); err != nil {
		return Record{}, err
	}
	return r, checkRecord(&r)
}

func checkRecord(r *Record) error {
	switch {
	case r.CallID == "":
		return errors.New("call_id is missing or empty")
	case r.MethodName == "":
		return errors.New("method_name is missing or empty")
	}
	return nil
}
