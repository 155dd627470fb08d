package redact_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/redact"
)

func ExampleSecrets() {
	fmt.Println(redact.Secrets("calling https://host/v1?key=abc123 with Bearer sk-abcdefghijklmnopqrstuvwxyz"))
	// Output:
	// calling https://host/v1?key=[REDACTED] with Bearer [REDACTED]
}
