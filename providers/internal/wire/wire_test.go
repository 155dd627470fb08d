package wire_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

func Example() {
	body := []byte(`{"model":"gpt-4o-mini","usage":{"total_tokens":12}}`)
	root := wire.Parse(body)
	model := wire.Str(root.Get("model")) // a copy: safe after body is reused
	body[2] = 'X'
	fmt.Println(model, root.Get("usage.total_tokens").Int())
	// Output: gpt-4o-mini 12
}
