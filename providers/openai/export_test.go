package openai

import (
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

// ParseStreamWalked parses a stream as ParseResponse does, with every
// event walked in full: what reading chunks by their template must agree
// with.
func ParseStreamWalked(call *providers.Call, resp *providers.Response) providers.Result {
	res := parseStreamWith(call, resp, false)
	wire.Detach(&res)
	return res
}
