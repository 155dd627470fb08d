package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// ExportFormat names a provider's fine-tuning data format.
type ExportFormat string

// The fine-tuning formats [Export] writes.
const (
	// FormatOpenAI is OpenAI's chat fine-tuning format: one
	// {"messages":[...],"tools":[...]} a line, with assistant tool_calls
	// (arguments as a JSON string) and tool messages.
	FormatOpenAI ExportFormat = "openai"
	// FormatGemini is Vertex AI's supervised tuning format for Gemini:
	// {"systemInstruction":{...},"contents":[...],"tools":[...]}, roles
	// user and model, functionCall and functionResponse parts.
	FormatGemini ExportFormat = "gemini"
	// FormatAnthropic is Claude's fine-tuning format on Amazon Bedrock:
	// {"system":"...","messages":[...]}, text only, user and assistant
	// alternating, the first the user's, the last the assistant's. It
	// holds no tool calls: items with some are skipped.
	FormatAnthropic ExportFormat = "anthropic"
)

// ExportFormats lists the formats, in the order the command names them.
var ExportFormats = []ExportFormat{FormatOpenAI, FormatGemini, FormatAnthropic}

// ExportOptions configures [Export].
type ExportOptions struct {
	// Tools declares the tools items name, in OpenAI's shape: a JSON
	// array of {"type":"function","function":{"name","description",
	// "parameters"}}. A record keeps tools' names alone; without a
	// declaration, a tool is exported with its name alone.
	Tools json.RawMessage
}

// ExportResult says what an export wrote and what it could not.
type ExportResult struct {
	Written int
	// Skipped are the items the format cannot hold, each with why.
	Skipped []SkippedItem
}

// SkippedItem is an item an export left out, and why.
type SkippedItem struct {
	ID, Reason string
}

// ErrExportFormat: the format is none of [ExportFormats].
var ErrExportFormat = errors.New("eval: unknown export format")

// errSkip marks an item the format cannot hold.
type errSkip string

func (e errSkip) Error() string { return string(e) }

// Export writes d's items to w, one fine-tuning example a line, in a
// provider's format: the item's input, then its reference as the
// assistant's answer. Reasoning parts are left out (no format takes
// them). An item the format cannot hold (media, parts of no known kind,
// tool calls for Anthropic's, no reference) is skipped and named in the
// result, never written half.
func Export(w io.Writer, d *Dataset, format ExportFormat, o ExportOptions) (ExportResult, error) {
	var conv func(*Item, map[string]toolDecl) (any, error)
	switch format {
	case FormatOpenAI:
		conv = openAIExample
	case FormatGemini:
		conv = geminiExample
	case FormatAnthropic:
		conv = anthropicExample
	default:
		return ExportResult{}, fmt.Errorf("%w: %q (want %s)", ErrExportFormat, format, joinFormats())
	}
	decls, err := toolDecls(o.Tools)
	if err != nil {
		return ExportResult{}, err
	}
	var res ExportResult
	bw := bufio.NewWriter(w)
	for i := range d.Items {
		it := &d.Items[i]
		ex, err := conv(it, decls)
		var skip errSkip
		if errors.As(err, &skip) {
			res.Skipped = append(res.Skipped, SkippedItem{it.ID, string(skip)})
			continue
		}
		if err != nil {
			return res, err
		}
		b, err := json.Marshal(ex)
		if err != nil {
			return res, err
		}
		bw.Write(append(b, '\n'))
		res.Written++
	}
	return res, bw.Flush()
}

