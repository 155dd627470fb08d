package openai_test

import (
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

func Example() {
	p := openai.Provider{}
	call, _ := p.ParseRequest(&providers.Request{
		Method: "POST",
		URL:    &url.URL{Path: "/openai/deployments/prod/chat/completions", RawQuery: "api-version=2024-10-21"},
		Body:   []byte(`{"messages":[{"role":"user","content":"Hi"}],"temperature":0}`),
	})
	fmt.Println(call.MethodName, call.Model, call.Speaker, string(call.Kwargs))

	stream := "data: {\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}],\"usage\":null}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n" +
		"data: [DONE]\n\n"
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, Body: []byte(stream), Stream: true})
	fmt.Println(res.Output.Text(), res.Outcome.FinishReason, res.Usage.TotalTokens, res.Finished)
	// Output:
	// openai.chat.completions.create prod user {"temperature":0}
	// Hello stop 5 true
}

// A recorded answer written back as the stream OpenAI would have sent:
// the provider's own parser reads the same message from it.
func ExampleProvider_RenderResponse() {
	answer := providers.Answer{ID: "chatcmpl-1", Model: "gpt-4o-mini", FinishReason: "stop",
		Message: record.TextMessage(record.RoleAssistant, "Light layers.")}
	_, frames, err := openai.Provider{}.RenderResponse(openai.MethodChat, answer, true)
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		fmt.Print(string(f))
	}
	// Output:
	// data: {"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-1","model":"gpt-4o-mini","object":"chat.completion.chunk"}
	//
	// data: {"choices":[{"delta":{"content":"Light layers."},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-1","model":"gpt-4o-mini","object":"chat.completion.chunk"}
	//
	// data: {"choices":[{"delta":{},"finish_reason":"stop","index":0}],"created":0,"id":"chatcmpl-1","model":"gpt-4o-mini","object":"chat.completion.chunk"}
	//
	// data: [DONE]
}
