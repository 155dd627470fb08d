package testgen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/eval/testgen"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/replay"
)

func chat(content string) record.Record {
	args, _ := json.Marshal([]record.Message{record.TextMessage(record.RoleUser, content)})
	answer := record.TextMessage(record.RoleAssistant, "Noted.")
	return record.Record{CallID: "c1", MethodName: "openai.chat.completions.create", TraceID: "t-1", Args: args,
		Kwargs: json.RawMessage(`{"model":"gpt-4o-mini"}`), Output: &answer,
		Outcome: record.Outcome{Status: "ok", OK: true, HTTPStatus: 200, FinishReason: "stop"}}
}

func TestSecretsNeverWritten(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("a1B2", 12)
	out, err := testgen.Generate([]record.Record{chat("my key is " + key)}, testgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"cassette": out.Cassette, "test": out.Test} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the key is in the %s", name)
		}
	}
	if !bytes.Contains(out.Cassette, []byte("REDACTED")) {
		t.Errorf("the key was not replaced:\n%s", out.Cassette)
	}
}

func TestLeftOut(t *testing.T) {
	bedrock := chat("hi")
	bedrock.MethodName = "bedrock.converse"
	cut := chat("hi")
	cut.Truncated = []string{"args"}
	out, err := testgen.Generate([]record.Record{bedrock, chat("hi"), cut}, testgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Calls != 1 || len(out.Skipped) != 2 {
		t.Fatalf("calls %d, skipped %q", out.Calls, out.Skipped)
	}
	if !strings.Contains(string(out.Test), "Not replayed: call 1 (c1 bedrock.converse)") {
		t.Errorf("the test does not say what it left out:\n%s", out.Test)
	}
	_, err = testgen.Generate([]record.Record{bedrock}, testgen.Options{})
	if !errors.Is(err, testgen.ErrNoCalls) || !errors.Is(err, providers.ErrNotRenderable) && !strings.Contains(err.Error(), "bedrock") {
		t.Errorf("got %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []testgen.Options{{Package: "not-a-name"}, {Test: "CheckIt"}, {OpenAI: "openai-python"}} {
		if _, err := testgen.Generate([]record.Record{chat("hi")}, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// FuzzGenerate: whatever a record holds, Generate either refuses it with
// an error or writes a cassette replay reads and a test Go parses.
func FuzzGenerate(f *testing.F) {
	line, _ := json.Marshal(chat("hi"))
	f.Add(line)
	f.Add([]byte(`{"call_id":"x","timestamp":"","speaker":"user","method_name":"gemini.models.streamGenerateContent","args":[{"role":"system","parts":[{"type":"text","content":"s"}]},{"role":"user","parts":[{"type":"media","mime_type":"image/png","size":3}]}],"kwargs":{"model":"gemini-2.5-flash","temperature":0.2,"tools":["f","googleSearch"]},"outcome_summary":{"status":"ok","ok":true,"retriable":false,"finish_reason":"STOP"},"output_message":{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"a":1}}]},"attempts":3}`))
	f.Add([]byte(`{"call_id":"y","timestamp":"","speaker":"user","method_name":"anthropic.messages.create","args":[{"role":"user","parts":[{"type":"text","content":"` + "`" + `q"}]}],"kwargs":{"model":"claude","stream":true,"max_tokens":9},"outcome_summary":{"status":"error","ok":false,"retriable":false,"http_status":529},"error_message":"overloaded"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := record.DecodeLine(line)
		if err != nil {
			return
		}
		out, err := testgen.Generate([]record.Record{r}, testgen.Options{})
		if err != nil {
			return
		}
		if _, err := replay.Read(bytes.NewReader(out.Cassette)); err != nil {
			t.Fatalf("the cassette does not read: %v\n%s", err, out.Cassette)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "x_test.go", out.Test, 0); err != nil {
			t.Fatalf("the test does not parse: %v\n%s", err, out.Test)
		}
	})
}
