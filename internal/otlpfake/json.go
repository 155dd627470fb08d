package otlpfake

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// idSizes are the OTLP fields that hold trace and span IDs, by both of
// the names protojson accepts, with their sizes in bytes. In OTLP/JSON
// they are hex, where protojson has bytes in base64. (Only messages have
// keys in OTLP/JSON: attributes are lists of {"key", "value"}, so no
// attribute name can be taken for one of these.)
var idSizes = map[string]int{
	"traceId": 16, "trace_id": 16,
	"spanId": 8, "span_id": 8,
	"parentSpanId": 8, "parent_span_id": 8,
}

// UnmarshalJSON decodes OTLP/JSON, the OTLP specification's JSON encoding
// of its messages, into m. That is protojson with one difference, trace
// and span IDs in hex rather than base64 (which protojson would take
// without error, and decode wrong); fields it does not know are ignored,
// as the specification asks of a receiver.
func UnmarshalJSON(data []byte, m proto.Message) error {
	v, err := decodeJSON(data)
	if err != nil {
		return err
	}
	if err := rewriteIDs(v, hexToBase64); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m)
}

// MarshalJSON encodes m as OTLP/JSON: protojson's field names and values,
// trace and span IDs in hex.
func MarshalJSON(m proto.Message) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	if err := rewriteIDs(v, base64ToHex); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// decodeJSON decodes exactly one JSON value, numbers kept as written.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the JSON value")
	}
	return v, nil
}

// rewriteIDs replaces, in place, every ID field's string with what
// rewrite makes of it.
func rewriteIDs(v any, rewrite func(name, s string, size int) (string, error)) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if size, isID := idSizes[k]; isID {
				if s, ok := e.(string); ok {
					r, err := rewrite(k, s, size)
					if err != nil {
						return err
					}
					x[k] = r
					continue
				}
			}
			if err := rewriteIDs(e, rewrite); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := rewriteIDs(e, rewrite); err != nil {
				return err
			}
		}
	}
	return nil
}

// hexToBase64 reads an OTLP/JSON ID: empty, or size bytes in hex of
// either case.
func hexToBase64(name, s string, size int) (string, error) {
	if s == "" {
		return s, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != size {
		return "", fmt.Errorf("%s %q: want %d bytes in hex", name, s, size)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// base64ToHex writes protojson's ID as OTLP/JSON's.
func base64ToHex(name, s string, _ int) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", name, s, err)
	}
	return hex.EncodeToString(b), nil
}
