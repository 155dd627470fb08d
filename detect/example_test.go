package detect_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/detect"
)

func ExampleScanOutput() {
	reply := "Here is the tool:\n\n```ruby\n" +
		"recent = context[:conversation_history].last(5)\n" +
		"failures = recent.reject { |r| r.dig(:outcome_summary, :ok) }\n" +
		"puts failures.map { |r| r[:method_name] }.tally\n" +
		"```\n\nIt reads `conversation_history` and counts the failing methods."
	r := detect.ScanOutput(reply)
	fmt.Println(r.Access, r.Tags.Names(), r.Languages)
	for _, f := range r.Findings {
		fmt.Println(f.Tag, "line", f.Line)
	}
	// Output:
	// true [filter map slice group] [ruby]
	// slice line 4
	// filter line 5
	// map line 6
	// group line 6
}

func ExampleScan() {
	code := `
# The history is in context["conversation_history"], a list of dicts.
h = context.get("conversation_history", [])
errors = [r for r in h if not r["outcome_summary"]["ok"]]
print(f"{len(errors)} of {len(h)} calls failed")
`
	r := detect.Scan(code, detect.Python)
	fmt.Println(r.Access, r.Tags)
	fmt.Println(detect.Scan(`log("conversation_history is empty")`, detect.Python).Access)
	// Output:
	// true [filter count]
	// false
}
