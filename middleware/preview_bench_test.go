package middleware_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/middleware"
)

// A conversation of a few turns, about 4 KiB as an SDK sends it.
var (
	benchChat = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."}` +
		strings.Repeat(`,{"role":"user","content":"`+strings.Repeat("question ", 40)+`"},{"role":"assistant","content":"`+strings.Repeat("answer ", 40)+`"}`, 6) +
		`,{"role":"user","content":"And then?"}],"temperature":0.2}`
	benchGemini = `{"contents":[` + strings.Repeat(`{"role":"user","parts":[{"text":"`+strings.Repeat("question ", 40)+`"}]},{"role":"model","parts":[{"text":"`+strings.Repeat("answer ", 40)+`"}]},`, 6) +
		`{"role":"user","parts":[{"text":"And then?"}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"generationConfig":{"temperature":0.2}}`
)

// BenchmarkPreviewOpenAI measures a chat call through the recorder, with
// no network: the cost the preview adds to a call's path (asking the
// providers, summarizing the trace's latest records, editing the body).
func BenchmarkPreviewOpenAI(b *testing.B) {
	benchPreview(b, "https://api.openai.com/v1/chat/completions", benchChat, chatResponse)
}

func BenchmarkPreviewGemini(b *testing.B) {
	benchPreview(b, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent", benchGemini, geminiResponse)
}

func benchPreview(b *testing.B, url, body, answer string) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
	})
	for _, mode := range []struct {
		name string
		opts []middleware.Option
	}{
		{"off", nil},
		{"on", []middleware.Option{middleware.WithHistoryPreview(3)}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			rec := middleware.NewRecorder(mode.opts...)
			defer rec.Close()
			rt := middleware.Chain(base, rec.Middleware())
			ctx := middleware.WithTrace(context.Background(), "bench")
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
