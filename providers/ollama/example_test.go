package ollama_test

import (
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/ollama"
)

func Example() {
	p := ollama.Provider{}
	call, _ := p.ParseRequest(&providers.Request{
		Method: "POST",
		URL:    &url.URL{Path: "/api/chat"},
		Body:   []byte(`{"model":"llama3.2","messages":[{"role":"user","content":"Why is the sky blue?"}],"options":{"temperature":0}}`),
	})
	fmt.Println(call.MethodName, call.Model, call.Speaker, call.Stream)
	fmt.Println(string(call.Args))
	fmt.Println(string(call.Kwargs))

	stream := `{"model":"llama3.2","created_at":"2026-03-09T20:20:30Z","message":{"role":"assistant","content":"Rayleigh"},"done":false}` + "\n" +
		`{"model":"llama3.2","created_at":"2026-03-09T20:20:31Z","message":{"role":"assistant","content":" scattering."},"done":false}` + "\n" +
		`{"model":"llama3.2","created_at":"2026-03-09T20:20:31Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop",` +
		`"total_duration":5191566416,"prompt_eval_count":26,"eval_count":4}` + "\n"
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, Body: []byte(stream), Stream: true, EOF: true})
	fmt.Println(res.Output.Text(), res.Outcome.FinishReason, res.Finished)
	fmt.Println("input", res.Usage.InputTokens, "output", res.Usage.OutputTokens, "total", res.Usage.TotalTokens)
	// Output:
	// ollama.chat llama3.2 user true
	// [{"role":"user","parts":[{"type":"text","content":"Why is the sky blue?"}]}]
	// {"model":"llama3.2","options":{"temperature":0}}
	// Rayleigh scattering. stop true
	// input 26 output 4 total 30
}
