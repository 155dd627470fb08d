package detect_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/detect"
)

func tags(names ...string) detect.TagSet {
	var s detect.TagSet
	for _, n := range names {
		t, ok := detect.ParseTag(n)
		if !ok {
			panic(n)
		}
		s = s.With(t)
	}
	return s
}

type tc struct {
	name   string
	code   string
	access bool
	tags   detect.TagSet
}

func run(t *testing.T, lang detect.Language, cases []tc) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := detect.Scan(c.code, lang)
			assert.Equal(t, c.access, r.Access, "access")
			assert.Equal(t, c.tags.Names(), r.Tags.Names(), "tags")
			if c.access {
				assert.Equal(t, []detect.Language{lang}, r.Languages)
			}
		})
	}
}

func TestRuby(t *testing.T) {
	run(t, detect.Ruby, []tc{
		{"symbol key", `context[:conversation_history].select { |r| r[:outcome_summary][:ok] }`, true, tags("filter")},
		{"string key", `context["conversation_history"].map { |r| r["speaker"] }`, true, tags("map")},
		{"fetch with default", `context.fetch(:conversation_history, []).last(3)`, true, tags("slice")},
		{"dig", `context.dig(:conversation_history)&.count`, true, tags("count")},
		{"bare variable", `conversation_history.each { |r| puts r[:call_id] }`, true, tags("iterate")},
		{"alias and derived alias", "h = context[:conversation_history]\nrecent = h.last(5)\nrecent.map { |r| r[:method_name] }", true, tags("slice", "map")},
		{"chain across lines, leading dots", "context[:conversation_history]\n  .reject { |r| r[:speaker] == \"tool\" }\n  .group_by { |r| r[:speaker] }", true, tags("filter", "group")},
		{"chain across lines, trailing dots", "context[:conversation_history].\n  sort_by { |r| r[:timestamp] }.\n  reverse", true, tags("sort")},
		{"fields inside a block are not queries", `context[:conversation_history].map { |r| r[:args].first.to_s.size }`, true, tags("map")},
		{"do block then chain", "context[:conversation_history].select do |r|\n  r[:ok]\nend.count", true, tags("filter", "count")},
		{"range slice", `context[:conversation_history][-3..].each { |r| p r }`, true, tags("slice", "iterate")},
		{"filter_map", `context[:conversation_history].filter_map { |r| r[:usage] }`, true, tags("filter", "map")},
		{"search predicates", "h = context[:conversation_history]\nh.any? { |r| r[:error_type] }\nh.find { |r| r[:depth] > 0 }", true, tags("search")},
		{"reduce", `context[:conversation_history].sum { |r| r[:duration_ms].to_f }`, true, tags("reduce")},
		{"count of an alias is not an alias", "n = context[:conversation_history].size\nn.times.map { |i| i }", true, tags("count")},
		{"for loop", "for r in context[:conversation_history] do\n  puts r\nend", true, tags("iterate")},
		{"interpolation is code", `puts "#{context[:conversation_history].size} records"`, true, tags("count")},
		{"write only", `context[:conversation_history] << { call_id: "x" }`, true, 0},
		{"comment", "# read context[:conversation_history].select first\nputs 1", false, 0},
		{"string", `logger.info("conversation_history.select is empty")`, false, 0},
		{"similar names", "conversation_history_size = 3\nmy_conversation_history_note.map { |x| x }", false, 0},
		{"hash key definition", `ctx = { conversation_history: [] }`, false, 0},
		{"keyword argument", `build(conversation_history: records)`, false, 0},
		{"heredoc", "doc = <<~TXT\n  context[:conversation_history].map\nTXT\nputs doc", false, 0},
		{"block comment", "=begin\ncontext[:conversation_history].each\n=end\nputs 2", false, 0},
		{"other collections", "# uses conversation_history? no\nitems.select { |i| i }.map(&:to_s)", false, 0},
	})
}

func TestPython(t *testing.T) {
	run(t, detect.Python, []tc{
		{"comprehension with if", `fails = [r for r in context["conversation_history"] if not r["outcome_summary"]["ok"]]`, true, tags("filter")},
		{"comprehension that maps", `speakers = [r["speaker"] for r in context["conversation_history"]]`, true, tags("map")},
		{"both", `ids = {r["call_id"] for r in conversation_history if r["depth"] == 0}`, true, tags("filter", "map")},
		{"get with default and len", "h = context.get(\"conversation_history\", [])\nprint(len(h))", true, tags("count")},
		{"slicing", "h = context['conversation_history']\nlast_three = h[-3:]", true, tags("slice")},
		{"for loop over a slice", "for r in context[\"conversation_history\"][-5:]:\n    print(r)", true, tags("slice", "iterate")},
		{"enumerate", "for i, r in enumerate(conversation_history):\n    pass", true, tags("iterate")},
		{"generator into sum", `total = sum(r.get("duration_ms", 0) for r in conversation_history)`, true, tags("reduce")},
		{"next with if", `first_err = next((r for r in conversation_history if r["error_type"]), None)`, true, tags("filter", "search")},
		{"sorted and groupby", "h = context[\"conversation_history\"]\nfor k, g in itertools.groupby(sorted(h, key=by_speaker), key=by_speaker):\n    pass", true, tags("group", "sort", "iterate")},
		{"Counter", `counts = Counter(r["speaker"] for r in conversation_history)`, true, tags("group")},
		{"filter and map builtins", `list(map(fmt, filter(is_ok, conversation_history)))`, true, tags("filter", "map")},
		{"len of a filtered list", `n = len(list(filter(is_ok, conversation_history)))`, true, tags("filter", "count")},
		{"membership", `if record in conversation_history:\n    pass`, true, tags("search")},
		{"functools.reduce", `functools.reduce(merge, conversation_history, {})`, true, tags("reduce")},
		{"f-string is code", `print(f"{len(conversation_history)} records")`, true, tags("count")},
		{"docstring", "def f(ctx):\n    \"\"\"Reads conversation_history and filters it.\"\"\"\n    return ctx", false, 0},
		{"comment", "# for r in conversation_history:\nx = 1", false, 0},
		{"string message", `raise ValueError("conversation_history must be a list")`, false, 0},
		{"keyword argument", `summarize(conversation_history=records)`, false, 0},
	})
}

