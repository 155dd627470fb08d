package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

func TestValueJSON(t *testing.T) {
	for _, tc := range []struct {
		v    store.Value
		json string
		kind store.ValueKind
	}{
		{store.Number(0.25), `0.25`, store.NumberValue},
		{store.Number(-3), `-3`, store.NumberValue},
		{store.Number(1e300), `1e+300`, store.NumberValue},
		{store.Bool(true), `true`, store.BoolValue},
		{store.Bool(false), `false`, store.BoolValue},
		{store.Category("off_topic"), `"off_topic"`, store.CategoryValue},
		{store.Category(`say "hi"`), `"say \"hi\""`, store.CategoryValue},
		{store.Value{}, `null`, store.NoValue},
		{store.Number(math.NaN()), `null`, store.NoValue},
		{store.Number(math.Inf(1)), `null`, store.NoValue},
		{store.Category(""), `null`, store.NoValue},
	} {
		b, err := json.Marshal(tc.v)
		require.NoError(t, err)
		assert.Equal(t, tc.json, string(b))
		var back store.Value
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tc.v, back)
		assert.Equal(t, tc.kind, back.Kind())
	}
	for _, bad := range []string{`[1]`, `{}`, `1e999`, `tru`, `"\x"`, `0x10`, `NaN`} {
		var v store.Value
		assert.Error(t, v.UnmarshalJSON([]byte(bad)), bad)
	}
	f, ok := store.Bool(true).Float()
	assert.True(t, ok)
	assert.Equal(t, 1.0, f)
	_, ok = store.Category("x").Float()
	assert.False(t, ok)
}

func TestScoreValidate(t *testing.T) {
	ok := store.Score{CallID: "c", Name: "thumbs", Value: store.Bool(true), Source: store.SourceHuman}
	require.NoError(t, ok.Validate())
	conv := ok
	conv.CallID, conv.TraceID = "", "t"
	require.NoError(t, conv.Validate())
	for name, change := range map[string]func(*store.Score){
		"no target":      func(s *store.Score) { s.CallID = "" },
		"no name":        func(s *store.Score) { s.Name = "" },
		"no value":       func(s *store.Score) { s.Value = store.Value{} },
		"unknown source": func(s *store.Score) { s.Source = "robot" },
		"no source":      func(s *store.Score) { s.Source = "" },
		"long comment":   func(s *store.Score) { s.Comment = strings.Repeat("x", store.MaxScoreComment+1) },
		"long label":     func(s *store.Score) { s.Value = store.Category(strings.Repeat("x", store.MaxScoreLabel+1)) },
		"bad UTF-8":      func(s *store.Score) { s.Author = "\xff" },
	} {
		s := ok
		change(&s)
		assert.ErrorIs(t, s.Validate(), store.ErrBadScore, name)
	}
}

func TestScoresFile(t *testing.T) {
	assert.Equal(t, "dir/h.scores.jsonl", store.ScoresPath("dir/h.jsonl"))
	assert.Equal(t, "h.scores.jsonl", store.ScoresPath("h"))

	path := filepath.Join(t.TempDir(), "h.scores.jsonl")
	w, err := store.OpenScoreJSONL(path)
	require.NoError(t, err)
	at := time.Date(2026, 11, 23, 10, 0, 0, 123000, time.FixedZone("x", 3600))
	scores := []store.Score{
		{CallID: "c1", TraceID: "t1", Name: "thumbs", Value: store.Bool(true), Comment: "great", Source: store.SourceHuman, Author: "user-42", Time: at},
		{TraceID: "t1", Name: "topic", Value: store.Category("billing"), Source: store.SourceHuman, Author: "ann", Time: at},
		{CallID: "c1", Name: "thumbs", Value: store.Bool(false), Source: store.SourceHuman, Author: "user-42", Time: at.Add(time.Second)},
		{CallID: "c2", Name: "helpfulness", Value: store.Number(0.5), Source: store.SourceModel, Author: "judge@1", Time: at},
	}
	for _, sc := range scores {
		require.NoError(t, w.AddScore(context.Background(), sc))
	}
	require.ErrorIs(t, w.AddScore(context.Background(), store.Score{Name: "x"}), store.ErrBadScore)
	require.NoError(t, w.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, `{"object":"score","version":1,"call_id":"c1","trace_id":"t1","name":"thumbs","value":true,"comment":"great","source":"human","author":"user-42","time":"2026-11-23T09:00:00.000123Z"}`, lines[0])
	assert.True(t, store.IsScoreLine([]byte(lines[1])))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	// A record line, a broken line and a torn last line among them.
	rec := `{"call_id":"c9","timestamp":"2026-11-23T10:00:00Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"history_record_appended":false,"conversation_history_size":0,"history_access_detected":false,"history_query_patterns":[],"version":1}`
	assert.False(t, store.IsScoreLine([]byte(rec)))
	input := lines[0] + "\n" + rec + "\n\n" + lines[1] + "\n" + `{"object":"score","version":2,"call_id":"c","name":"n","value":1,"source":"code","time":"2026-11-23T10:00:00Z"}` + "\n" + lines[2] + "\n" + lines[3] + "\n" + `{"object":"score","call_`
	got, err := store.ReadScores(strings.NewReader(input))
	var le *record.LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 2, le.Line)
	assert.ErrorIs(t, err, store.ErrNotScore)
	assert.Contains(t, err.Error(), "version 2")
	want := append([]store.Score(nil), scores...)
	for i := range want {
		want[i].Time = want[i].Time.UTC()
	}
	assert.Equal(t, want, got)
	assert.Equal(t, []store.Score{want[1], want[2], want[3]}, store.LatestScores(got), "the later thumbs replaces the earlier")
}

