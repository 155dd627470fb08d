package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestElideBase64(t *testing.T) {
	img := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 100) // 2400 bytes
	tests := []struct {
		name, in, want string
		elided         bool
	}{
		{"data url", `[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + img + `"}}]`,
			`[{"type":"image_url","image_url":{"url":"data:image/png;base64,[elided 2400 bytes]"}}]`, true},
		{"gemini inline data", `{"inlineData":{"mimeType":"audio/wav","data":"` + img + `"}}`,
			`{"inlineData":{"mimeType":"audio/wav","data":"[base64 elided: 2400 bytes]"}}`, true},
		{"escaped slashes", `["` + strings.Repeat(`ab\/cd`, 200) + `"]`, `["[base64 elided: 1200 bytes]"]`, true},
		{"long prose stays", `["` + strings.Repeat("the cat sat. ", 100) + `"]`, "", false},
		{"short base64 stays", `["aGVsbG8="]`, "", false},
		{"keys untouched", `{"` + img + `":1}`, `{"[base64 elided: 2400 bytes]":1}`, true},
		{"not base64 data url", `["data:text/plain,` + strings.Repeat("x", 600) + `"]`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, elided := ElideBase64([]byte(tt.in))
			assert.Equal(t, tt.elided, elided)
			if !tt.elided {
				assert.Equal(t, tt.in, string(got))
				return
			}
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func FuzzElideBase64(f *testing.F) {
	f.Add([]byte(`["data:image/png;base64,` + strings.Repeat("A", 600) + `"]`))
	f.Add([]byte(`{"a":"` + strings.Repeat(`\/`, 400) + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, elided := ElideBase64(b)
		if !elided {
			require.Equal(t, b, got)
			return
		}
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("elision broke valid JSON:\n%q\n%q", b, got)
		}
	})
}
