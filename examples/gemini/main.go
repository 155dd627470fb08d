// Command gemini wraps a google.golang.org/genai client with the
// llmhistory recorder, makes a generateContent call and a streamed one,
// and prints their history records as JSON lines.
//
// With GEMINI_API_KEY set it calls the Gemini API (GEMINI_MODEL picks the
// model, gemini-2.5-flash by default); otherwise it starts a fake Gemini
// server on loopback and calls that, so it runs anywhere:
//
//	go run ./examples/gemini
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/gemini"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gemini example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	rec := middleware.NewRecorder(middleware.WithProviders(gemini.Provider{}))
	defer rec.Close()

	cfg := &genai.ClientConfig{
		APIKey:     os.Getenv("GEMINI_API_KEY"),
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: rec.Client(nil), // the one line that records every call
	}
	if cfg.APIKey == "" {
		srv := httptest.NewServer(fakeGemini())
		defer srv.Close()
		cfg.APIKey = "fake-key-for-the-embedded-server"
		cfg.HTTPOptions.BaseURL = srv.URL
		fmt.Fprintln(os.Stderr, "GEMINI_API_KEY is not set: calling an embedded fake server at", srv.URL)
	}
	model := os.Getenv("GEMINI_MODEL")
	if model == "" {
		model = "gemini-2.5-flash"
	}
	client, err := genai.NewClient(ctx, cfg)
	if err != nil {
		return err
	}

	ctx = middleware.WithTrace(ctx, "example-conversation")
	contents := genai.Text("Say hello in five words.")
	resp, err := client.Models.GenerateContent(ctx, model, contents, nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "answer:", resp.Text())

	if len(resp.Candidates) > 0 && resp.Candidates[0].Content != nil {
		contents = append(contents, resp.Candidates[0].Content)
	}
	contents = append(contents, genai.NewContentFromText("Now count to three.", genai.RoleUser))
	fmt.Fprint(os.Stderr, "streamed: ")
	for chunk, err := range client.Models.GenerateContentStream(ctx, model, contents, nil) {
		if err != nil {
			return err
		}
		fmt.Fprint(os.Stderr, chunk.Text())
	}
	fmt.Fprintln(os.Stderr)

	for _, r := range rec.History().Records() {
		if _, err := out.Write(append(r.AppendJSON(nil), '\n')); err != nil {
			return err
		}
	}
	return nil
}

// fakeGemini answers generateContent and streamGenerateContent?alt=sse as
// the Gemini API does: a JSON response, or server-sent events with CRLF
// frames, a cumulative usageMetadata on every chunk and no [DONE].
func fakeGemini() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":generateContent"):
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"Hello there, nice to meet!"}],"role":"model"},"finishReason":"STOP","index":0}],`+
				`"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":7,"totalTokenCount":41,"thoughtsTokenCount":26},`+
				`"modelVersion":"gemini-2.5-flash","responseId":"fake-response-1"}`)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			w.Header().Set("Content-Type", "text/event-stream")
			f, _ := w.(http.Flusher)
			pieces := []string{"One", ", two", ", three."}
			for i, text := range pieces {
				finish, usage := "", `"promptTokenCount":24,"totalTokenCount":24`
				if i == len(pieces)-1 {
					finish, usage = `,"finishReason":"STOP"`, `"promptTokenCount":24,"candidatesTokenCount":6,"totalTokenCount":30`
				}
				fmt.Fprintf(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":%q}],\"role\":\"model\"}%s,\"index\":0}],"+
					"\"usageMetadata\":{%s},\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"fake-response-2\"}\r\n\r\n", text, finish, usage)
				if f != nil {
					f.Flush()
				}
			}
		default:
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":404,"message":"Not found: `+r.URL.Path+`","status":"NOT_FOUND"}}`)
		}
	})
}