func TestJavaScript(t *testing.T) {
	run(t, detect.JavaScript, []tc{
		{"attribute and chain", `const ids = context.conversation_history.filter(r => r.outcome_summary.ok).map(r => r.call_id);`, true, tags("filter", "map")},
		{"optional chaining", `const n = context?.conversation_history?.length ?? 0;`, true, tags("count")},
		{"string key", `const h = context["conversation_history"];\nconst last = h.at(-1);`, true, tags("slice")},
		{"index by length", `const h = context.conversation_history;\nconst last = h[h.length - 1];`, true, tags("slice", "count")},
		{"for of", "for (const r of context.conversation_history) {\n  console.log(r.call_id);\n}", true, tags("iterate")},
		{"groupBy", `const bySpeaker = Object.groupBy(context.conversation_history, r => r.speaker);`, true, tags("group")},
		{"reduce and some", "const h = context.conversation_history;\nconst ms = h.reduce((a, r) => a + r.duration_ms, 0);\nconst bad = h.some(r => !r.outcome_summary.ok);", true, tags("reduce", "search")},
		{"toSorted slice", `context.conversation_history.toSorted((a, b) => a.depth - b.depth).slice(0, 3)`, true, tags("slice", "sort")},
		{"template literal is code", "console.log(`${context.conversation_history.length} records`);", true, tags("count")},
		{"comment", "// context.conversation_history.filter(...)\nconst x = 1;", false, 0},
		{"block comment", "/* conversation_history.map */ const y = 2;", false, 0},
		{"object key", `const ctx = { conversation_history: [] };`, false, 0},
		{"camel case is another name", `conversationHistory.filter(x => x)`, false, 0},
	})
}

func TestGo(t *testing.T) {
	run(t, detect.Go, []tc{
		{"range with if", "hist := ctx[\"conversation_history\"]\nfor _, r := range hist {\n\tif r.Speaker == \"tool\" {\n\t\tn++\n\t}\n}", true, tags("filter", "iterate")},
		{"range without if", "for _, r := range conversation_history {\n\tfmt.Println(r)\n}", true, tags("iterate")},
		{"len and slicing", "h := ctx[\"conversation_history\"]\nrecent := h[len(h)-3:]\n_ = recent", true, tags("slice", "count")},
		{"slices functions", "h := ctx[\"conversation_history\"]\nslices.SortFunc(h, byTime)\ni := slices.IndexFunc(h, isError)", true, tags("sort", "search")},
		{"type assertion", "h, ok := ctx[\"conversation_history\"].([]map[string]any)\nif ok {\n\tfmt.Println(len(h))\n}", true, tags("count")},
		{"comment", "// ctx[\"conversation_history\"] is read below\nx := 1", false, 0},
		{"raw string", "const q = `conversation_history.filter`", false, 0},
	})
}

func TestOutput(t *testing.T) {
	out := "Here is how to find the failed calls. The `conversation_history` is a list.\n\n" +
		"```ruby\nfails = context[:conversation_history].reject { |r| r[:outcome_summary][:ok] }\n```\n\n" +
		"And the count:\n\n~~~\nputs context[:conversation_history].count\n~~~\n"
	r := detect.ScanOutput(out)
	assert.True(t, r.Access)
	assert.Equal(t, tags("filter", "count").Names(), r.Tags.Names())
	require.Len(t, r.Findings, 2)
	assert.Equal(t, 4, r.Findings[0].Line, "lines count from the start of the output")
	assert.Equal(t, 10, r.Findings[1].Line)

	prose := "You can read `conversation_history` and filter it with select. The conversation_history holds records."
	assert.False(t, detect.ScanOutput(prose).Access, "prose is not code")

	bare := "h = context[:conversation_history]\nh.last(3).each do |r|\n  puts r[:call_id]\nend\n"
	assert.Equal(t, tags("slice", "iterate").Names(), detect.ScanOutput(bare).Tags.Names(), "code without fences")

	unclosed := "Sure:\n```python\nrecent = context[\"conversation_history\"][-3:]\nfor r in recent:\n"
	r = detect.ScanOutput(unclosed)
	assert.Equal(t, tags("slice", "iterate").Names(), r.Tags.Names(), "a fence never closed runs to the end")
	assert.Equal(t, []detect.Language{detect.Python}, r.Languages)

	two := "```js\nconst n = context.conversation_history.length;\n```\nthen\n```go\nfor _, r := range conversation_history {\n}\n```"
	r = detect.ScanOutput(two)
	assert.Equal(t, tags("count", "iterate").Names(), r.Tags.Names())
	assert.Equal(t, []detect.Language{detect.JavaScript, detect.Go}, r.Languages)
}

