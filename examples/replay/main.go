// Command replay runs a small agent (it asks a model, calls the tool the
// model asks for, and asks again, streaming the answer) against a
// cassette, so it runs offline and gives the same answer every time; its
// test, agent_test.go, is how an application tests its agent in CI.
//
//	go run ./examples/replay                          # replays testdata/agent.jsonl: no key, no network
//	go run ./examples/replay -q "Weather in Rome?"    # not recorded: the error says what differs
//
// The cassette testdata/agent.jsonl was recorded against a local fake
// OpenAI server answering with the byte shapes of the real API (its URLs
// say 127.0.0.1); record it again from the real API, here or in the test:
//
//	LLMHISTORY_REPLAY=record OPENAI_API_KEY=sk-... go run ./examples/replay
//	LLMHISTORY_REPLAY=record OPENAI_API_KEY=sk-... go test ./examples/replay -run TestAgent
//
// Re-record when the prompt, the tools, the model or the calls the agent
// makes change, or when the provider's API did: the test fails with a
// replay.MissError that names the closest recorded call and each field
// that differs. OPENAI_BASE_URL points the agent at another
// OpenAI-compatible server; OPENAI_MODEL picks the model (gpt-4o-mini).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/replay"
)

func main() {
	cassette := flag.String("cassette", "examples/replay/testdata/agent.jsonl", "the cassette (the default is for a run from the repository's root)")
	question := flag.String("q", "What's the weather in Paris?", "the question")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *cassette, *question); err != nil {
		fmt.Fprintln(os.Stderr, "replay example:", err)
		os.Exit(1)
	}
}

// run asks the agent question through the cassette and prints the answer
// as it streams, then the history the recorder made of the calls.
func run(ctx context.Context, out io.Writer, path, question string) (err error) {
	cassette, err := replay.New(path) // the mode comes from LLMHISTORY_REPLAY: replay by default
	if err != nil {
		return err
	}
	defer func() {
		if cerr := cassette.Close(); err == nil {
			err = cerr
		}
	}()
	rec := middleware.NewRecorder()
	defer rec.Close()
	agent := &Agent{Client: newClient(middleware.NewClient(nil, rec.Middleware(), cassette.Middleware())), Model: model(), Tools: []Tool{Weather(nil)}}

	fmt.Fprintf(out, "%s (%s)\n> %s\n", path, cassette.Mode(), question)
	if _, err := agent.Ask(middleware.WithTrace(ctx, "replay-example"), question, func(tok string) { fmt.Fprint(out, tok) }); err != nil {
		return err
	}
	fmt.Fprintln(out)
	for _, r := range rec.History().Records() {
		fmt.Fprintf(out, "record: %s %s speaker=%s finish=%s tokens=%d attempts=%d\n", r.MethodName, r.Outcome.Status, r.Speaker, r.Outcome.FinishReason, usage(r.Usage), max(r.Attempts, 1))
	}
	return nil
}

// newClient is a go-openai client over hc, for the API key and base URL of
// the environment. In replay the key is not needed, and not recorded when
// recording.
func newClient(hc *http.Client) *openai.Client {
	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		cfg.BaseURL = base
	}
	cfg.HTTPClient = hc
	return openai.NewClientWithConfig(cfg)
}

func model() string {
	if m := os.Getenv("OPENAI_MODEL"); m != "" {
		return m
	}
	return openai.GPT4oMini
}

func usage(u *record.Usage) int {
	if u == nil {
		return 0
	}
	return u.TotalTokens
}
