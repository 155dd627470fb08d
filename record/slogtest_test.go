package record_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// captureHandler keeps every log record as the nested map a structured
// handler would write: groups become maps, LogValuers are resolved, empty
// groups vanish. testing/slogtest checks it follows the slog.Handler
// rules, so what the Slog sink is tested against below is what any
// correct handler, JSON or tint or a vendor's, receives.
type captureHandler struct {
	mu     *sync.Mutex
	out    *[]map[string]any
	attrs  []slog.Attr // from WithAttrs, already inside groups
	groups []string
}

func newCaptureHandler() *captureHandler {
	return &captureHandler{mu: new(sync.Mutex), out: new([]map[string]any)}
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	h2 := *h
	h2.attrs = append(append([]slog.Attr{}, h.attrs...), nest(h.groups, as)...)
	return &h2
}

func (h *captureHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.groups = append(append([]string{}, h.groups...), name)
	return &h2
}

// nest wraps as in the open groups, innermost last.
func nest(groups []string, as []slog.Attr) []slog.Attr {
	for i := len(groups) - 1; i >= 0; i-- {
		args := make([]any, len(as))
		for j, a := range as {
			args[j] = a
		}
		as = []slog.Attr{slog.Group(groups[i], args...)}
	}
	return as
}

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{}
	if !r.Time.IsZero() {
		m[slog.TimeKey] = r.Time
	}
	m[slog.LevelKey] = r.Level
	m[slog.MessageKey] = r.Message
	var own []slog.Attr
	r.Attrs(func(a slog.Attr) bool { own = append(own, a); return true })
	for _, a := range h.attrs {
		put(m, a)
	}
	if len(own) > 0 {
		for _, a := range nest(h.groups, own) {
			put(m, a)
		}
	}
	h.mu.Lock()
	*h.out = append(*h.out, m)
	h.mu.Unlock()
	return nil
}

func put(m map[string]any, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() != slog.KindGroup {
		m[a.Key] = a.Value.Any()
		return
	}
	g := a.Value.Group()
	if len(g) == 0 {
		return
	}
	if a.Key == "" { // an inline group
		for _, ga := range g {
			put(m, ga)
		}
		return
	}
	sub, _ := m[a.Key].(map[string]any)
	if sub == nil {
		sub = map[string]any{}
	}
	for _, ga := range g {
		put(sub, ga)
	}
	if len(sub) > 0 {
		m[a.Key] = sub
	}
}

func (h *captureHandler) records() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), *h.out...)
}

func TestCaptureHandlerIsAConformingHandler(t *testing.T) {
	var h *captureHandler
	slogtest.Run(t,
		func(*testing.T) slog.Handler { h = newCaptureHandler(); return h },
		func(*testing.T) map[string]any { return h.records()[0] })
}

// TestSlogSinkThroughAHandler logs records through a conforming handler,
// under the attributes and group an application typically adds, and
// checks what the handler receives: the four telemetry fields, the call's
// identity, outcome, duration and usage on every line, never a transcript.
func TestSlogSinkThroughAHandler(t *testing.T) {
	h := newCaptureHandler()
	sink := record.NewSlog(slog.New(h).With("service", "checkout").WithGroup("llm"))

	ok := loggedRecord()
	failed := rec("f", "t")
	failed.Outcome = record.Failure(record.ErrorTimeout)
	failed.ErrorType = record.ErrorTimeout
	var wg sync.WaitGroup
	for range 8 { // the sink is shared by the recorder's goroutines
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, sink.Append(context.Background(), ok))
			require.NoError(t, sink.Append(context.Background(), failed))
		}()
	}
	wg.Wait()

	got := h.records()
	require.Len(t, got, 16)
	for _, m := range got {
		assert.Equal(t, record.LogMessage, m[slog.MessageKey])
		assert.Equal(t, "checkout", m["service"], "the application's attributes stay outside")
		llm, isMap := m["llm"].(map[string]any)
		require.True(t, isMap, "the record's fields are inside the application's group: %v", m)
		for _, k := range []string{"call_id", "timestamp", "speaker", "method_name", "outcome_summary",
			"history_record_appended", "conversation_history_size", "history_access_detected", "history_query_patterns"} {
			assert.Contains(t, llm, k)
		}
		for _, k := range []string{"args", "kwargs", "program_source", "output"} {
			assert.NotContains(t, llm, k, "transcripts never reach logs")
		}
		outcome := llm["outcome_summary"].(map[string]any)
		switch llm["call_id"] {
		case ok.CallID:
			assert.Equal(t, slog.LevelInfo, m[slog.LevelKey])
			assert.Equal(t, 812.25, llm["duration_ms"])
			assert.Equal(t, int64(168), llm["usage"].(map[string]any)["total_tokens"])
			assert.Equal(t, []string{"slice", "map"}, llm["history_query_patterns"])
			assert.Equal(t, true, outcome["ok"])
		case failed.CallID:
			assert.Equal(t, slog.LevelWarn, m[slog.LevelKey])
			assert.Equal(t, "timeout", llm["error_type"])
			assert.Equal(t, "timeout", outcome["error_type"])
			assert.Equal(t, true, outcome["retriable"])
			assert.Equal(t, []string{}, llm["history_query_patterns"])
		default:
			t.Fatalf("unexpected call_id %v", llm["call_id"])
		}
	}
}
