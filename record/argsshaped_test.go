package record_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/record"
)

// A record the history added, continuing the previous record of its
// trace, carries args the history checked: a sink may take them as they
// are. Args changed since, and a record the history did not add, say
// nothing.
func TestArgsShaped(t *testing.T) {
	mem := record.NewMemory(10)
	system := `{"role":"system","content":"` + strings.Repeat("Be brief. ", 20) + `"}`
	first := record.Record{CallID: "a", TraceID: "t", Args: json.RawMessage(`[` + system + `]`)}
	assert.False(t, first.ArgsShaped(), "not added")
	added := mem.Add(first)
	assert.False(t, added.ArgsShaped(), "continues nothing")
	second := mem.Add(record.Record{CallID: "b", TraceID: "t", Args: json.RawMessage(`[` + system + `,{"role":"user","content":"hi"}]`)})
	assert.True(t, second.ArgsShaped())
	changed := second
	changed.Args = json.RawMessage(`[` + system + `, {"role":"user","content":"hello"}]`)
	assert.False(t, changed.ArgsShaped(), "args replaced since")
	normalized := second
	normalized.Normalize()
	assert.False(t, normalized.ArgsShaped(), "Normalize forgets what the history found")
}
