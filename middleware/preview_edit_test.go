package middleware

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/internal/edittest"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

func TestSummaryLine(t *testing.T) {
	out := record.TextMessage(record.RoleAssistant, "secret output")
	rec := record.Record{
		Timestamp: "2025-03-01T12:01:03.123Z", Speaker: "agent", MethodName: "openai.chat.completions.create",
		Model: "gpt-4o", Outcome: record.Success("chat.completion"), DurationMS: 812.4,
		Args: []byte(`["secret payload"]`), Output: &out, ProgramSource: "secret source",
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

// FuzzPreviewEdit: the built-in providers' AddGuidance never panics,
// keeps a JSON body JSON, never changes its input, and either leaves the
// body alone (false) or adds one run of bytes holding the guidance.
func FuzzPreviewEdit(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"messages":[]}`, ` {"messages" : [ ] } `, `{"input":"x","instructions":"a\u00e9\"b"}`,
		`{"instructions":null}`, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		`{"contents":[],"systemInstruction":{"parts":[{"text":"a"}]}}`,
		`{"contents":[],"system_instruction":{"parts":[ ]}}`, `{"contents":[],"systemInstruction":{}}`,
		`{"model":"claude","messages":[],"system":"Be brief."}`, `{"messages":[],"system":[{"type":"text","text":"x"}]}`,
		`{"mess\u0061ges":[1]}`, `{"messages":[1],"messages":[2]}`, `[]`, `"x"`, `{`, ``,
	} {
		for api := range len(guidanceTargets) {
			f.Add(api, []byte(s), "History: 1 record.\n- line")
		}
	}
	f.Fuzz(func(t *testing.T, api int, body []byte, text string) {
		target := guidanceTargets[(api%len(guidanceTargets)+len(guidanceTargets))%len(guidanceTargets)]
		keep := bytes.Clone(body)
		got, ok := target.editor.AddGuidance(&providers.Request{Method: "POST", URL: &url.URL{Path: target.path}, Body: body}, text)
		if !bytes.Equal(body, keep) {
			t.Fatal("the input changed")
		}
		if !ok {
			return
		}
		if gjson.ValidBytes(body) && !gjson.ValidBytes(got) {
			t.Fatalf("valid JSON in, invalid out:\n%q\n%q", body, got)
		}
		ins, one := edittest.Insertion(body, got)
		if !one || len(ins) == 0 {
			t.Fatalf("not a single insertion:\n%q\n%q", body, got)
		}
	})
}

// guidanceTargets are the endpoints of the built-in providers that take
// the guidance.
var guidanceTargets = func() (out []struct {
	editor providers.GuidanceEditor
	path   string
}) {
	for _, path := range []string{"/v1/chat/completions", "/v1/responses", "/v1beta/models/g:generateContent", "/v1/messages"} {
		u := &url.URL{Path: path}
		p, _, ok := providers.Match(builtinProviders, &providers.Request{Method: "POST", URL: u})
		ed, isEditor := p.(providers.GuidanceEditor)
		if !ok || !isEditor {
			panic("no built-in provider takes guidance at " + path)
		}
		out = append(out, struct {
			editor providers.GuidanceEditor
			path   string
		}{ed, path})
	}
	return out
}()

// BenchmarkEditBody is the edit alone, on a 4 KiB conversation.
func BenchmarkEditBody(b *testing.B) {
	turns := strings.Repeat(`{"role":"user","content":"`+strings.Repeat("question ", 40)+`"},{"role":"assistant","content":"`+strings.Repeat("answer ", 40)+`"},`, 6)
	text := HistoryGuidance + "\n\nHistory: 3 records in this conversation (trace t). Latest:" +
		strings.Repeat("\n- 12:01:03 agent openai.chat.completions.create model=gpt-4o ok chat.completion 812ms", 3)
	for _, tc := range []struct {
		name   string
		target int
		body   string
	}{
		{"openai", 0, `{"model":"gpt-4o-mini","messages":[` + turns + `{"role":"user","content":"And then?"}],"temperature":0.2}`},
		{"gemini", 2, `{"contents":[` + strings.ReplaceAll(turns, `"content"`, `"text"`) + `{"role":"user"}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}`},
		{"anthropic", 3, `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"Be brief.","messages":[` + turns + `{"role":"user","content":"And then?"}]}`},
	} {
		body := []byte(tc.body)
		target := guidanceTargets[tc.target]
		req := &providers.Request{Method: "POST", URL: &url.URL{Path: target.path}, Body: body}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := target.editor.AddGuidance(req, text); !ok {
					b.Fatal("not edited")
				}
			}
		})
	}
}
