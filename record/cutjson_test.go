package record_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/record"
)

func TestCutJSON(t *testing.T) {
	doc := `{"id":"c1","choices":[{"message":{"content":"héllo \"there\" \u00e9"},"n":-1.5e3,"ok":true,"x":null}],"usage":{}}`
	for i := 1; i < len(doc); i++ {
		assert.True(t, record.CutJSON([]byte(doc[:i])), "prefix %q", doc[:i])
	}
	for _, b := range []string{doc, `{"a":1}x`, `<html>`, `{"a":tru }`, `{"a" 1`, ``, `   `} {
		assert.False(t, record.CutJSON([]byte(b)), "%q", b)
	}
}
