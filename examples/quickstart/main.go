// Command quickstart is the README's Quick start, whole: record the calls
// of a go-openai client into a JSON Lines file of its own, close the
// recorder, and read the records back. The README's copy is tested to be
// this one.
package main

import (
	"context"
	"fmt"
	"os"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

func main() {
	sink, err := record.OpenJSONL("quickstart.jsonl") // appends, one record per line
	if err != nil {
		panic(err)
	}
	rec := middleware.NewRecorder(middleware.WithSink(sink))

	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	cfg.HTTPClient = rec.Client(nil) // the one line that records every call

	ctx := middleware.WithUser(context.Background(), "user-42") // whose call it is
	ctx = middleware.WithTags(ctx, "quickstart")                // which feature made it
	_, err = openai.NewClientWithConfig(cfg).CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: openai.GPT4oMini, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Hello!"}}})
	fmt.Println("call:", err) // a failed call is recorded too

	rec.Close() // emits what is pending and flushes the file: read it after, not before
	f, _ := os.Open("quickstart.jsonl")
	records, err := record.ReadJSONL(f) // every record, and which lines were not
	for _, r := range records {
		// Go fields, JSON names: CallID call_id, MethodName method_name, Outcome outcome_summary
		fmt.Println(r.CallID, r.MethodName, r.UserID, r.Outcome, r.Usage)
	}
	fmt.Println("read:", err)
}
