package detect_test

import (
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/detect"
)

// Typical generated code: a tool that reads the history, as models write
// it, about 3 KiB.
var typical = map[detect.Language]string{
	detect.Ruby: strings.Repeat(`# Summarize recent failures from the structured history.
def recent_failures(context, limit = 5)
  history = context.fetch(:conversation_history, [])
  failures = history.reject { |r| r.dig(:outcome_summary, :ok) }
  failures.last(limit).map do |r|
    {
      call_id: r[:call_id],
      method: r[:method_name],
      error: r[:error_type] || "unknown",
      retriable: r.dig(:outcome_summary, :retriable)
    }
  end
end

by_speaker = context[:conversation_history].group_by { |r| r[:speaker] }
puts "calls: #{by_speaker.keys.join(', ')}"
`, 5),
	detect.Python: strings.Repeat(`def recent_failures(context, limit=5):
    """Summarize recent failures from the structured history."""
    history = context.get("conversation_history", [])
    failures = [r for r in history if not r.get("outcome_summary", {}).get("ok")]
    out = []
    for r in failures[-limit:]:
        out.append({
            "call_id": r["call_id"],
            "method": r["method_name"],
            "error": r.get("error_type") or "unknown",
        })
    return out

total_ms = sum(r.get("duration_ms", 0) for r in context["conversation_history"])
print(f"total {total_ms} ms over {len(context['conversation_history'])} calls")
`, 5),
	detect.JavaScript: strings.Repeat(`// Summarize recent failures from the structured history.
function recentFailures(context, limit = 5) {
  const history = context.conversation_history ?? [];
  return history
    .filter((r) => !r.outcome_summary?.ok)
    .slice(-limit)
    .map((r) => ({ callId: r.call_id, method: r.method_name, error: r.error_type ?? "unknown" }));
}

const bySpeaker = Object.groupBy(context.conversation_history, (r) => r.speaker);
console.log(`+"`speakers: ${Object.keys(bySpeaker).join(\", \")}`"+`);
`, 6),
	detect.Go: strings.Repeat(`// recentFailures summarizes recent failures from the structured history.
func recentFailures(ctx map[string]any, limit int) []string {
	history, _ := ctx["conversation_history"].([]map[string]any)
	var out []string
	for _, r := range history {
		if ok, _ := r["ok"].(bool); !ok {
			out = append(out, fmt.Sprint(r["call_id"]))
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}
`, 6),
}

func BenchmarkScan(b *testing.B) {
	for lang, code := range typical {
		b.Run(lang.String(), func(b *testing.B) {
			if !detect.Scan(code, lang).Access {
				b.Fatal("the benchmark's code must access the history")
			}
			b.SetBytes(int64(len(code)))
			b.ReportAllocs()
			for b.Loop() {
				detect.Scan(code, lang)
			}
		})
	}
	plain := strings.ReplaceAll(typical[detect.Ruby], "conversation_history", "conversation_log")
	b.Run("no-mention", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		b.ReportAllocs()
		for b.Loop() {
			detect.Scan(plain, detect.Ruby)
		}
	})
}

func BenchmarkScanOutput(b *testing.B) {
	out := "Here is a helper that reads the history:\n\n```ruby\n" + typical[detect.Ruby] + "```\n\nAnd in Python:\n\n```\n" + typical[detect.Python] + "```\n"
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		detect.ScanOutput(out)
	}
}

// BenchmarkPathological shows time linear in the input: compare the
// MB/s of the two sizes.
func BenchmarkPathological(b *testing.B) {
	for _, size := range []int{1 << 18, 1 << 20} {
		inputs := map[string]string{
			"nesting":  strings.Repeat("[", size/2) + "conversation_history" + strings.Repeat("]", size/2),
			"one-line": "conversation_history" + strings.Repeat(".map { |r| r }", size/14),
			"slashes":  "conversation_history = 1\n" + strings.Repeat("/[", size/2),
		}
		for name, in := range inputs {
			b.Run(name+"/"+map[int]string{1 << 18: "256KiB", 1 << 20: "1MiB"}[size], func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					detect.Scan(in, detect.Ruby)
				}
			})
		}
	}
}
