// Package finetune checks fine-tuning files against the formats the
// providers document (testdata/README.md names the pages): what a line
// must hold, which keys it may have, which roles in which order. It is
// written from the documentation, not from eval's exporter, and its tests
// check it first against the documentation's own examples; the tests of
// eval and of the command check exports with it.
package finetune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Check validates every line of data in format; it returns the
// first fault, naming the line.
func Check(format string, data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		n++
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("line %d: not a JSON object: %v", n, err)
		}
		var err error
		switch format {
		case "openai":
			err = checkOpenAI(line)
		case "gemini":
			err = checkGemini(line)
		case "anthropic":
			err = checkAnthropic(line)
		default:
			return fmt.Errorf("no validator for %q", format)
		}
		if err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
	}
	if n == 0 {
		return fmt.Errorf("no example")
	}
	return nil
}

func onlyKeys(obj map[string]json.RawMessage, allowed ...string) error {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("key %q is not in the format", k)
		}
	}
	return nil
}

func str(raw json.RawMessage) (string, bool) {
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var o map[string]json.RawMessage
	return o, json.Unmarshal(raw, &o) == nil && o != nil
}

func objects(raw json.RawMessage) ([]map[string]json.RawMessage, bool) {
	var a []map[string]json.RawMessage
	return a, json.Unmarshal(raw, &a) == nil
}

// OpenAI: {"messages":[...], "tools":[...]}; roles system, user,
// assistant, tool; content a string (an assistant's may be absent when it
// calls tools); tool_calls of type function with a name and arguments as
// a string of JSON; a tool message answers an earlier call by
// tool_call_id; at least one assistant message.
func checkOpenAI(line map[string]json.RawMessage) error {
	if err := onlyKeys(line, "messages", "tools", "parallel_tool_calls"); err != nil {
		return err
	}
	msgs, ok := objects(line["messages"])
	if !ok || len(msgs) == 0 {
		return fmt.Errorf("messages is not a non-empty array of objects")
	}
	calls := map[string]bool{}
	assistant := false
	for i, m := range msgs {
		if err := onlyKeys(m, "role", "content", "name", "tool_calls", "tool_call_id", "weight", "function_call"); err != nil {
			return fmt.Errorf("message %d: %v", i, err)
		}
		role, _ := str(m["role"])
		content, hasContent := m["content"]
		if hasContent && string(content) != "null" {
			if _, ok := str(content); !ok {
				return fmt.Errorf("message %d: content is not a string", i)
			}
		}
		switch role {
		case "system", "user":
			if !hasContent {
				return fmt.Errorf("message %d: no content", i)
			}
		case "assistant":
			assistant = true
			tcs, ok := objects(m["tool_calls"])
			if m["tool_calls"] != nil && !ok {
				return fmt.Errorf("message %d: tool_calls is not an array", i)
			}
			if (!hasContent || string(content) == "null") && len(tcs) == 0 {
				return fmt.Errorf("message %d: an assistant message with neither content nor tool_calls", i)
			}
			for j, tc := range tcs {
				id, _ := str(tc["id"])
				typ, _ := str(tc["type"])
				fn, _ := object(tc["function"])
				name, _ := str(fn["name"])
				args, isStr := str(fn["arguments"])
				if id == "" || typ != "function" || name == "" || !isStr || !json.Valid([]byte(args)) {
					return fmt.Errorf("message %d: tool call %d wants an id, type function, a name and arguments as a string of JSON", i, j)
				}
				calls[id] = true
			}
		case "tool":
			id, _ := str(m["tool_call_id"])
			if !calls[id] {
				return fmt.Errorf("message %d: tool_call_id %q answers no earlier call", i, id)
			}
			if !hasContent {
				return fmt.Errorf("message %d: no content", i)
			}
		default:
			return fmt.Errorf("message %d: role %q", i, role)
		}
	}
	if !assistant {
		return fmt.Errorf("no assistant message")
	}
	if raw, ok := line["tools"]; ok {
		tools, ok := objects(raw)
		if !ok {
			return fmt.Errorf("tools is not an array")
		}
		for i, t := range tools {
			typ, _ := str(t["type"])
			fn, _ := object(t["function"])
			name, _ := str(fn["name"])
			if typ != "function" || name == "" {
				return fmt.Errorf("tool %d: wants type function and a function name", i)
			}
		}
	}
	return nil
}

