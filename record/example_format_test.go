package record_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// A history file: OpenJSONL appends (creating the file 0600), Close
// flushes, and ReadJSONL reads every record back.
func ExampleOpenJSONL() {
	dir, _ := os.MkdirTemp("", "history")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "history.jsonl")

	sink, err := record.OpenJSONL(path)
	if err != nil {
		panic(err)
	}
	for i, status := range []int{200, 429} {
		r := record.Record{
			CallID:     fmt.Sprintf("call-%d", i),
			Timestamp:  "2026-11-21T09:30:00.000000Z",
			Speaker:    record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			Outcome:    record.Success("chat.completion"),
		}
		if status != 200 {
			r.Outcome = record.Failure(record.ErrorTypeForStatus(status))
		}
		_ = sink.Append(context.Background(), r)
	}
	if err := sink.Close(); err != nil { // flushes: read the file after, not before
		panic(err)
	}

	info, _ := os.Stat(path)
	fmt.Println(info.Mode())
	f, _ := os.Open(path)
	defer f.Close()
	records, err := record.ReadJSONL(f)
	for _, r := range records {
		fmt.Println(r.CallID, r.Outcome.Status, r.Outcome.ErrorType, r.Outcome.Retriable)
	}
	fmt.Println(err)
	// Output:
	// -rw-------
	// call-0 ok  false
	// call-1 error rate_limit true
	// <nil>
}

// Reading is strict: a line is a record only with every required field.
// The other lines are reported, each with its number and why, and every
// record is still returned.
func ExampleReadJSONL() {
	input := `{"call_id":"a","timestamp":"2026-11-21T09:30:00.000000Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"history_record_appended":true,"conversation_history_size":1,"history_access_detected":false,"history_query_patterns":[],"version":1}
{}
this is not JSON
`
	records, err := record.ReadJSONL(strings.NewReader(input))
	fmt.Println(len(records), records[0].CallID)
	fmt.Println(err)
	var lineErr *record.LineError
	if errors.As(err, &lineErr) {
		fmt.Println("first bad line:", lineErr.Line)
	}

	_, err = record.ReadJSONL(strings.NewReader("{}\n[1,2]\n"))
	fmt.Println(errors.Is(err, record.ErrNoRecords))
	// Output:
	// 1 a
	// record: line 2: not a record: no call_id, timestamp, speaker, method_name, args, kwargs, outcome_summary, history_record_appended, conversation_history_size, history_access_detected, history_query_patterns, version fields
	// record: line 3: invalid JSON at offset 0: unexpected "this"
	// first bad line: 2
	// true
}

// DecodeLine applies the reader's rule to one line: what a record lacks,
// and a version this package does not read, are errors.
func ExampleDecodeLine() {
	_, err := record.DecodeLine([]byte(`{"call_id":"a","speaker":"user"}`))
	var missing *record.MissingFieldsError
	fmt.Println(errors.As(err, &missing), missing.Fields[:3])

	newer := `{"call_id":"a","timestamp":"2026-11-21T09:30:00.000000Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"history_record_appended":true,"conversation_history_size":1,"history_access_detected":false,"history_query_patterns":[],"version":2}`
	_, err = record.DecodeLine([]byte(newer))
	fmt.Println(errors.Is(err, record.ErrUnsupportedVersion))
	// Output:
	// true [timestamp method_name args]
	// true
}

// A Reader reads one line at a time, for files too big to load whole; a
// bad line is an error for that line only.
func ExampleReader() {
	input := strings.Join([]string{
		`{"call_id":"a","timestamp":"2026-11-21T09:30:00.000000Z","speaker":"user","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"history_record_appended":true,"conversation_history_size":1,"history_access_detected":false,"history_query_patterns":[],"version":1}`,
		`{"call_id":"b"}`,
		`{"call_id":"c","timestamp":"2026-11-21T09:30:01.000000Z","speaker":"agent","method_name":"m","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"history_record_appended":true,"conversation_history_size":2,"history_access_detected":false,"history_query_patterns":[],"version":1}`,
		`{"call_id":"d","timestamp":`, // a crash in mid-write
	}, "\n")
	rd := record.NewReader(strings.NewReader(input))
	for {
		r, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("skipped:", err)
			continue
		}
		fmt.Println("line", rd.Line(), r.CallID, r.Speaker)
	}
	fmt.Println("torn last line:", rd.Torn())
	// Output:
	// line 1 a user
	// skipped: record: line 2: not a record: no timestamp, speaker, method_name, args, kwargs, outcome_summary, history_record_appended, conversation_history_size, history_access_detected, history_query_patterns, version fields
	// line 3 c agent
	// torn last line: true
}

