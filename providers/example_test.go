package providers_test

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// echo is a provider of your own: the API at /echo, whose request body is
// {"say": "..."} and whose answer is the text.
type echo struct{}

func (echo) Name() string { return "echo" }

func (echo) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if req.URL == nil || req.URL.Path != "/echo" {
		return providers.Call{}, false
	}
	var body struct{ Say string }
	_ = json.Unmarshal(req.Body, &body)
	args, _ := json.Marshal([]string{body.Say})
	return providers.Call{MethodName: "echo.say", Args: args, Kwargs: json.RawMessage(`{}`)}, true
}

func (echo) ParseResponse(_ *providers.Call, resp *providers.Response) providers.Result {
	if resp.StatusCode >= 400 {
		typ, msg := providers.ClassifyError(resp.StatusCode, resp.Body)
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: msg, Finished: true}
	}
	return providers.Result{Outcome: record.Success("text"), Output: record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: string(resp.Body)}}}, Finished: true}
}

// A provider of your own is asked in turn with the others
// (middleware.WithProviders); Match asks each until one recognizes the
// request.
func Example() {
	u, _ := url.Parse("https://echo.example/echo")
	p, call, ok := providers.Match([]providers.Provider{echo{}}, &providers.Request{Method: "POST", URL: u, Body: []byte(`{"say":"hi"}`)})
	fmt.Println(ok, p.Name(), call.MethodName, string(call.Args))
	res := p.ParseResponse(&call, &providers.Response{StatusCode: 200, Body: []byte("hi")})
	fmt.Println(res.Outcome.Status, res.Output.Text())
	// Output:
	// true echo echo.say ["hi"]
	// ok hi
}

// ClassifyError reads an error body of any common shape into the error
// taxonomy of package record.
func ExampleClassifyError() {
	typ, msg := providers.ClassifyError(429, []byte(`{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}`))
	fmt.Println(typ, record.Retriable(typ))
	fmt.Println(msg)
	// Output:
	// rate_limit true
	// Rate limit reached for gpt-4o-mini
}