func TestDecodeScoreLineIsStrict(t *testing.T) {
	good := `{"object":"score","version":1,"call_id":"c","name":"n","value":1,"source":"code","time":"2026-11-23T10:00:00Z","later_field":7}`
	_, err := store.DecodeScoreLine([]byte(good))
	require.NoError(t, err, "unknown fields are ignored")
	for name, line := range map[string]string{
		"not JSON":     `{`,
		"an array":     `[]`,
		"no object":    strings.Replace(good, `"object":"score",`, ``, 1),
		"other object": strings.Replace(good, `"score"`, `"record"`, 1),
		"no version":   strings.Replace(good, `"version":1,`, ``, 1),
		"no time":      strings.Replace(good, `"time":"2026-11-23T10:00:00Z",`, ``, 1),
		"bad time":     strings.Replace(good, `2026-11-23T10:00:00Z`, `yesterday`, 1),
		"no value":     strings.Replace(good, `"value":1,`, ``, 1),
		"object value": strings.Replace(good, `"value":1`, `"value":{}`, 1),
		"bad source":   strings.Replace(good, `"code"`, `"robot"`, 1),
		"no target":    strings.Replace(good, `"call_id":"c",`, ``, 1),
	} {
		_, err := store.DecodeScoreLine([]byte(line))
		assert.Error(t, err, name)
	}
}

func FuzzDecodeScoreLine(f *testing.F) {
	f.Add([]byte(`{"object":"score","version":1,"call_id":"c","name":"n","value":1,"source":"code","time":"2026-11-23T10:00:00Z"}`))
	f.Add([]byte(`{"object":"score","version":1,"trace_id":"t","name":"n","value":"x","source":"human","time":"2026-11-23T10:00:00Z"}`))
	f.Add([]byte(`{"object":"score","version":1,"call_id":"c","name":"n","value":true,"source":"model","time":"2026-11-23T10:00:00Z"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sc, err := store.DecodeScoreLine(line)
		if err != nil {
			return
		}
		// What is read is valid, and writes back to a line that reads the same.
		require.NoError(t, sc.Validate())
		back, err := store.DecodeScoreLine(store.AppendScoreJSON(nil, sc))
		require.NoError(t, err)
		require.Equal(t, sc, back)
	})
}

func TestParseScoreFilter(t *testing.T) {
	for _, tc := range []struct{ in, op, value, str string }{
		{"helpfulness<0.5", "<", "0.5", "helpfulness<0.5"},
		{" helpfulness <= 0.5 ", "<=", "0.5", "helpfulness<=0.5"},
		{"helpfulness>=4", ">=", "4", "helpfulness>=4"},
		{"helpfulness>4", ">", "4", "helpfulness>4"},
		{"thumbs=false", "=", "false", "thumbs=false"},
		{"thumbs!=true", "!=", "true", "thumbs!=true"},
		{"topic=off_topic", "=", "off_topic", "topic=off_topic"},
		{"helpfulness", "exists", "", "helpfulness"},
		{"!helpfulness", "missing", "", "!helpfulness"},
	} {
		f, err := store.ParseScoreFilter(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.op, f.Op, tc.in)
		assert.Equal(t, tc.value, f.Value.String(), tc.in)
		assert.Equal(t, tc.str, f.String(), tc.in)
	}
	for _, bad := range []string{"", "!", "<0.5", "x<", "topic<off", "thumbs>true", "x<NaN", "a<b<c"} {
		_, err := store.ParseScoreFilter(bad)
		assert.ErrorIs(t, err, store.ErrBadScoreFilter, bad)
	}
}

func FuzzParseScoreFilter(f *testing.F) {
	for _, s := range []string{"helpfulness<0.5", "thumbs=false", "topic=off_topic", "!x", "x", "a<=b", "x!=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sf, err := store.ParseScoreFilter(s)
		if err != nil {
			if !errors.Is(err, store.ErrBadScoreFilter) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		back, err := store.ParseScoreFilter(sf.String())
		require.NoError(t, err, "%q → %q", s, sf.String())
		require.Equal(t, sf, back)
	})
}
