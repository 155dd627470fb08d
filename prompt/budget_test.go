package prompt_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/prompt"
)

// bigBudgetCase is a spec with about n bytes of droppable state and a
// budget far under it, so that nearly all of it is trimmed: one thing at
// a time, in the preservation order.
type bigBudgetCase struct {
	name  string
	build func(n int) (prompt.Spec, prompt.Config)
}

func bigBudgetCases() []bigBudgetCase {
	transcript := func(n int) *prompt.ConversationState {
		var items []prompt.ConversationStateItem
		for range n / 100 {
			items = append(items, prompt.ConversationStateItem{Role: "user", Content: strings.Repeat("x", 100)})
		}
		return &prompt.ConversationState{Transcript: items, RenderMode: prompt.RenderBoth}
	}
	base := func(cs *prompt.ConversationState) prompt.Spec {
		return prompt.Spec{ConversationState: cs, Task: []prompt.TaskAnnotation{{Instruction: "do it"}}, Input: prompt.InputPayload{UserQuery: "q"}}
	}
	return []bigBudgetCase{
		{"MaxChars", func(n int) (prompt.Spec, prompt.Config) {
			return base(transcript(n)), prompt.Config{Budget: prompt.Budget{MaxChars: 2000}}
		}},
		{"MaxTokens", func(n int) (prompt.Spec, prompt.Config) {
			return base(transcript(n)), prompt.Config{Budget: prompt.Budget{MaxTokens: 500}}
		}},
		{"ExplicitEstimateTokens", func(n int) (prompt.Spec, prompt.Config) {
			return base(transcript(n)), prompt.Config{Budget: prompt.Budget{MaxTokens: 500, Estimate: prompt.EstimateTokens}}
		}},
		{"SectionCap", func(n int) (prompt.Spec, prompt.Config) {
			return base(transcript(n)), prompt.Config{Budget: prompt.Budget{Sections: map[prompt.Section]prompt.Limit{
				prompt.SectionConversationState: {MaxChars: 1000}}}}
		}},
		{"SummaryLines", func(n int) (prompt.Spec, prompt.Config) {
			lines := make([]string, n/100)
			for i := range lines {
				lines[i] = strings.Repeat("s", 99)
			}
			cs := &prompt.ConversationState{Summary: strings.Join(lines, "\n")}
			return base(cs), prompt.Config{Budget: prompt.Budget{MaxChars: 2000}}
		}},
		{"Tasks", func(n int) (prompt.Spec, prompt.Config) {
			spec := base(nil)
			for i := range n / 100 {
				spec.Task = append(spec.Task, prompt.TaskAnnotation{Priority: prompt.Priority(1 + i%5), Instruction: strings.Repeat("t", 100)})
			}
			return spec, prompt.Config{Budget: prompt.Budget{MaxChars: 2000}}
		}},
		{"Attachments", func(n int) (prompt.Spec, prompt.Config) {
			spec := base(nil)
			for i := range n / 100 {
				spec.Input.Attachments = append(spec.Input.Attachments, prompt.Attachment{Name: strconv.Itoa(i) + strings.Repeat("a", 90)})
			}
			return spec, prompt.Config{Budget: prompt.Budget{MaxChars: 2000}}
		}},
	}
}

// Trimming a big state is linear: the bytes Assemble allocates are a
// small multiple of the state's size. Trimming that renders the prompt at
// each step allocates the state's size once per item dropped, hundreds of
// times as much here.
func TestBudgetTrimmingAllocatesLinearly(t *testing.T) {
	const n = 128 << 10
	for _, c := range bigBudgetCases() {
		t.Run(c.name, func(t *testing.T) {
			spec, cfg := c.build(n)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			a, err := prompt.Assemble(spec, cfg)
			runtime.ReadMemStats(&after)
			require.NoError(t, err)
			require.NotEmpty(t, a.Meta.Decisions)
			allocated := after.TotalAlloc - before.TotalAlloc
			assert.Less(t, allocated, uint64(64*n), "Assemble allocated %d bytes to trim a %d-byte state", allocated, n)
		})
	}
}

// A 1 MiB state trimmed to a small budget assembles well within a hang
// bound (not a speed test: the bound is generous by far).
func TestBudgetTrimmingBigStateDoesNotHang(t *testing.T) {
	const n = 1 << 20
	for _, c := range bigBudgetCases() {
		t.Run(c.name, func(t *testing.T) {
			spec, cfg := c.build(n)
			done := make(chan error, 1)
			go func() {
				_, err := prompt.Assemble(spec, cfg)
				done <- err
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("Assemble of a %d-byte state under a budget took over 10s", n)
			}
		})
	}
}

func BenchmarkAssembleBudget(b *testing.B) {
	for _, c := range bigBudgetCases() {
		for _, n := range []int{64 << 10, 256 << 10, 1 << 20} {
			b.Run(c.name+"/"+strconv.Itoa(n>>10)+"KiB", func(b *testing.B) {
				spec, cfg := c.build(n)
				b.ReportAllocs()
				b.SetBytes(int64(n))
				for b.Loop() {
					if _, err := prompt.Assemble(spec, cfg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
