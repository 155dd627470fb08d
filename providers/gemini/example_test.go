package gemini_test

import (
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
)

func Example() {
	p := gemini.Provider{}
	call, _ := p.ParseRequest(&providers.Request{
		Method: "POST",
		URL:    &url.URL{Path: "/v1beta/models/gemini-2.0-flash:streamGenerateContent", RawQuery: "alt=sse"},
		Body: []byte(`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],` +
			`"systemInstruction":{"parts":[{"text":"Be brief."}]},"generationConfig":{"temperature":0}}`),
	})
	fmt.Println(call.MethodName, call.Model, call.Speaker)
	fmt.Println(string(call.Args))
	fmt.Println(string(call.Kwargs))

	stream := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}],\"usageMetadata\":{\"promptTokenCount\":3,\"totalTokenCount\":3},\"modelVersion\":\"gemini-2.0-flash\"}\r\n\r\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2,\"totalTokenCount\":5},\"modelVersion\":\"gemini-2.0-flash\"}\r\n\r\n"
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, Body: []byte(stream), Stream: true})
	fmt.Println(res.Output.Text(), res.Outcome.FinishReason, res.Usage.TotalTokens, res.Finished)
	// Output:
	// gemini.models.streamGenerateContent gemini-2.0-flash user
	// [{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]
	// {"model":"gemini-2.0-flash","temperature":0}
	// Hello STOP 5 true
}
