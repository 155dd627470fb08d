package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A record's JSON names its answer in a first member of the store's own,
// which reading takes out whole: the rest is the record as it was.
func TestOutputRef(t *testing.T) {
	for _, doc := range []string{`{"call_id":"c1","speaker":"user"}`, `{}`} {
		stored := withOutputRef([]byte(doc), 4711)
		back, id := outputRef(stored)
		assert.Equal(t, doc, string(back))
		assert.Equal(t, int64(4711), id)
	}
	for _, doc := range []string{`{"call_id":"c1"}`, `{"llmhistory_output_message_id":x,"a":1}`, `{"llmhistory_output_message_id":12`} {
		back, id := outputRef([]byte(doc))
		assert.Equal(t, doc, string(back), "no answer named: the record as stored")
		assert.Zero(t, id)
	}
}
