package gemini_test

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/internal/edittest"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
)

func TestAddGuidance(t *testing.T) {
	const text = "guide \"me\"\n<now>"
	const q = `"guide \"me\"\n\u003cnow\u003e"`
	const generate, stream = "/v1beta/models/gemini-2.0-flash:generateContent", "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
	for _, tc := range []struct {
		name, path, in string
		want           string // "" means untouched
	}{
		{"add", generate, `{"contents":[{"parts":[{"text":"hi"}]}]}`,
			`{"contents":[{"parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":` + q + `}]}}`},
		{"append", stream,
			`{"contents":[],"systemInstruction":{"role":"user","parts":[{"text":"Be brief."}]},"generationConfig":{}}`,
			`{"contents":[],"systemInstruction":{"role":"user","parts":[{"text":"Be brief."},{"text":` + q + `}]},"generationConfig":{}}`},
		{"snake", generate,
			`{"system_instruction":{"parts":[]},"contents":[]}`,
			`{"system_instruction":{"parts":[{"text":` + q + `}]},"contents":[]}`},
		{"no parts", generate, `{"contents":[],"systemInstruction":{"role":"user"}}`,
			`{"contents":[],"systemInstruction":{"role":"user","parts":[{"text":` + q + `}]}}`},
		{"both spellings", generate, `{"contents":[],"systemInstruction":{"parts":[]},"system_instruction":{"parts":[]}}`, ""},
		{"parts not an array", generate, `{"contents":[],"systemInstruction":{"parts":{}}}`, ""},
		{"instruction a string", generate, `{"contents":[],"systemInstruction":"x"}`, ""},
		{"no contents", generate, `{"model":"m"}`, ""},
		{"countTokens", "/v1beta/models/gemini-2.0-flash:countTokens", `{"contents":[]}`, ""},
		{"embedContent", "/v1beta/models/text-embedding-004:embedContent", `{"content":{"parts":[]},"contents":[]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			keep := bytes.Clone(in)
			got, ok := gemini.Provider{}.AddGuidance(&providers.Request{Method: "POST", URL: &url.URL{Path: tc.path}, Body: in}, text)
			if !bytes.Equal(in, keep) {
				t.Fatal("the input changed")
			}
			if tc.want == "" {
				if ok {
					t.Fatalf("edited a body it should not touch:\n%s", got)
				}
				return
			}
			if !ok || string(got) != tc.want {
				t.Fatalf("ok %v\ngot  %s\nwant %s", ok, got, tc.want)
			}
			if !gjson.ValidBytes(got) {
				t.Fatalf("not JSON: %s", got)
			}
			if _, one := edittest.Insertion(in, got); !one {
				t.Fatalf("more than one insertion: %s", got)
			}
		})
	}
}