func TestToolArguments(t *testing.T) {
	args := `{"language":"python","code":"h = context[\"conversation_history\"]\nprint(len([r for r in h if r[\"ok\"]]))","timeout":30}`
	r := detect.ScanToolArguments(args)
	assert.True(t, r.Access)
	assert.Equal(t, tags("filter", "count").Names(), r.Tags.Names())
	assert.Equal(t, []detect.Language{detect.Python}, r.Languages)

	note := `{"note":"remember to read conversation_history later","code":"puts 1"}`
	assert.False(t, detect.ScanToolArguments(note).Access)

	assert.True(t, detect.ScanToolArguments(`not json: context[:conversation_history].map { }`).Access, "not JSON: read as output")
}

func TestConfiguredNames(t *testing.T) {
	d := detect.New("memory")
	r := d.Scan(`context[:memory].select { |m| m[:ok] }`, detect.Ruby)
	assert.True(t, r.Access)
	assert.Equal(t, tags("filter").Names(), r.Tags.Names())
	assert.True(t, d.Scan(`conversation_history.size`, detect.Ruby).Access, "the default name still counts")
	assert.False(t, detect.Scan(`context[:memory].select { }`, detect.Ruby).Access)
}

func TestGuess(t *testing.T) {
	assert.Equal(t, detect.Ruby, detect.Guess("context[:conversation_history].each do |r|\n  puts r\nend"))
	assert.Equal(t, detect.Python, detect.Guess("def f(ctx):\n    return [r for r in ctx[\"conversation_history\"] if r]"))
	assert.Equal(t, detect.JavaScript, detect.Guess("const h = context.conversation_history;\nh.forEach(r => console.log(r));"))
	assert.Equal(t, detect.Go, detect.Guess("func f(ctx map[string]any) {\n\th := ctx[\"conversation_history\"]\n}"))
	assert.Equal(t, detect.Ruby, detect.ParseLanguage("rb"))
	assert.Equal(t, detect.JavaScript, detect.ParseLanguage("TypeScript"))
	assert.Equal(t, detect.Unknown, detect.ParseLanguage("cobol"))
}

func TestTagSet(t *testing.T) {
	s := tags("map", "filter", "iterate")
	assert.Equal(t, []string{"filter", "map", "iterate"}, s.Names(), "stable order")
	assert.Equal(t, 3, s.Len())
	assert.Equal(t, "[filter map iterate]", s.String())
	assert.Nil(t, detect.TagSet(0).Names())
	assert.Len(t, detect.AllTags(), 9)
}

func TestNoAllocationsWithoutAMatch(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	code := strings.Repeat("items.select { |i| i[:ok] }.map(&:to_s)\n", 50)
	for name, fn := range map[string]func(){
		"Scan":              func() { detect.Scan(code, detect.Ruby) },
		"Scan unknown":      func() { detect.Scan(code, detect.Unknown) },
		"ScanOutput":        func() { detect.ScanOutput(code) },
		"ScanToolArguments": func() { detect.ScanToolArguments(code) },
	} {
		assert.Zero(t, testing.AllocsPerRun(100, fn), name)
	}
}

func TestPathologicalInputsFinish(t *testing.T) {
	const mb = 1 << 20
	inputs := map[string]string{
		"deep nesting":           strings.Repeat("[", mb/2) + "conversation_history" + strings.Repeat("]", mb/2),
		"one long line":          "x = conversation_history" + strings.Repeat(".map { |r| r }", mb/14),
		"unterminated string":    "h = conversation_history\nputs \"" + strings.Repeat("a", mb),
		"unterminated comment":   "conversation_history /* " + strings.Repeat("*", mb),
		"slashes":                "conversation_history" + strings.Repeat(" ( /", mb/4),
		"percent literals":       "conversation_history\n" + strings.Repeat("x = %w[", mb/7),
		"many aliases":           strings.Repeat("h = conversation_history\n", mb/25),
		"unclosed fences":        strings.Repeat("```\nconversation_history.map\n", mb/28),
		"heredoc without an end": "conversation_history.size\nx = <<~EOS\n" + strings.Repeat("line\n", mb/5),
	}
	for name, in := range inputs {
		for _, lang := range []detect.Language{detect.Ruby, detect.Python, detect.JavaScript, detect.Go} {
			r := detect.Scan(in, lang)
			assert.True(t, r.Access, "%s in %v", name, lang)
		}
		detect.ScanOutput(in)
	}
}
