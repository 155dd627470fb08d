package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/view"
)

// A program that holds records serves them as the viewer's pages, here
// over httptest, and fetches the conversations of one user.
func ExampleNewHandler() {
	src := view.FromRecords([]record.Record{{
		CallID: "01JCALL1", Timestamp: "2026-03-01T10:00:00Z", Speaker: record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, "Where is my order <b>1042</b>?")}),
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini"}`),
		Outcome:    record.Success("chat.completion"),
		TraceID:    "support-42", UserID: "ana",
	}})
	defer src.Close()
	h := view.NewHandler(src, view.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()

	resp, err := http.Get(srv.URL + "/?user=ana")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Println(strings.Contains(string(page), `href="/c/support-42"`))
	fmt.Println(strings.Contains(string(page), "Where is my order &lt;b&gt;1042&lt;/b&gt;?"))
	// Output:
	// 200 text/html; charset=utf-8
	// true
	// true
}

// A history file, indexed, answers queries: its conversations newest
// first, filtered, and a conversation's calls with their Args whole.
func ExampleOpenJSONL() {
	dir, _ := os.MkdirTemp("", "view-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "history.jsonl")
	sink, _ := record.OpenJSONL(path)
	for i, q := range []string{"What should I pack?", "And the weather?"} {
		sink.Append(context.Background(), record.Record{
			CallID: fmt.Sprintf("call-%d", i), Timestamp: fmt.Sprintf("2026-03-01T10:0%d:00Z", i),
			Speaker: record.SpeakerUser, MethodName: "openai.chat.completions.create",
			Args:    record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, q)}),
			Outcome: record.Success("chat.completion"), TraceID: "trip", Tags: []string{"travel"},
		})
	}
	sink.Close()

	src, err := view.OpenJSONL([]string{path}, view.JSONLOptions{})
	if err != nil {
		panic(err)
	}
	defer src.Close()
	src.Wait(context.Background())
	page, _ := src.Conversations(context.Background(), view.Query{Tag: "travel"})
	for _, c := range page.Conversations {
		fmt.Printf("%s: %d calls, first asked %q\n", c.ID, c.Calls, c.FirstUserMessage)
	}
	trace, _ := src.Trace(context.Background(), view.TraceQuery{ID: "trip"})
	fmt.Println(string(trace.Calls[1].Record.Args))
	// Output:
	// trip: 2 calls, first asked "What should I pack?"
	// [{"role":"user","parts":[{"type":"text","content":"And the weather?"}]}]
}
