package view

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/llmhistory/llmhistory/record"
)

var partKinds = map[string]bool{partText: true, partThinking: true, partToolCall: true, partToolResult: true, partMedia: true, partCode: true, partJSON: true}

// Any element of a record's Args reads as a message of a known role,
// whose parts are of known kinds; nothing panics. The seeds are messages
// of the model, and elements of other shapes (records written before it).
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","parts":[{"type":"text","content":"hi"},{"type":"media","mime_type":"image/png","size":10}]}`,
		`{"role":"assistant","parts":[{"type":"reasoning"},{"type":"tool_call","id":"c","name":"f","arguments":{"a":1}},{"type":"refusal","content":"no"}]}`,
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"c","content":"{\"r\":1}","is_error":true},{"type":"other","name":"x","data":"s"}]}`,
		`{"role":"x","parts":[{"type":"media","uri":"gs://b/o"},{"type":"other","data":[1]}]}`,
		`{"role":"user","content":"hi"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`,
		`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"r"}]}`,
		`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"[base64 elided: 10 bytes]"}},{"type":"tool_result","tool_use_id":"t","content":"x","is_error":true}]}`,
		`{"role":"model","parts":[{"text":"t","thought":true},{"functionCall":{"name":"f","args":{}}},{"inlineData":{"mimeType":"a","data":"d"}},{"executableCode":{"language":"PYTHON","code":"1"}}]}`,
		`{"type":"reasoning","summary":[{"text":"s"}],"encrypted_content":"e"}`,
		`{"type":"function_call_output","call_id":"c","output":"o"}`,
		`{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"r"}}},{"toolUse":{"toolUseId":"u","name":"n","input":{}}}]}`,
		`"a prompt"`, `42`, `null`, `[1,2]`, `{}`, `{"role":7}`, `{"content":{"a":1}}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := parseMessage(raw)
		switch m.Role {
		case roleSystem, roleUser, roleAssistant, roleTool, roleOther:
		default:
			t.Fatalf("role %q", m.Role)
		}
		for _, p := range m.Parts {
			if p == nil || !partKinds[p.Kind] {
				t.Fatalf("part %+v", p)
			}
		}
		firstUserText(append(append([]byte("["), raw...), ']'))
		quickRole(raw)
	})
}

// Any two calls' Args lay out as a transcript without panicking, each
// call shown once.
func FuzzTranscript(f *testing.F) {
	f.Add([]byte(`[{"role":"user","parts":[{"type":"text","content":"q"}]}]`),
		[]byte(`[{"role":"user","parts":[{"type":"text","content":"q"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"1","name":"f"}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"1"}]}]`))
	f.Add([]byte(`[{"role":"user","content":"q"}]`), []byte(`[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"}]`))
	f.Add([]byte(`[{"role":"system","content":"s"}]`), []byte(`[{"role":"system","content":"t"},{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"1"}]`))
	f.Add([]byte(`not json`), []byte(`[1,[2],{"parts":[{"functionResponse":{"name":"f"}}]}]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		cs := []Call{
			{Record: record.Record{CallID: "a", Args: a, Outcome: record.Success("x")}, Raw: a},
			{Record: record.Record{CallID: "b", Args: b}, Raw: b},
		}
		tcs := buildTranscript(cs, 0, 0, 2)
		if len(tcs) != 2 || !tcs[0].Shown || !tcs[1].Shown {
			t.Fatalf("%d calls laid out", len(tcs))
		}
		callMessages(b)
	})
}

// A history file of any bytes is indexed, listed, searched and shown
// without panicking; every line is a record or a bad line.
func FuzzJSONL(f *testing.F) {
	good := record.Record{
		CallID: "c1", Timestamp: "2026-03-01T10:00:00Z", Speaker: "user", MethodName: "openai.chat.completions.create",
		Args: json.RawMessage(`[{"role":"user","parts":[{"type":"text","content":"hello"}]}]`), Kwargs: json.RawMessage(`{"model":"m"}`),
		Outcome: record.Success("chat.completion"), TraceID: "t1", UserID: "u", Tags: []string{"x"},
	}
	line := good.AppendJSON(nil)
	prefixed := bytes.Replace(line, []byte(`"kwargs"`), []byte(`"args_prefix":{"call_id":"c0","count":1,"crc32c":1},"kwargs"`), 1)
	f.Add(append(append(line, '\n'), prefixed...))
	f.Add([]byte("garbage\n{}\n\n" + string(line)))
	f.Add(bytes.Repeat(append(line, '\n'), 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := fromBytes("h.jsonl", data)
		defer src.Close()
		ctx := context.Background()
		st := src.Status()
		if n := bytes.Count(data, []byte("\n")); st.Records+st.BadLines > n {
			t.Fatalf("%d records and %d bad lines in %d lines", st.Records, st.BadLines, n)
		}
		p, err := src.Conversations(ctx, Query{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Conversations {
			tp, err := src.Trace(ctx, TraceQuery{ID: c.ID})
			if err != nil {
				t.Fatal(err)
			}
			buildTranscript(tp.Calls, 0, 0, len(tp.Calls))
			for _, call := range tp.Calls {
				if _, err := src.Call(ctx, call.Record.CallID); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := src.Conversations(ctx, Query{Text: "hello"}); err != nil {
			t.Fatal(err)
		}
		src.Stats(ctx, Query{})
	})
}

// A cursor of any text is one a page gave, or ErrBadCursor.
func FuzzCursor(f *testing.F) {
	f.Add(cursor{last: 1767225600000000, id: "trace~1"}.String())
	f.Add("")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			return
		}
		again, err := parseCursor(c.String())
		if err != nil || again != c {
			t.Fatalf("%q: %+v, then %+v (%v)", s, c, again, err)
		}
	})
}
