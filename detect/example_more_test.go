package detect_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/detect"
)

// A tool call's JSON arguments that carry code are scanned as code: here
// a JavaScript snippet passed to a code-running tool.
func ExampleScanToolArguments() {
	args := `{"language":"javascript","code":"const recent = context.conversation_history.slice(-5);\nconst byMethod = Object.groupBy(recent, r => r.method_name);\nreturn Object.keys(byMethod).length;"}`
	r := detect.ScanToolArguments(args)
	fmt.Println(r.Access, r.Tags.Names(), r.Languages)
	// Output:
	// true [slice group] [javascript]
}

// A runtime that hands the history to generated code under another name
// says so; the recorder's middleware.WithHistoryNames does the same.
func ExampleNew() {
	d := detect.New("past_calls")
	code := "failed = [c for c in past_calls if not c['outcome_summary']['ok']]"
	fmt.Println(d.Scan(code, detect.Python).Tags)
	fmt.Println(detect.Scan(code, detect.Python).Access) // the default name only
	// Output:
	// [filter]
	// false
}

// Tags are a stable set, written in a record's history_query_patterns by
// name.
func ExampleTagSet() {
	r := detect.Scan("for r in sorted(conversation_history, key=lambda r: r['timestamp']): print(r)", detect.Python)
	fmt.Println(r.Tags.Names(), r.Tags.Has(detect.Iterate), r.Tags.Len())
	for _, t := range detect.AllTags() {
		fmt.Print(t, " ")
	}
	fmt.Println()
	// Output:
	// [sort iterate] true 2
	// filter map slice count group sort reduce search iterate
}

// Guess tells the language of unfenced code from its marks.
func ExampleGuess() {
	for _, code := range []string{
		"h := ctx.History\nfor _, r := range h {\n}",
		"const h = context.conversation_history;",
		"def last(h):\n    return h[-1]",
		"context[:conversation_history].each { |r| puts r }",
	} {
		fmt.Println(detect.Guess(code))
	}
	// Output:
	// go
	// javascript
	// python
	// ruby
}
