package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// An application gives a call its ID, and records its user's thumbs-up
// on it: here into a scores file (a store's AddScore is the same).
func Example_feedback() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	history := record.NewMemory(10)
	rec := middleware.NewRecorder(middleware.WithSink(history))
	client := rec.Client(nil)

	callID := middleware.NewCallID()
	ctx := middleware.WithCallID(context.Background(), callID)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Capital of France?"}]}`))
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rec.Close()

	// Later, the user clicks 👍 under the answer.
	var scores strings.Builder
	feedback := store.NewScoreJSONL(&scores)
	feedback.AddScore(ctx, store.Score{
		CallID: callID, Name: "thumbs", Value: store.Bool(true), Source: store.SourceHuman,
		Author: "user-42", Time: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
	})
	feedback.Close()

	fmt.Println("the record is the call scored:", history.Records()[0].CallID == callID)
	fmt.Print(strings.Replace(scores.String(), callID, "CALL-ID", 1))
	// Output:
	// the record is the call scored: true
	// {"object":"score","version":1,"call_id":"CALL-ID","name":"thumbs","value":true,"source":"human","author":"user-42","time":"2026-11-23T10:00:00Z"}
}

// A code evaluator judges one record.
func ExampleJSONSchema() {
	check, err := eval.JSONSchema("order", []byte(`{"type":"object","required":["id","qty"],"properties":{"qty":{"type":"integer","minimum":1}}}`))
	if err != nil {
		panic(err)
	}
	for _, out := range []string{`{"id":"ORD-7","qty":2}`, `{"id":"ORD-7","qty":0}`, "Sure! ```json"} {
		msg := record.TextMessage(record.RoleAssistant, out)
		r := record.Record{CallID: "c1", Outcome: record.Success("chat.completion"), Output: &msg, Args: json.RawMessage(`[]`)}
		scores, err := eval.Score(context.Background(), check, eval.Subject{Records: []record.Record{r}})
		if err != nil {
			panic(err)
		}
		fmt.Println(strings.TrimSpace(scores[0].Name + " " + scores[0].Value.String() + " " + scores[0].Comment))
	}
	// Output:
	// order true
	// order false at /qty: minimum: got 0, want 1
	// order false not JSON: invalid character 'S' looking for beginning of value
}