// Gemini on Vertex AI: {"systemInstruction"|"system_instruction":
// Content, "contents":[Content], "tools":[{"functionDeclarations":[...]}]};
// contents of roles user and model, alternating, the last the model's;
// each part exactly one of text, fileData, inlineData, functionCall
// (name, args an object), functionResponse (name, response an object).
func checkGemini(line map[string]json.RawMessage) error {
	if err := onlyKeys(line, "systemInstruction", "system_instruction", "contents", "tools"); err != nil {
		return err
	}
	for _, k := range []string{"systemInstruction", "system_instruction"} {
		if raw, ok := line[k]; ok {
			si, ok := object(raw)
			if !ok {
				return fmt.Errorf("%s is not an object", k)
			}
			if err := checkGeminiParts(si["parts"]); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
	}
	contents, ok := objects(line["contents"])
	if !ok || len(contents) == 0 {
		return fmt.Errorf("contents is not a non-empty array")
	}
	prev := ""
	for i, c := range contents {
		if err := onlyKeys(c, "role", "parts"); err != nil {
			return fmt.Errorf("content %d: %v", i, err)
		}
		role, _ := str(c["role"])
		if role != "user" && role != "model" {
			return fmt.Errorf("content %d: role %q", i, role)
		}
		if role == prev {
			return fmt.Errorf("content %d: two contents of role %s in a row", i, role)
		}
		prev = role
		if err := checkGeminiParts(c["parts"]); err != nil {
			return fmt.Errorf("content %d: %v", i, err)
		}
	}
	if prev != "model" {
		return fmt.Errorf("the last content is not the model's")
	}
	if raw, ok := line["tools"]; ok {
		tools, ok := objects(raw)
		if !ok {
			return fmt.Errorf("tools is not an array")
		}
		for i, t := range tools {
			decls, ok := objects(t["functionDeclarations"])
			if !ok || len(decls) == 0 {
				return fmt.Errorf("tool %d: no functionDeclarations", i)
			}
			for j, d := range decls {
				if name, _ := str(d["name"]); name == "" {
					return fmt.Errorf("tool %d: declaration %d has no name", i, j)
				}
			}
		}
	}
	return nil
}

func checkGeminiParts(raw json.RawMessage) error {
	parts, ok := objects(raw)
	if !ok || len(parts) == 0 {
		return fmt.Errorf("parts is not a non-empty array")
	}
	for i, p := range parts {
		if len(p) != 1 {
			return fmt.Errorf("part %d holds %d fields, not one", i, len(p))
		}
		for k, v := range p {
			switch k {
			case "text":
				if _, ok := str(v); !ok {
					return fmt.Errorf("part %d: text is not a string", i)
				}
			case "fileData", "inlineData":
			case "functionCall":
				fc, _ := object(v)
				name, _ := str(fc["name"])
				if _, ok := object(fc["args"]); name == "" || !ok {
					return fmt.Errorf("part %d: functionCall wants a name and args as an object", i)
				}
			case "functionResponse":
				fr, _ := object(v)
				name, _ := str(fr["name"])
				if _, ok := object(fr["response"]); name == "" || !ok {
					return fmt.Errorf("part %d: functionResponse wants a name and response as an object", i)
				}
			default:
				return fmt.Errorf("part %d: %q is no part", i, k)
			}
		}
	}
	return nil
}

// Claude on Bedrock: {"system": string (optional), "messages":[...]}, no
// other key; at least two messages of role and content (a string) alone;
// the first the user's, the last the assistant's, alternating.
func checkAnthropic(line map[string]json.RawMessage) error {
	if err := onlyKeys(line, "system", "messages"); err != nil {
		return err
	}
	if raw, ok := line["system"]; ok {
		if _, ok := str(raw); !ok {
			return fmt.Errorf("system is not a string")
		}
	}
	msgs, ok := objects(line["messages"])
	if !ok || len(msgs) < 2 {
		return fmt.Errorf("messages is not an array of at least two")
	}
	for i, m := range msgs {
		if err := onlyKeys(m, "role", "content"); err != nil {
			return fmt.Errorf("message %d: %v", i, err)
		}
		role, _ := str(m["role"])
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if role != want {
			return fmt.Errorf("message %d: role %q where %q alternates", i, role, want)
		}
		if c, ok := str(m["content"]); !ok || c == "" {
			return fmt.Errorf("message %d: content is not a non-empty string", i)
		}
	}
	if len(msgs)%2 != 0 {
		return fmt.Errorf("the last message is not the assistant's")
	}
	return nil
}