func joinFormats() string {
	s := make([]string, len(ExportFormats))
	for i, f := range ExportFormats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// toolDecl is a tool's declaration, read from OpenAI's shape.
type toolDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

func toolDecls(raw json.RawMessage) (map[string]toolDecl, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []struct {
		Type     string   `json:"type"`
		Function toolDecl `json:"function"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("eval: tools: want OpenAI's array of {\"type\":\"function\",\"function\":{...}}: %v", err)
	}
	decls := make(map[string]toolDecl, len(list))
	for i, t := range list {
		if t.Function.Name == "" {
			return nil, fmt.Errorf("eval: tools: declaration %d has no function name", i+1)
		}
		decls[t.Function.Name] = t.Function
	}
	return decls, nil
}

// conversation returns the item's input and its reference: the conversation
// an example teaches.
func (it *Item) conversation() ([]record.Message, error) {
	if it.Reference == nil {
		return nil, errSkip("no reference answer")
	}
	msgs := append(it.Input[:len(it.Input):len(it.Input)], *it.Reference)
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p.Type {
			case record.PartText, record.PartRefusal, record.PartReasoning, record.PartToolCall, record.PartToolResult:
			case record.PartMedia:
				return nil, errSkip("media (a record keeps no media's bytes)")
			default:
				return nil, errSkip(fmt.Sprintf("a part of kind %q", p.Type))
			}
		}
		switch m.Role {
		case record.RoleSystem, record.RoleUser, record.RoleAssistant, record.RoleTool:
		default:
			return nil, errSkip(fmt.Sprintf("a message of role %q", m.Role))
		}
	}
	return msgs, nil
}

// text is a message's text: its text and refusal parts, joined.
func text(m *record.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == record.PartText || p.Type == record.PartRefusal {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(p.Content)
		}
	}
	return b.String()
}

// OpenAI's shape.

type openAIMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content,omitempty"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type openAIToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openAITool struct {
	Type     string   `json:"type"`
	Function toolDecl `json:"function"`
}

type openAIExampleLine struct {
	Messages []openAIMessage `json:"messages"`
	Tools    []openAITool    `json:"tools,omitempty"`
}

func openAIExample(it *Item, decls map[string]toolDecl) (any, error) {
	msgs, err := it.conversation()
	if err != nil {
		return nil, err
	}
	var ex openAIExampleLine
	ids := callIDs{}
	for _, m := range msgs {
		switch m.Role {
		case record.RoleTool:
			for _, p := range m.Parts {
				if p.Type != record.PartToolResult {
					continue
				}
				ex.Messages = append(ex.Messages, openAIMessage{Role: "tool", ToolCallID: ids.result(p), Content: ptr(p.Content)})
			}
		case record.RoleAssistant:
			om := openAIMessage{Role: "assistant"}
			for _, p := range m.Parts {
				if p.Type == record.PartToolCall {
					var tc openAIToolCall
					tc.ID, tc.Type = ids.call(p), "function"
					tc.Function.Name, tc.Function.Arguments = p.Name, argumentsString(p.Arguments)
					om.ToolCalls = append(om.ToolCalls, tc)
				}
			}
			if t := text(&m); t != "" || len(om.ToolCalls) == 0 {
				om.Content = &t
			}
			ex.Messages = append(ex.Messages, om)
		default:
			ex.Messages = append(ex.Messages, openAIMessage{Role: m.Role, Content: ptr(text(&m))})
		}
	}
	for _, name := range it.Tools {
		d, ok := decls[name]
		if !ok {
			d = toolDecl{Name: name}
		}
		ex.Tools = append(ex.Tools, openAITool{"function", d})
	}
	return ex, nil
}

// argumentsString is a tool call's arguments as OpenAI writes them: a
// string holding JSON ("{}" for none).
func argumentsString(args json.RawMessage) string {
	if len(args) == 0 || string(args) == "null" {
		return "{}"
	}
	var s string
	if json.Unmarshal(args, &s) == nil {
		return s // arguments that were not JSON, kept as the model wrote them
	}
	return string(args)
}

// callIDs gives tool calls without an ID (Gemini's) one, and their
// results the same: OpenAI's format ties a result to its call by ID.
type callIDs struct {
	n      int
	byName map[string][]string // IDs given to calls without one, by tool name, not yet answered
}

func (c *callIDs) call(p record.Part) string {
	if p.ID != "" {
		return p.ID
	}
	c.n++
	id := fmt.Sprintf("call_%d", c.n)
	if c.byName == nil {
		c.byName = map[string][]string{}
	}
	c.byName[p.Name] = append(c.byName[p.Name], id)
	return id
}

func (c *callIDs) result(p record.Part) string {
	if p.ID != "" {
		return p.ID
	}
	if q := c.byName[p.Name]; len(q) > 0 {
		c.byName[p.Name] = q[1:]
		return q[0]
	}
	c.n++
	return fmt.Sprintf("call_%d", c.n)
}

// Gemini's shape (Vertex AI supervised tuning).

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     *geminiCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiResponse `json:"functionResponse,omitempty"`
}

type geminiCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type geminiResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type geminiTools struct {
	FunctionDeclarations []toolDecl `json:"functionDeclarations"`
}

type geminiExampleLine struct {
	SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
	Contents          []geminiContent `json:"contents"`
	Tools             []geminiTools   `json:"tools,omitempty"`
}

func geminiExample(it *Item, decls map[string]toolDecl) (any, error) {
	msgs, err := it.conversation()
	if err != nil {
		return nil, err
	}
	var ex geminiExampleLine
	names := map[string]string{} // tool call ID -> tool name, for results that give the ID alone
	add := func(role string, parts []geminiPart) {
		if len(parts) == 0 {
			return
		}
		if n := len(ex.Contents); n > 0 && ex.Contents[n-1].Role == role {
			ex.Contents[n-1].Parts = append(ex.Contents[n-1].Parts, parts...)
			return
		}
		ex.Contents = append(ex.Contents, geminiContent{role, parts})
	}
	for _, m := range msgs {
		var parts []geminiPart
		for _, p := range m.Parts {
			switch p.Type {
			case record.PartText, record.PartRefusal:
				if p.Content != "" {
					parts = append(parts, geminiPart{Text: p.Content})
				}
			case record.PartToolCall:
				names[p.ID] = p.Name
				args := json.RawMessage(p.Arguments)
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				if args[0] != '{' {
					return nil, errSkip("tool call arguments that are not a JSON object")
				}
				parts = append(parts, geminiPart{FunctionCall: &geminiCall{p.Name, args}})
			case record.PartToolResult:
				name := p.Name
				if name == "" {
					name = names[p.ID]
				}
				if name == "" {
					return nil, errSkip("a tool result that names no tool")
				}
				parts = append(parts, geminiPart{FunctionResponse: &geminiResponse{name, functionResponse(p)}})
			}
		}
		switch m.Role {
		case record.RoleSystem:
			if ex.SystemInstruction == nil {
				ex.SystemInstruction = &geminiContent{Role: "system"}
			}
			ex.SystemInstruction.Parts = append(ex.SystemInstruction.Parts, parts...)
		case record.RoleAssistant:
			add("model", parts)
		default: // user, and tool results, which Gemini takes from the user
			add("user", parts)
		}
	}
	if len(ex.Contents) == 0 || ex.Contents[len(ex.Contents)-1].Role != "model" {
		return nil, errSkip("no answer to teach (the reference has no text or tool call)")
	}
	if len(it.Tools) > 0 {
		var t geminiTools
		for _, name := range it.Tools {
			d, ok := decls[name]
			if !ok {
				d = toolDecl{Name: name}
			}
			t.FunctionDeclarations = append(t.FunctionDeclarations, d)
		}
		ex.Tools = []geminiTools{t}
	}
	return ex, nil
}

// functionResponse is a tool result as Gemini's functionResponse.response,
// which is an object: the result's JSON when it is an object, otherwise
// {"output": content}, or {"error": content} for a failed tool.
func functionResponse(p record.Part) json.RawMessage {
	c := strings.TrimSpace(p.Content)
	if !p.IsError && strings.HasPrefix(c, "{") && json.Valid([]byte(c)) {
		return json.RawMessage(c)
	}
	key := "output"
	if p.IsError {
		key = "error"
	}
	b, _ := json.Marshal(map[string]string{key: p.Content})
	return b
}

// Claude's shape on Bedrock.

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicExampleLine struct {
	System   string             `json:"system,omitempty"`
	Messages []anthropicMessage `json:"messages"`
}

func anthropicExample(it *Item, _ map[string]toolDecl) (any, error) {
	msgs, err := it.conversation()
	if err != nil {
		return nil, err
	}
	var ex anthropicExampleLine
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == record.PartToolCall || p.Type == record.PartToolResult {
				return nil, errSkip("tool calls (Claude's fine-tuning format on Bedrock is text only)")
			}
		}
		t := text(&m)
		switch m.Role {
		case record.RoleSystem:
			if ex.System != "" {
				ex.System += "\n\n"
			}
			ex.System += t
			continue
		case record.RoleTool:
			return nil, errSkip("tool results (Claude's fine-tuning format on Bedrock is text only)")
		}
		if t == "" {
			continue
		}
		if n := len(ex.Messages); n > 0 && ex.Messages[n-1].Role == m.Role {
			ex.Messages[n-1].Content += "\n\n" + t
			continue
		}
		ex.Messages = append(ex.Messages, anthropicMessage{m.Role, t})
	}
	switch {
	case len(ex.Messages) < 2:
		return nil, errSkip("fewer than two messages with text")
	case ex.Messages[0].Role != record.RoleUser:
		return nil, errSkip("the first message is not the user's")
	case ex.Messages[len(ex.Messages)-1].Role != record.RoleAssistant:
		return nil, errSkip("the answer has no text")
	}
	return ex, nil
}
