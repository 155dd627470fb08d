package openai_test

import (
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/openai"
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
