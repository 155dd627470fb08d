package middleware

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/record"
)

// insertion returns what was inserted into in to give out, when out is in
// with one run of bytes added and nothing else changed.
func insertion(in, out []byte) ([]byte, bool) {
	if len(out) < len(in) {
		return nil, false
	}
	p := 0
	for p < len(in) && in[p] == out[p] {
		p++
	}
	if !bytes.HasSuffix(out, in[p:]) {
		return nil, false
	}
	return out[p : len(out)-len(in)+p], true
}

func TestEditBody(t *testing.T) {
	const text = "guide \"me\"\n<now>"
	const q = `"guide \"me\"\n\u003cnow\u003e"`
	for _, tc := range []struct {
		name string
		api  previewAPI
		in   string
		want string // "" means untouched
	}{
		{"chat", apiOpenAIChat,
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"m","messages":[{"role":"system","content":` + q + `},{"role":"user","content":"hi"}]}`},
		{"chat spaced", apiOpenAIChat,
			"\n {\"messages\" : [ {\"role\":\"user\"} ] , \"stream\":true}\n",
			"\n {\"messages\" : [{\"role\":\"system\",\"content\":" + q + "}, {\"role\":\"user\"} ] , \"stream\":true}\n"},
		{"chat empty", apiOpenAIChat, `{"messages":[ ]}`, `{"messages":[{"role":"system","content":` + q + `} ]}`},
		{"chat keeps a system message", apiOpenAIChat,
			`{"messages":[{"role":"system","content":"Be brief."}]}`,
			`{"messages":[{"role":"system","content":` + q + `},{"role":"system","content":"Be brief."}]}`},
		{"chat no messages", apiOpenAIChat, `{"model":"m"}`, ""},
		{"chat messages not an array", apiOpenAIChat, `{"messages":"hi"}`, ""},
		{"chat nested messages only", apiOpenAIChat, `{"x":{"messages":[]}}`, ""},
		{"not json", apiOpenAIChat, `{"messages":[}`, ""},
		{"array", apiOpenAIChat, `[{"messages":[]}]`, ""},
		{"empty", apiOpenAIChat, ``, ""},
		{"trailing garbage", apiOpenAIChat, `{"messages":[]} x`, ""},

		{"responses add", apiOpenAIRespns, `{"model":"m","input":"hi"}`, `{"model":"m","input":"hi","instructions":` + q + `}`},
		{"responses empty object", apiOpenAIRespns, `{ }`, `{ "instructions":` + q + `}`},
		{"responses append", apiOpenAIRespns,
			`{"instructions":"Be br\u0069ef.","input":"hi"}`,
			`{"instructions":"Be br\u0069ef.\n\n` + q[1:len(q)-1] + `","input":"hi"}`},
		{"responses null", apiOpenAIRespns, `{"instructions":null,"input":"hi"}`, ""},

		{"gemini add", apiGemini, `{"contents":[{"parts":[{"text":"hi"}]}]}`,
			`{"contents":[{"parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":` + q + `}]}}`},
		{"gemini append", apiGemini,
			`{"contents":[],"systemInstruction":{"role":"user","parts":[{"text":"Be brief."}]},"generationConfig":{}}`,
			`{"contents":[],"systemInstruction":{"role":"user","parts":[{"text":"Be brief."},{"text":` + q + `}]},"generationConfig":{}}`},
		{"gemini snake", apiGemini,
			`{"system_instruction":{"parts":[]},"contents":[]}`,
			`{"system_instruction":{"parts":[{"text":` + q + `}]},"contents":[]}`},
		{"gemini no parts", apiGemini, `{"contents":[],"systemInstruction":{"role":"user"}}`,
			`{"contents":[],"systemInstruction":{"role":"user","parts":[{"text":` + q + `}]}}`},
		{"gemini both spellings", apiGemini, `{"contents":[],"systemInstruction":{"parts":[]},"system_instruction":{"parts":[]}}`, ""},
		{"gemini parts not an array", apiGemini, `{"contents":[],"systemInstruction":{"parts":{}}}`, ""},
		{"gemini instruction a string", apiGemini, `{"contents":[],"systemInstruction":"x"}`, ""},
		{"gemini no contents", apiGemini, `{"model":"m"}`, ""},

		{"none", apiNone, `{"messages":[]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			keep := bytes.Clone(in)
			got, ok := editBody(tc.api, in, text)
			if !bytes.Equal(in, keep) {
				t.Fatal("the input changed")
			}
			if tc.want == "" {
				if ok || !bytes.Equal(got, in) {
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
			if _, one := insertion(in, got); !one {
				t.Fatalf("more than one insertion: %s", got)
			}
		})
	}
}

func TestSummaryLine(t *testing.T) {
	rec := record.Record{
		Timestamp: "2025-03-01T12:01:03.123Z", Speaker: "agent", MethodName: "openai.chat.completions.create",
		Model: "gpt-4o", Outcome: record.Success("chat.completion"), DurationMS: 812.4,
		Args: []byte(`["secret payload"]`), Output: "secret output", ProgramSource: "secret source",
	}
	if got, want := summaryLine(&rec), "- 12:01:03 agent openai.chat.completions.create model=gpt-4o ok chat.completion 812ms"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	rec.Outcome, rec.ErrorType, rec.Attempts = record.Failure(record.ErrorRateLimit), record.ErrorRateLimit, 3
	rec.ErrorMessage = "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123"
	if got, want := summaryLine(&rec), "- 12:01:03 agent openai.chat.completions.create model=gpt-4o error rate_limit attempts=3 812ms"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Whatever the wire put in a model name: one line, no key, bounded.
	rec.Model = "m\nx sk-proj-abcdefghijklmnopqrstuvwxyz0123 " + strings.Repeat("é", 100)
	got := summaryLine(&rec)
	if len(got) > maxPreviewLine || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r") ||
		strings.Contains(got, "sk-proj") || !strings.HasSuffix(got, "…") {
		t.Errorf("bad line (%d bytes): %q", len(got), got)
	}
}

// FuzzPreviewEdit: editBody never panics, keeps a JSON body JSON, never
// changes its input, and either leaves the body as it was or adds one run
// of bytes holding the guidance.
func FuzzPreviewEdit(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"messages":[]}`, ` {"messages" : [ ] } `, `{"input":"x","instructions":"a\u00e9\"b"}`,
		`{"instructions":null}`, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		`{"contents":[],"systemInstruction":{"parts":[{"text":"a"}]}}`,
		`{"contents":[],"system_instruction":{"parts":[ ]}}`, `{"contents":[],"systemInstruction":{}}`,
		`{"mess\u0061ges":[1]}`, `{"messages":[1],"messages":[2]}`, `[]`, `"x"`, `{`, ``,
	} {
		for api := range 4 {
			f.Add(api, []byte(s), "History: 1 record.\n- line")
		}
	}
	f.Fuzz(func(t *testing.T, api int, body []byte, text string) {
		kind := previewAPI(api & 3)
		keep := bytes.Clone(body)
		got, ok := editBody(kind, body, text)
		if !bytes.Equal(body, keep) {
			t.Fatal("the input changed")
		}
		if !ok {
			if !bytes.Equal(got, body) {
				t.Fatalf("not recognized, yet changed:\n%q\n%q", body, got)
			}
			return
		}
		if gjson.ValidBytes(body) && !gjson.ValidBytes(got) {
			t.Fatalf("valid JSON in, invalid out:\n%q\n%q", body, got)
		}
		ins, one := insertion(body, got)
		if !one || len(ins) == 0 {
			t.Fatalf("not a single insertion:\n%q\n%q", body, got)
		}
	})
}

// BenchmarkEditBody is the edit alone, on a 4 KiB conversation.
func BenchmarkEditBody(b *testing.B) {
	turns := strings.Repeat(`{"role":"user","content":"`+strings.Repeat("question ", 40)+`"},{"role":"assistant","content":"`+strings.Repeat("answer ", 40)+`"},`, 6)
	text := HistoryGuidance + "\n\nHistory: 3 records in this conversation (trace t). Latest:" +
		strings.Repeat("\n- 12:01:03 agent openai.chat.completions.create model=gpt-4o ok chat.completion 812ms", 3)
	for _, tc := range []struct {
		name string
		api  previewAPI
		body string
	}{
		{"openai", apiOpenAIChat, `{"model":"gpt-4o-mini","messages":[` + turns + `{"role":"user","content":"And then?"}],"temperature":0.2}`},
		{"gemini", apiGemini, `{"contents":[` + strings.ReplaceAll(turns, `"content"`, `"text"`) + `{"role":"user"}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}`},
	} {
		body := []byte(tc.body)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := editBody(tc.api, body, text); !ok {
					b.Fatal("not edited")
				}
			}
		})
	}
}
