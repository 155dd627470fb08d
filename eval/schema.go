package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// ErrSchema: a JSON Schema, or a tool declaration, that cannot be used.
var ErrSchema = errors.New("eval: invalid schema")

// schema is a compiled JSON Schema.
type schema struct{ s *jsonschema.Schema }

// compileSchema compiles a JSON Schema (draft 2020-12 unless its $schema
// names another) with no loader: a $ref to a file or a URL fails here,
// rather than reading the disk or the network while judging.
func compileSchema(name string, doc []byte) (*schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrSchema, name, err)
	}
	return compileValue(name, v)
}

func compileValue(name string, v any) (*schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrSchema, name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrSchema, name, err)
	}
	return &schema{s}, nil
}

// english prints the validator's complaints, as its own Error does.
var english = message.NewPrinter(language.English)

// validate checks a JSON document against the schema. The error is one
// line: where, and what (the innermost cause).
func (s *schema) validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	err = s.s.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return fmt.Errorf("at /%s: %s", strings.Join(ve.InstanceLocation, "/"), ve.ErrorKind.LocalizedString(english))
}

// ToolArgs returns the evaluator "tool_args": true when every tool call a
// call made names a tool the request offered and has arguments valid
// against that tool's parameters, false with the first that does not.
//
// A record keeps the names of the tools a request offered (kwargs
// "tools"), not their declarations, which are long and the same on every
// call: tools gives them, as the application sends them, in any of these
// forms, one JSON array or object:
//
//   - OpenAI chat: [{"type": "function", "function": {"name", "parameters"}}]
//   - OpenAI Responses: [{"type": "function", "name", "parameters"}]
//   - Anthropic: [{"name", "input_schema"}]
//   - Gemini: [{"functionDeclarations": [{"name", "parameters" or "parametersJsonSchema"}]}]
//     (its OpenAPI type names, "OBJECT", "STRING", are read as JSON Schema's)
//   - a map from a tool's name to its parameters' JSON Schema
//
// A call that made no tool call is not judged. A tool call to a tool that
// the record says was not offered, or that tools does not declare, fails.
// The version is a digest of tools.
func ToolArgs(tools []byte) (Evaluator, error) {
	decls, err := toolSchemas(tools)
	if err != nil {
		return nil, err
	}
	return Check("tool_args", digest(string(tools)), func(r *record.Record) (store.Value, string, bool) {
		if !r.Outcome.OK || !r.Output.Has(record.PartToolCall) {
			return store.Value{}, "", false
		}
		offered := offeredTools(r)
		for _, tc := range r.Output.Parts {
			if tc.Type != record.PartToolCall {
				continue
			}
			if offered != nil && !slices.Contains(offered, tc.Name) {
				return store.Bool(false), fmt.Sprintf("%s: not among the tools offered (%s)", tc.Name, strings.Join(offered, ", ")), true
			}
			s, ok := decls[tc.Name]
			if !ok {
				return store.Bool(false), tc.Name + ": no such tool declared", true
			}
			if err := s.validate([]byte(tc.ArgumentsText())); err != nil { // none: "{}", as SDKs send it
				return store.Bool(false), tc.Name + ": " + err.Error(), true
			}
		}
		return store.Bool(true), "", true
	}), nil
}

// offeredTools returns the tool names a record's kwargs list, nil when it
// lists none.
func offeredTools(r *record.Record) []string {
	var kw struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(r.Kwargs, &kw) != nil || len(kw.Tools) == 0 {
		return nil
	}
	names := make([]string, 0, len(kw.Tools))
	for _, t := range kw.Tools {
		var s string
		if json.Unmarshal(t, &s) == nil {
			names = append(names, s)
		}
	}
	return names
}

// toolSchemas compiles the parameters of each tool declared in tools.
func toolSchemas(tools []byte) (map[string]*schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(tools))
	if err != nil {
		return nil, fmt.Errorf("%w: tools: %v", ErrSchema, err)
	}
	params := map[string]any{}
	switch t := v.(type) {
	case map[string]any:
		params = t
	case []any:
		for _, e := range t {
			if err := declared(e, params); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%w: tools is neither an array of declarations nor an object of schemas", ErrSchema)
	}
	if len(params) == 0 {
		return nil, fmt.Errorf("%w: tools declares no tool", ErrSchema)
	}
	out := make(map[string]*schema, len(params))
	for name, p := range params {
		s, err := compileValue("tool "+name, p)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// declared adds the parameters of the tools one declaration declares.
func declared(e any, params map[string]any) error {
	d, ok := e.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: a tool declaration is not an object", ErrSchema)
	}
	if fs, ok := d["functionDeclarations"].([]any); ok { // Gemini
		for _, f := range fs {
			fd, _ := f.(map[string]any)
			name, _ := fd["name"].(string)
			if name == "" {
				return fmt.Errorf("%w: a Gemini function declaration has no name", ErrSchema)
			}
			if p, ok := fd["parametersJsonSchema"]; ok {
				params[name] = p
			} else if p, ok := fd["parameters"]; ok {
				params[name] = openAPITypes(p)
			} else {
				params[name] = map[string]any{"type": "object"}
			}
		}
		return nil
	}
	if f, ok := d["function"].(map[string]any); ok { // OpenAI chat
		d = f
	}
	name, _ := d["name"].(string)
	if name == "" {
		_, p1 := d["parameters"]
		_, p2 := d["input_schema"]
		if typ, _ := d["type"].(string); !p1 && !p2 && typ != "function" {
			return nil // a built-in tool (web_search, googleSearch): no arguments to check
		}
		return fmt.Errorf("%w: a tool declaration has no name", ErrSchema)
	}
	for _, key := range []string{"parameters", "input_schema"} {
		if p, ok := d[key]; ok {
			params[name] = p
			return nil
		}
	}
	params[name] = map[string]any{"type": "object"} // a tool without parameters
	return nil
}

// openAPITypes returns a Gemini schema with its OpenAPI type names
// ("OBJECT", "STRING") lower-cased, as JSON Schema spells them.
func openAPITypes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if s, ok := e.(string); ok && k == "type" {
				out[k] = strings.ToLower(s)
				continue
			}
			if k == "nullable" {
				continue // OpenAPI's keyword, not JSON Schema's
			}
			out[k] = openAPITypes(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = openAPITypes(e)
		}
		return out
	}
	return v
}
