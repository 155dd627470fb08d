package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// history makes the records of two short conversations.
func history() []record.Record {
	var recs []record.Record
	for _, c := range []struct{ trace, user, model string }{{"t-refund", "user-42", "gpt-4o-mini"}, {"t-invoice", "user-7", "gpt-4o"}} {
		args := `[{"role":"system","content":"You are the shop's assistant."}`
		for turn := range 3 {
			args += fmt.Sprintf(`,{"role":"user","content":"%s question %d"}`, strings.TrimPrefix(c.trace, "t-"), turn)
			recs = append(recs, record.Record{
				CallID:     fmt.Sprintf("%s-%d", c.trace, turn),
				Timestamp:  fmt.Sprintf("2026-11-23T10:0%d:00.000000Z", turn),
				Speaker:    record.SpeakerUser,
				MethodName: "openai.chat.completions.create",
				Args:       []byte(args + "]"),
				Outcome:    record.Success("chat.completion"),
				TraceID:    c.trace,
				UserID:     c.user,
				Model:      c.model,
				DurationMS: float64(400 + 100*turn),
				Usage:      &record.Usage{InputTokens: 30, OutputTokens: 10, TotalTokens: 40},
			})
			args += fmt.Sprintf(`,{"role":"assistant","content":"answer %d"}`, turn)
		}
	}
	return recs
}

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	s, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "history.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	// A recorder would do this: middleware.NewRecorder(middleware.WithSink(s)).
	if err := s.AppendBatch(ctx, history()); err != nil {
		log.Fatal(err)
	}

	page, err := s.Query(ctx, store.Query{Filter: store.Filter{UserID: "user-42"}, Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range page.Records {
		var msgs []struct{ Content string }
		if err := json.Unmarshal(r.Args, &msgs); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d messages, the last %q\n", r.CallID, len(msgs), msgs[len(msgs)-1].Content)
	}
	fmt.Println("more:", page.Next != "")
	// Output:
	// t-refund-2: 6 messages, the last "refund question 2"
	// t-refund-1: 4 messages, the last "refund question 1"
	// more: true
}

func ExampleStore_Aggregate() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "history.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(ctx, history()); err != nil {
		log.Fatal(err)
	}

	// Asked by day and model, the store answers from its rollups: sums
	// exact; p50 and p95 the nearest-rank values (500 and 600 ms) within
	// 1%, from the latency sketch the viewer and the report use too.
	groups, err := s.Aggregate(ctx, store.AggregateQuery{By: []store.GroupBy{store.ByDay, store.ByModel}})
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range groups {
		fmt.Printf("%s %-11s calls=%d tokens=%d p50=%.0fms p95=%.0fms\n", g.Key[0], g.Key[1], g.Calls, g.TotalTokens, g.LatencyP50MS, g.LatencyP95MS)
	}
	// Output:
	// 2026-11-23T00:00:00Z gpt-4o      calls=3 tokens=120 p50=498ms p95=600ms
	// 2026-11-23T00:00:00Z gpt-4o-mini calls=3 tokens=120 p50=498ms p95=600ms
}

func ExampleStore_Trace() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "history.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(ctx, history()); err != nil {
		log.Fatal(err)
	}

	// Each call sent the whole conversation again; the store kept each
	// message once (the system prompt and the answers "answer 0" and
	// "answer 1" once for both conversations), and gives every record its
	// args whole.
	recs, err := s.Trace(ctx, "t-invoice")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Println(r.CallID, strings.Count(string(r.Args), `"role"`), "messages")
	}
	d, err := s.Describe(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Records, "records,", d.Messages, "messages stored")
	// Output:
	// t-invoice-0 2 messages
	// t-invoice-1 4 messages
	// t-invoice-2 6 messages
	// 6 records, 9 messages stored
}

func ExampleStore_Traces() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "history.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(ctx, history()); err != nil {
		log.Fatal(err)
	}

	// The conversations where "refund" came up.
	page, err := s.Traces(ctx, store.Query{Filter: store.Filter{Text: "refund"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range page.Traces {
		fmt.Println(t.TraceID, t.UserID, t.Calls, "calls")
	}
	// Output:
	// t-refund user-42 3 calls
}
