package main

import (
	"context"
	"os"
	"strings"
)

// The scan subcommand reads generated code from standard input and says
// how it queries the history.
func Example_scan() {
	code := `recent = conversation_history.select { |r| r[:speaker] == "user" }.last(3)`
	run(context.Background(), []string{"scan", "-lang", "ruby"},
		stdio{in: strings.NewReader(code), out: os.Stdout, err: os.Stderr})
	// Output:
	// <stdin>: history access, tags filter,slice, language ruby
	//   <stdin>:1	filter	recent = conversation_history.select { |r| r[:speaker] == "user" }.last(3)
	//   <stdin>:1	slice	recent = conversation_history.select { |r| r[:speaker] == "user" }.last(3)
}
