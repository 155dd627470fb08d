package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llmhistory/llmhistory/record"
)

// Rendering goes the other way from parsing: from what a record keeps
// of a call (its messages, its kwargs, its answer) back to the bodies a
// provider would send and an SDK would read. A record does not keep the
// wire bodies, so what is rendered is a body that says the same: read
// back by the provider's own parser, it gives the same messages, the same
// answer, the same usage and finish reason. llmhistory testgen renders a
// recorded conversation into a cassette with it.

// ErrNotRenderable is wrapped by the error of a renderer given a call it
// cannot write: a method it does not know (embeddings, an image), or
// messages cut when they were recorded.
var ErrNotRenderable = errors.New("providers: cannot render")

// Answer is a response as a record keeps it: what a renderer writes back
// into a provider's wire format.
type Answer struct {
	ID           string         // the response's id (Outcome.ResponseID)
	Model        string         // the model that answered
	Message      record.Message // the answer (Record.Output)
	Usage        *record.Usage  // nil: the response said none
	FinishReason string         // as the provider writes it: "stop", "end_turn", "STOP"
}

// AnswerOf returns the answer a record keeps.
func AnswerOf(r *record.Record) Answer {
	a := Answer{ID: r.Outcome.ResponseID, Model: r.Model, Usage: r.Usage, FinishReason: r.Outcome.FinishReason}
	if r.Output != nil {
		a.Message = r.Output.Clone()
	}
	if a.Message.Role == "" {
		a.Message.Role = record.RoleAssistant
	}
	return a
}

// AppendSSE appends one server-sent event: its event line when name is
// not empty, its data on one line, and the blank line that ends it.
func AppendSSE(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// MarshalJSON encodes v as compact JSON without HTML escaping (a model's
// "<" and "&" stay as they are, as providers send them). A renderer's
// only error is a part's JSON (arguments, data) that is not JSON.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRenderable, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Renderer is the capability of a provider that writes a recorded call
// back in its wire format. The built-in providers of OpenAI, Anthropic and
// Gemini have it.
type Renderer interface {
	// RenderRequest writes the request of a call of method (a record's
	// MethodName) from its messages and kwargs: the URL's path (and
	// query, a Gemini stream's ?alt=sse) and the JSON body.
	RenderRequest(method string, msgs []record.Message, kwargs []byte) (path string, body []byte, err error)
	// RenderResponse writes the answer of a call of method: its
	// Content-Type and its body, whole (one element), or as the frames of
	// a stream when stream is true, each a server-sent event.
	RenderResponse(method string, a Answer, stream bool) (contentType string, body [][]byte, err error)
	// RenderError writes the JSON body of an error response of status,
	// saying message, as the provider's SDKs read it.
	RenderError(status int, message string) []byte
}
