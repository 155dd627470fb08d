package detect_test

import (
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/detect"
)

// generated is typical generated code: a tool of about 4 KiB that reads
// the history in a few of its statements and does other work in the rest.
const generated = `require "json"
require "time"

# Tool: weekly_report. Builds a short report of the agent's recent work.
module WeeklyReport
  DEFAULT_LIMIT = 20
  SECTIONS = %w[summary errors tools].freeze

  def self.format_duration(ms)
    return "n/a" if ms.nil?
    ms >= 1000 ? format("%.1fs", ms / 1000.0) : "#{ms.round}ms"
  end

  def self.format_row(method, count, total_ms)
    avg = count.zero? ? 0 : total_ms / count
    "| #{method.ljust(32)} | #{count.to_s.rjust(5)} | #{format_duration(avg).rjust(8)} |"
  end

  def self.header(title, generated_at = Time.now.utc)
    lines = []
    lines << "# #{title}"
    lines << ""
    lines << "Generated at #{generated_at.iso8601}."
    lines << ""
    lines.join("\n")
  end

  def self.table(rows)
    out = ["| method | calls | avg |", "|---|---|---|"]
    rows.each do |method, stats|
      out << format_row(method, stats[:count], stats[:total_ms])
    end
    out.join("\n")
  end

  def self.run(context, limit: DEFAULT_LIMIT)
    history = context.fetch(:conversation_history, [])
    recent = history.last(limit)
    by_method = recent.group_by { |r| r[:method_name] }
    stats = by_method.transform_values do |records|
      { count: records.size, total_ms: records.sum { |r| r[:duration_ms].to_f } }
    end
    report = [header("Weekly report"), table(stats.sort_by { |k, _| k })]
    failures = recent.reject { |r| r.dig(:outcome_summary, :ok) }
    unless failures.empty?
      report << ""
      report << "## Errors"
      failures.each do |f|
        report << "- #{f[:call_id]}: #{f[:error_type] || "unknown"}"
      end
    end
    settings = context.fetch(:settings, {})
    if settings[:include_tools]
      tools = settings.fetch(:tools, []).map { |t| t[:name] }.compact.uniq.sort
      report << ""
      report << "## Tools"
      tools.each { |t| report << "- #{t}" }
    end
    report.join("\n")
  end
end

result = WeeklyReport.run(context, limit: 50)
puts result
puts JSON.pretty_generate({ ok: true, length: result.length, sections: WeeklyReport::SECTIONS })
`

// Dense generated code: every statement reads the history, as in a tool
// that does nothing else, about 3 KiB per language.
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
	b.Run("generated", func(b *testing.B) {
		r := detect.Scan(generated, detect.Ruby)
		if !r.Access || r.Tags.Len() < 5 {
			b.Fatalf("the benchmark's code must query the history: %v", r.Tags)
		}
		b.SetBytes(int64(len(generated)))
		b.ReportAllocs()
		for b.Loop() {
			detect.Scan(generated, detect.Ruby)
		}
	})
	for lang, code := range typical {
		b.Run("dense/"+lang.String(), func(b *testing.B) {
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

// BenchmarkNaiveRegex is the naive baseline (the first, regex-only design) on the same generated
// code, for comparison: the name, then the five tags' regexes.
func BenchmarkNaiveRegex(b *testing.B) {
	e := entry{text: generated}
	b.SetBytes(int64(len(generated)))
	b.ReportAllocs()
	for b.Loop() {
		naive(e)
	}
}

// BenchmarkScanOutputProse is the common case: a reply of prose that
// never names the history, so that the prefilter alone decides. The text
// is the benchmarks' (internal/benchdata): 3,900 bytes of a pangram, in
// which every letter of the default name comes back every 45 bytes.
func BenchmarkScanOutputProse(b *testing.B) {
	out := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)[:3900]
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if detect.ScanOutput(out).Access {
			b.Fatal("prose read as a history query")
		}
	}
}
