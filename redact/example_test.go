package redact_test

import (
	"encoding/json"
	"fmt"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

func ExampleSecrets() {
	fmt.Println(redact.Secrets("calling https://host/v1?key=abc123 with Bearer sk-abcdefghijklmnopqrstuvwxyz"))
	// Output:
	// calling https://host/v1?key=[REDACTED] with Bearer [REDACTED]
}

func ExamplePII() {
	rec := record.Record{
		Args:   json.RawMessage(`[{"role":"user","content":"I am jane@example.com, card 4111 1111 1111 1111"}]`),
		Output: &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: "I will write to jane@example.com."}}},
	}
	redact.PII(redact.WithKey([]byte("our key")))(&rec)
	fmt.Println(string(rec.Args))
	fmt.Println(rec.Output.Text())
	// Output:
	// [{"role":"user","content":"I am [EMAIL:aaeb86], card [CARD:43feb2]"}]
	// I will write to [EMAIL:aaeb86].
}

func ExampleRedactor_String() {
	r := redact.New()
	fmt.Println(r.String("Call +44 20 7946 0958 or write to GB82 WEST 1234 5698 7654 32 from 203.0.113.7"))
	fmt.Println(r.String("Order 112-4837261-9922913 shipped 2024-03-15, v1.2.3, id 3f2504e0-4f89-11d3-9a0c-0305e82c3301"))
	// Output:
	// Call [PHONE] or write to [IBAN] from [IP]
	// Order 112-4837261-9922913 shipped 2024-03-15, v1.2.3, id 3f2504e0-4f89-11d3-9a0c-0305e82c3301
}
