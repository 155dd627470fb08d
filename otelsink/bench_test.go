package otelsink_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmhistory/llmhistory/internal/otelsinktest"
	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// benchRecord is a typical record: an OpenAI chat of six messages (about
// 1 KiB of args), usage, cost and the history telemetry.
func benchRecord() record.Record {
	msgs := make([]record.Message, 0, 6)
	for i := range 6 {
		role := []string{record.RoleUser, record.RoleAssistant}[i%2]
		msgs = append(msgs, record.TextMessage(role, strings.Repeat("Summarize the last turns. ", 6)))
	}
	return record.Record{
		CallID: "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A", Timestamp: "2026-11-21T09:30:00.123456Z", Speaker: "user",
		MethodName: "openai.chat.completions.create",
		Args:       record.AppendMessages(nil, msgs),
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":256}`),
		Outcome: record.Outcome{Status: "ok", OK: true, ValueClass: "chat.completion", HTTPStatus: 200,
			FinishReason: "stop", ResponseID: "chatcmpl-abc123"},
		TraceID: "conversation-7", ParentCallID: "01JD2Q8Y00000000000000000P", Depth: record.Int(1),
		DurationMS: 812.25, Attempts: 1, Model: "gpt-4o-mini-2024-07-18",
		Output:                &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: strings.Repeat("Here is the summary. ", 10)}}},
		Usage:                 &record.Usage{InputTokens: 120, OutputTokens: 48, TotalTokens: 168, CachedTokens: 64},
		Cost:                  &record.Cost{USD: 0.000123, Table: "litellm-2026-11-20"},
		HistoryRecordAppended: true, ConversationHistorySize: 3, HistoryQueryPatterns: []string{"slice"},
	}
}

// BenchmarkSinks is the cost of one record in each kind of sink, in one
// run: the JSONL and slog sinks beside this one, whose cost is mostly the
// span the SDK builds and its export. Every sink gets every record (the
// OTel sink waits for room rather than drop, which a recorder's sink
// never does), and the time includes the sink's own goroutine: a Flush
// ends each run. cpu-ns/op is the process's CPU per record, the OTLP
// variants' including the in-process OTLP receiver decoding it.
func BenchmarkSinks(b *testing.B) {
	r := benchRecord()
	type variant struct {
		name string
		make func(b *testing.B) record.Sink
	}
	// Each run gets its own sink, exporters and reader: a reader serves
	// one meter provider, and a closed sink closes them.
	otel := func(options func(b *testing.B) otelsink.Options) func(b *testing.B) record.Sink {
		return func(b *testing.B) record.Sink {
			opts := options(b)
			opts.WaitWhenFull = true
			s, err := otelsink.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
	}
	otlp := func(protocol string) func(b *testing.B) otelsink.Options {
		return func(b *testing.B) otelsink.Options {
			r := otlpfake.StartDiscarding(b)
			se, me := otelsinktest.Exporters(b, r.GRPC, r.HTTP, protocol)
			return otelsink.Options{SpanExporter: se, MetricReader: sdkmetric.NewPeriodicReader(me, sdkmetric.WithInterval(time.Hour)), Content: otelsink.ContentOff}
		}
	}
	variants := []variant{
		{"jsonl", func(*testing.B) record.Sink { return record.NewJSONL(io.Discard) }},
		{"slog-json", func(*testing.B) record.Sink { return record.NewSlog(slog.New(slog.NewJSONHandler(io.Discard, nil))) }},
		{"otel-spans", otel(func(*testing.B) otelsink.Options {
			return otelsink.Options{SpanExporter: tracetest.NewNoopExporter(), Content: otelsink.ContentOff}
		})},
		{"otel-spans+metrics", otel(func(*testing.B) otelsink.Options {
			return otelsink.Options{SpanExporter: tracetest.NewNoopExporter(), MetricReader: sdkmetric.NewManualReader(), Content: otelsink.ContentOff}
		})},
		{"otel-spans+content", otel(func(*testing.B) otelsink.Options {
			return otelsink.Options{SpanExporter: tracetest.NewNoopExporter(), Content: otelsink.ContentOn}
		})},
		{"otel-otlp-http", otel(otlp("http"))},
		{"otel-otlp-grpc", otel(otlp("grpc"))},
	}
	for _, v := range variants {
		b.Run("sink="+v.name, func(b *testing.B) {
			s := v.make(b)
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			// Not b.Loop: it stops the timer when the loop ends, and the
			// flush that waits for the sink's goroutine must be timed too.
			for range b.N {
				if err := s.Append(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			if err := record.Flush(s); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			if o, ok := s.(*otelsink.Sink); ok {
				if st := o.Stats(); st.Dropped+st.Failed != 0 {
					b.Fatalf("the sink lost records: %+v", st)
				}
			}
			if err := record.Close(s); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppendFull is the caller's cost when the collector has fallen
// behind and the queue is full: the metrics are recorded, the span is
// dropped and counted, nothing waits.
func BenchmarkAppendFull(b *testing.B) {
	exp := newStuck()
	defer close(exp.release)
	s, err := otelsink.New(otelsink.Options{SpanExporter: exp, MetricReader: sdkmetric.NewManualReader(), QueueSize: 1, BatchSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	r := benchRecord()
	ctx := context.Background()
	if err := s.Append(ctx, r); err != nil {
		b.Fatal(err)
	}
	<-exp.entered
	s.Append(ctx, r) // fills the queue
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(ctx, r); err != record.ErrQueueFull {
			b.Fatalf("Append = %v, want a drop", err)
		}
	}
}