// A broken Args or Kwargs is repaired at that field only: the line is
// still one valid record.
func ExampleRecord_AppendJSON() {
	r := record.Record{
		CallID:     "c1",
		Timestamp:  "2026-11-21T09:30:00.000000Z",
		Speaker:    record.SpeakerUser,
		MethodName: "http.POST /v1/rerank",
		Args:       []byte(`[{"query": "cut off`),  // invalid JSON
		Kwargs:     []byte("{\n  \"top_n\": 3\n}"), // pretty-printed
		Outcome:    record.Success("json"),
	}
	fmt.Println(string(r.AppendJSON(nil)))
	// Output:
	// {"call_id":"c1","timestamp":"2026-11-21T09:30:00.000000Z","speaker":"user","method_name":"http.POST /v1/rerank","args":["<invalid JSON: [{\"query\": \"cut off>"],"kwargs":{"top_n":3},"outcome_summary":{"status":"ok","ok":true,"retriable":false,"value_class":"json"},"history_record_appended":false,"conversation_history_size":0,"history_access_detected":false,"history_query_patterns":[],"version":1}
}

// Fields is the format's single list of fields: here, the ones every
// record must have.
func ExampleFields() {
	for _, f := range record.Fields() {
		if f.Required {
			fmt.Print(f.Name, " ")
		}
	}
	fmt.Println()
	// Output:
	// call_id timestamp speaker method_name args kwargs outcome_summary history_record_appended conversation_history_size history_access_detected history_query_patterns version
}

// conversation returns the Args of each call of a short chat: the system
// prompt, then every question and answer so far, then the new question.
func conversation() [][]byte {
	msgs := []string{`{"role":"system","content":"You answer questions about the recorded calls of this service, citing the records you used, in one short paragraph."}`}
	var calls [][]byte
	for i, q := range []string{"How many calls failed today?", "Which methods?", "And yesterday?"} {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, q))
		calls = append(calls, []byte("["+strings.Join(msgs, ",")+"]"))
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"answer %d"}`, i+1))
	}
	return calls
}

// With ArgsPrefix, a conversation's records are written as what each adds
// to the one before; ReadJSONL puts every record's Args back together.
// The history (Memory.Add, as the recorder does) finds what they share.
func ExampleJSONLOptions_argsPrefix() {
	var file strings.Builder
	sink := record.NewJSONLWith(&file, record.JSONLOptions{ArgsPrefix: true})
	history := record.NewMemory(100)
	for i, args := range conversation() {
		r := history.Add(record.Record{
			CallID:     fmt.Sprintf("chat-%d", i),
			Timestamp:  "2026-11-21T09:30:00.000000Z",
			Speaker:    record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			TraceID:    "chat",
			Args:       args,
			Outcome:    record.Success("chat.completion"),
		})
		_ = sink.Append(context.Background(), r)
	}
	_ = sink.Close()

	for line := range strings.Lines(file.String()) {
		r, _ := record.DecodeLine([]byte(line)) // as written
		if p := r.ArgsPrefix; p != nil {
			fmt.Printf("%s: %d bytes of args, after %d elements of %s\n", r.CallID, len(r.Args), p.Count, p.CallID)
		} else {
			fmt.Printf("%s: %d bytes of args, whole\n", r.CallID, len(r.Args))
		}
	}
	records, err := record.ReadJSONL(strings.NewReader(file.String()))
	for i, r := range records {
		fmt.Println(r.CallID, string(r.Args) == string(conversation()[i]))
	}
	fmt.Println(err)
	// Output:
	// chat-0: 204 bytes of args, whole
	// chat-1: 86 bytes of args, after 2 elements of chat-0
	// chat-2: 86 bytes of args, after 4 elements of chat-1
	// chat-0 true
	// chat-1 true
	// chat-2 true
	// <nil>
}

// Code that reads lines itself (to follow a file being written, say)
// completes the records with an ArgsJoiner, given every record in order.
func ExampleArgsJoiner() {
	var file strings.Builder
	sink := record.NewJSONLWith(&file, record.JSONLOptions{ArgsPrefix: true})
	history := record.NewMemory(100)
	for i, args := range conversation() {
		_ = sink.Append(context.Background(), history.Add(record.Record{
			CallID: fmt.Sprintf("chat-%d", i), Timestamp: "2026-11-21T09:30:00.000000Z",
			Speaker: record.SpeakerUser, MethodName: "openai.chat.completions.create",
			TraceID: "chat", Args: args, Outcome: record.Success("chat.completion"),
		}))
	}
	_ = sink.Close()

	joiner := record.NewArgsJoiner()
	for line := range strings.Lines(file.String()) {
		r, err := record.DecodeLine([]byte(line))
		if err != nil {
			continue
		}
		ok := joiner.Join(&r)
		fmt.Println(r.CallID, ok, r.ArgsPrefix == nil, strings.Count(string(r.Args), `"role"`), "messages")
	}
	// Output:
	// chat-0 true true 2 messages
	// chat-1 true true 4 messages
	// chat-2 true true 6 messages
}

// Fanout hands every record to several sinks; one that fails does not
// stop the others.
func ExampleNewFanout() {
	memory := record.NewMemory(10)
	failing := record.SinkFunc(func(context.Context, record.Record) error { return errors.New("disk full") })
	sink := record.NewFanout(failing, memory)
	err := sink.Append(context.Background(), record.Record{CallID: "c1", MethodName: "m"})
	fmt.Println(err)
	fmt.Println(memory.Len(), memory.Records()[0].CallID)
	// Output:
	// disk full
	// 1 c1
}
