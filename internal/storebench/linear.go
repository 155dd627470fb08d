package storebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Turns streams the records of a conversation of n turns to fn, each
// sending the system prompt and every earlier turn again, and keeping
// its answer (Output), the message the next turn sends back, as a
// recorder does; without holding them all: a 1,000-turn conversation's
// args add up to hundreds of megabytes. It returns the bytes of its
// unique text (every message once, as the JSON elements of args).
func Turns(n int, fn func(record.Record)) (unique int64) {
	rng := rand.New(rand.NewPCG(uint64(n), 1000))
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	msg := func(role, content string) []byte {
		m := record.TextMessage(role, content)
		return m.AppendJSON(nil)
	}
	var elems bytes.Buffer // the elements so far, comma-separated
	add := func(b []byte) {
		if elems.Len() > 0 {
			elems.WriteByte(',')
		}
		elems.Write(b)
		unique += int64(len(b))
	}
	add(msg("system", "You are the support assistant of an online shop. Answer briefly, cite the order, and never invent a policy."))
	for i := range n {
		add(msg("user", Text(rng, 150+rng.IntN(100))))
		args := make([]byte, 0, elems.Len()+2)
		args = append(append(append(args, '['), elems.Bytes()...), ']')
		answer := record.TextMessage(record.RoleAssistant, Text(rng, 700+rng.IntN(300)))
		fn(record.Record{
			Output:     &answer,
			CallID:     fmt.Sprintf("long-%05d", i),
			Timestamp:  record.FormatTime(start.Add(time.Duration(i) * 20 * time.Second)),
			Speaker:    record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			Args:       args,
			Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini","temperature":0.2}`),
			Outcome:    record.Outcome{Status: record.StatusOK, OK: true, ValueClass: "chat.completion", HTTPStatus: 200, FinishReason: "stop"},
			TraceID:    "long",
			UserID:     "user-42",
			DurationMS: 900,
			Model:      "gpt-4o-mini",
			Usage:      &record.Usage{InputTokens: len(args) / 4, OutputTokens: 200, TotalTokens: len(args)/4 + 200},
			Attempts:   1,

			HistoryRecordAppended:   true,
			ConversationHistorySize: i,
		})
		add(answer.AppendJSON(nil))
	}
	return unique
}

// Linear is what a conversation of Turns turns takes in a store, and in
// the JSONL files that hold the same records.
type Linear struct {
	Turns       int
	Unique      int64 // bytes of unique text
	Store       int64 // bytes the store grew by
	JSONLWhole  int64 // a JSONL file with args whole (the default)
	JSONLPrefix int64 // with args_prefix (JSONLOptions.ArgsPrefix)
}

// MeasureLinear writes a conversation of turns turns into the empty store
// at url, in batches as a recorder's queue hands them over, checks a few
// records read back whole, and returns what it took.
func MeasureLinear(t testing.TB, url string, turns int) Linear {
	ctx := context.Background()
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := s.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := Linear{Turns: turns}
	mem := record.NewMemory(turns + 1)
	var prefix countWriter
	jsonl := record.NewJSONLWith(&prefix, record.JSONLOptions{ArgsPrefix: true})
	var batch []record.Record
	want := map[string][]byte{}
	l.Unique = Turns(turns, func(r record.Record) {
		l.JSONLWhole += int64(len(r.AppendJSON(nil)) + 1)
		if err := jsonl.Append(ctx, mem.Add(r)); err != nil {
			t.Fatal(err)
		}
		if i := len(want); i < 3 && (r.CallID == "long-00000" || r.CallID == fmt.Sprintf("long-%05d", turns/2) || r.CallID == fmt.Sprintf("long-%05d", turns-1)) {
			want[r.CallID] = r.Args
		}
		batch = append(batch, r)
		if len(batch) == 50 {
			if _, err := s.Write(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	})
	if _, err := s.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := jsonl.Close(); err != nil {
		t.Fatal(err)
	}
	l.JSONLPrefix = prefix.n
	after, err := s.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.Store = after - before
	for id, args := range want {
		r, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Args, args) {
			t.Fatalf("%s: args not whole: %d bytes, want %d", id, len(r.Args), len(args))
		}
	}
	return l
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

func (l Linear) String() string {
	return fmt.Sprintf("%d turns: unique text %.2f MB; store %.2f MB (%.2fx, %.0f bytes/turn); JSONL with args whole %.1f MB (%.0fx), with args_prefix %.2f MB (%.2fx)",
		l.Turns, mbf(l.Unique), mbf(l.Store), float64(l.Store)/float64(l.Unique), float64(l.Store)/float64(l.Turns),
		mbf(l.JSONLWhole), float64(l.JSONLWhole)/float64(l.Unique), mbf(l.JSONLPrefix), float64(l.JSONLPrefix)/float64(l.Unique))
}

func mbf(n int64) float64 { return float64(n) / 1e6 }
