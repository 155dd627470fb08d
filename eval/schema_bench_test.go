package eval_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// subset is the JSON Schema validator we would write ourselves: type,
// properties, required, additionalProperties false, enum, minimum,
// pattern, items and local $ref. It is here only to measure the library
// against (BenchmarkSchemaLibraryVersusOwn); docs/evaluation.md says why
// the library is used.
func subset(root, s map[string]any, v any) error {
	if ref, ok := s["$ref"].(string); ok {
		var name string
		if _, err := fmt.Sscanf(ref, "#/$defs/%s", &name); err != nil {
			return fmt.Errorf("ref %s", ref)
		}
		return subset(root, root["$defs"].(map[string]any)[name].(map[string]any), v)
	}
	if t, ok := s["type"].(string); ok {
		okType := false
		switch x := v.(type) {
		case map[string]any:
			okType = t == "object"
		case []any:
			okType = t == "array"
		case string:
			okType = t == "string"
		case float64:
			okType = t == "number" || t == "integer" && x == float64(int64(x))
		case bool:
			okType = t == "boolean"
		case nil:
			okType = t == "null"
		}
		if !okType {
			return fmt.Errorf("want %s", t)
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, v) {
		return fmt.Errorf("not in enum")
	}
	if m, ok := s["minimum"].(float64); ok {
		if x, ok := v.(float64); ok && x < m {
			return fmt.Errorf("below minimum")
		}
	}
	if p, ok := s["pattern"].(string); ok {
		re, _ := patterns.Load(p)
		if re == nil {
			re, _ = patterns.LoadOrStore(p, regexp.MustCompile(p))
		}
		if x, ok := v.(string); ok && !re.(*regexp.Regexp).MatchString(x) {
			return fmt.Errorf("pattern")
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range s["required"].([]any) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("missing %s", r)
			}
		}
		for k, x := range obj {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("additional %s", k)
				}
				continue
			}
			if err := subset(root, ps, x); err != nil {
				return err
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if is, ok := s["items"].(map[string]any); ok {
			for _, x := range arr {
				if err := subset(root, is, x); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// patterns are subset's compiled patterns, once each.
var patterns sync.Map

func BenchmarkSchemaLibraryVersusOwn(b *testing.B) {
	doc := []byte(`{"id":"ORD-7","qty":2,"items":[{"sku":"x"},{"sku":"y"}]}`)
	var schema map[string]any
	require.NoError(b, json.Unmarshal([]byte(orderSchema), &schema))
	lib := jsonschema.NewCompiler()
	require.NoError(b, lib.AddResource("mem:///order.json", schema))
	compiled, err := lib.Compile("mem:///order.json")
	require.NoError(b, err)
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
			if err := compiled.Validate(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("own", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
			if err := subset(schema, schema, v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
