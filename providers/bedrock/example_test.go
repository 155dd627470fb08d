package bedrock_test

import (
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/bedrock"
)

func Example() {
	p := bedrock.Provider{}
	call, _ := p.ParseRequest(&providers.Request{
		Method: "POST",
		URL:    &url.URL{Path: "/model/us.anthropic.claude-sonnet-4-6/converse", RawPath: "/model/us.anthropic.claude-sonnet-4-6/converse"},
		Body:   []byte(`{"system":[{"text":"Be brief."}],"messages":[{"role":"user","content":[{"text":"Hi"}]}],"inferenceConfig":{"maxTokens":256},"requestMetadata":{"user":"u1"}}`),
	})
	fmt.Println(call.MethodName, call.Model, call.Speaker)
	fmt.Println(string(call.Args))
	fmt.Println(string(call.Kwargs))

	answer := `{"output":{"message":{"role":"assistant","content":[{"text":"Hello!"}]}},"stopReason":"end_turn",` +
		`"usage":{"inputTokens":6,"outputTokens":3,"cacheReadInputTokens":90,"cacheWriteInputTokens":0,"totalTokens":99},"metrics":{"latencyMs":412}}`
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, Body: []byte(answer), EOF: true})
	u := res.Usage
	fmt.Println(res.Output.Text(), res.Outcome.FinishReason)
	fmt.Println("input", u.InputTokens, "cached", u.CachedTokens, "output", u.OutputTokens, "total", u.TotalTokens)
	// Output:
	// bedrock.converse us.anthropic.claude-sonnet-4-6 user
	// [{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]
	// {"model":"us.anthropic.claude-sonnet-4-6","inferenceConfig":{"maxTokens":256}}
	// Hello! end_turn
	// input 96 cached 90 output 3 total 99
}
