package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstAndLastValue(t *testing.T) {
	tail := []byte(`more text","tool_calls":[{"id":"call_1"}]},"finish_reason":"tool_calls"},{"index":1,"finish_reason" : "stop"}],"usage":{"prompt_tokens":3,"x":[1,"]"]},"id":7}`)
	for _, tt := range []struct {
		key, first, last string
	}{
		{`"finish_reason"`, `"tool_calls"`, `"stop"`},
		{`"usage"`, `{"prompt_tokens":3,"x":[1,"]"]}`, `{"prompt_tokens":3,"x":[1,"]"]}`},
		{`"id"`, `"call_1"`, `7`},
		{`"absent"`, ``, ``},
	} {
		assert.Equal(t, tt.first, string(FirstValue(tail, tt.key)), "first %s", tt.key)
		assert.Equal(t, tt.last, string(LastValue(tail, tt.key)), "last %s", tt.key)
	}
	assert.Nil(t, LastValue([]byte(`"usage":{"prompt_tokens":3`), `"usage"`), "a value cut off is not whole")
	assert.Nil(t, LastValue([]byte(`"usage" "x"`), `"usage"`), "not a key")
}
