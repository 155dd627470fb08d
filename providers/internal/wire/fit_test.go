package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpeakerForRole(t *testing.T) {
	for role, want := range map[string]string{"user": "user", "system": "user", "developer": "user", "tool": "tool", "function": "tool",
		"assistant": "agent", "model": "agent", "Assistant": "agent", "": ""} {
		assert.Equal(t, want, SpeakerForRole(role), role)
	}
}

func TestFitArray(t *testing.T) {
	elems := [][]byte{[]byte(`"aaaa"`), []byte(`"bbbb"`), []byte(`"cccc"`)}
	got, cut := FitArray(elems, 100)
	assert.False(t, cut)
	assert.Equal(t, `["aaaa","bbbb","cccc"]`, string(got))
	long := func(c string) []byte { return []byte(`"` + strings.Repeat(c, 78) + `"`) }
	elems = [][]byte{long("a"), long("b"), long("c")}
	got, cut = FitArray(elems, 200)
	assert.True(t, cut)
	assert.True(t, json.Valid(got))
	assert.LessOrEqual(t, len(got), 200)
	var arr []string
	require.NoError(t, json.Unmarshal(got, &arr))
	assert.Equal(t, []string{"…[2 earlier items cut]", strings.Repeat("c", 78)}, arr, "the latest turns are kept")
	got, _ = FitArray[[]byte](nil, 10)
	assert.Equal(t, `[]`, string(got))
}
