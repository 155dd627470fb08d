package anthropic_test

import (
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
)

func Example() {
	p := anthropic.Provider{}
	call, _ := p.ParseRequest(&providers.Request{
		Method: "POST",
		URL:    &url.URL{Path: "/v1/messages"},
		Body:   []byte(`{"model":"claude-sonnet-4-5","max_tokens":256,"system":"Be brief.","stream":true,"metadata":{"user_id":"u1"},"messages":[{"role":"user","content":"Hi"}]}`),
	})
	fmt.Println(call.MethodName, call.Model, call.Speaker)
	fmt.Println(string(call.Args))
	fmt.Println(string(call.Kwargs))

	stream := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}` + "\n\n" +
		"event: message_stop\n" +
		`data: {"type":"message_stop"}` + "\n\n"
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, Body: []byte(stream), Stream: true, EOF: true})
	u := res.Usage
	fmt.Println(res.Output.Text(), res.Outcome.FinishReason, res.Finished)
	fmt.Println("input", u.InputTokens, "cached", u.CachedTokens, "output", u.OutputTokens, "total", u.TotalTokens)
	// Output:
	// anthropic.messages.create claude-sonnet-4-5 user
	// [{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]
	// {"model":"claude-sonnet-4-5","max_tokens":256,"stream":true}
	// Hello end_turn true
	// input 100 cached 90 output 2 total 102
}
