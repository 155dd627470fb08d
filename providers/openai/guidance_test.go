package openai_test

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/internal/edittest"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/openai"
)

func TestAddGuidance(t *testing.T) {
	const text = "guide \"me\"\n<now>"
	const q = `"guide \"me\"\n\u003cnow\u003e"`
	const chat, responses = "/v1/chat/completions", "/v1/responses"
	for _, tc := range []struct {
		name, path, in string
		want           string // "" means untouched
	}{
		{"chat", chat,
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"m","messages":[{"role":"system","content":` + q + `},{"role":"user","content":"hi"}]}`},
		{"chat spaced", chat,
			"\n {\"messages\" : [ {\"role\":\"user\"} ] , \"stream\":true}\n",
			"\n {\"messages\" : [{\"role\":\"system\",\"content\":" + q + "}, {\"role\":\"user\"} ] , \"stream\":true}\n"},
		{"chat empty", chat, `{"messages":[ ]}`, `{"messages":[{"role":"system","content":` + q + `} ]}`},
		{"chat keeps a system message", chat,
			`{"messages":[{"role":"system","content":"Be brief."}]}`,
			`{"messages":[{"role":"system","content":` + q + `},{"role":"system","content":"Be brief."}]}`},
		{"chat no messages", chat, `{"model":"m"}`, ""},
		{"chat messages not an array", chat, `{"messages":"hi"}`, ""},
		{"chat nested messages only", chat, `{"x":{"messages":[]}}`, ""},
		{"not json", chat, `{"messages":[}`, ""},
		{"array", chat, `[{"messages":[]}]`, ""},
		{"empty", chat, ``, ""},
		{"trailing garbage", chat, `{"messages":[]} x`, ""},

		{"responses add", responses, `{"model":"m","input":"hi"}`, `{"model":"m","input":"hi","instructions":` + q + `}`},
		{"responses empty object", responses, `{ }`, `{ "instructions":` + q + `}`},
		{"responses append", responses,
			`{"instructions":"Be br\u0069ef.","input":"hi"}`,
			`{"instructions":"Be br\u0069ef.\n\n` + q[1:len(q)-1] + `","input":"hi"}`},
		{"responses empty instructions", responses, `{"instructions":"","input":"hi"}`, `{"instructions":` + q + `,"input":"hi"}`},
		{"responses null", responses, `{"instructions":null,"input":"hi"}`, ""},

		{"legacy completions", "/v1/completions", `{"model":"m","prompt":"hi","messages":[]}`, ""},
		{"embeddings", "/v1/embeddings", `{"model":"m","input":"hi"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			keep := bytes.Clone(in)
			got, ok := openai.Provider{}.AddGuidance(&providers.Request{Method: "POST", URL: &url.URL{Path: tc.path}, Body: in}, text)
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
	if _, ok := (openai.Provider{}).AddGuidance(&providers.Request{Method: "POST", URL: &url.URL{Path: chat}, Body: []byte(`{"messages":[]}`), BodyTruncated: true}, text); ok {
		t.Error("a body cut by the capture is not edited")
	}
}
