package finetune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The validators accept the documentation's own examples, and refuse
// each of them spoiled in a way the documentation forbids.
func TestFineTuneSamplesPass(t *testing.T) {
	spoil := map[string][]func(string) string{
		"openai": {
			func(s string) string { return strings.Replace(s, `"role":"assistant"`, `"role":"bot"`, 1) },
			func(s string) string { return strings.Replace(s, `{"messages"`, `{"extra":1,"messages"`, 1) },
			func(s string) string {
				return strings.Replace(s, `"tool_call_id":"call_id"`, `"tool_call_id":"nope"`, 1)
			},
		},
		"gemini": {
			func(s string) string { return strings.Replace(s, `"role":"model"`, `"role":"assistant"`, 1) },
			func(s string) string { return strings.Replace(s, `"args":{`, `"args":"{`, 1) },
		},
		"anthropic": {
			func(s string) string { return strings.Replace(s, `{"role":"user"`, `{"role":"assistant"`, 1) },
			func(s string) string { return strings.Replace(s, `"messages"`, `"tools":[],"messages"`, 1) },
		},
	}
	for _, f := range []string{"openai", "gemini", "anthropic"} {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", f+".jsonl"))
			require.NoError(t, err)
			require.NoError(t, Check(f, data))
			for i, sp := range spoil[f] {
				bad := sp(string(data))
				require.NotEqual(t, string(data), bad, "spoiler %d changes the sample", i)
				assert.Error(t, Check(f, []byte(bad)), "spoiler %d", i)
			}
		})
	}
}
