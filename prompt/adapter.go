package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // RoleSystem, RoleUser or RoleAssistant
	Content string `json:"content"`
}

// Roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Adapter turns a signature, demos and a call's inputs into chat messages.
//
// The adapters of this package ([LineAdapter], [JSONAdapter],
// [MarkerAdapter]) are stateless and safe for concurrent use. Their Format
// returns, in order:
//
//  1. a system message, when the adapter uses one;
//  2. each demo as a user message of its input fields and an assistant
//     message of its output fields, in the order given; a demo missing
//     every input field or every output field is skipped, as Python DSPy
//     skips incomplete demos;
//  3. each element of the [History] value, if any, as a user message and
//     an assistant message, rendered like a demo: exactly 2·N messages for
//     N elements;
//  4. the current request: one user message of the call's input fields.
//
// The history field takes no part in any other message: a call without
// history is rendered byte for byte as the same signature without its
// history field. Fields are rendered in signature order, and only those
// present. Format fails, returning no messages, when the signature is not
// well formed ([ErrInvalidSignature]), when the history is invalid (a
// *[HistoryError]) or when a value cannot be encoded as JSON. It never
// modifies its arguments.
type Adapter interface {
	// Format renders a call: demos are earlier examples (maps holding
	// input and output fields), inputs are the call's input values by
	// field name.
	Format(sig Signature, demos []map[string]any, inputs map[string]any) ([]Message, error)
}

var (
	_ Adapter = LineAdapter{}
	_ Adapter = JSONAdapter{}
	_ Adapter = MarkerAdapter{}
)

// LineAdapter renders fields as "Label: value" lines joined by "\n" (see
// [Field.Label]). String values are written as they are, other values as
// compact JSON. It has a system message only when the signature has
// Instructions, and that message is the instructions.
//
// A history element {"question": "2+2?", "answer": 4} of a signature
// question -> answer gives a user message "Question: 2+2?" and an
// assistant message "Answer: 4".
type LineAdapter struct{}

// Format implements [Adapter]: see there for the order of the messages and
// the demos that are skipped.
func (a LineAdapter) Format(sig Signature, demos []map[string]any, inputs map[string]any) ([]Message, error) {
	return formatCall(a, sig, demos, inputs)
}

func (LineAdapter) system(sh *sigShape) (string, bool) {
	instr := strings.TrimSpace(sh.sig.Instructions)
	return instr, instr != ""
}

func (LineAdapter) user(x *valueEncoder, sh *sigShape, vals []any, _ bool) (string, error) {
	return labelLines(x, sh.inputs, vals)
}

func (LineAdapter) assistant(x *valueEncoder, sh *sigShape, vals []any) (string, error) {
	return labelLines(x, sh.outputs, vals)
}

func labelLines(x *valueEncoder, fields []Field, vals []any) (string, error) {
	var b strings.Builder
	for i, v := range vals {
		if v == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fields[i].label())
		b.WriteString(": ")
		if err := x.text(&b, v); err != nil {
			return "", fieldValueError(fields[i], err)
		}
	}
	return b.String(), nil
}

// JSONAdapter renders fields as one JSON object per message, keyed by
// field name in signature order; values are JSON-encoded (strings as JSON
// strings). Its system message lists the input and output fields with
// their descriptions, asks for one JSON object whose keys are the output
// field names, and states the task: the signature's Instructions, or
// "Given the fields `a`, produce the fields `b`." when there are none.
//
// A history element {"question": "2+2?", "answer": 4} of a signature
// question -> answer gives a user message {"question":"2+2?"} and an
// assistant message {"answer":4}.
type JSONAdapter struct{}

// Format implements [Adapter]: see there for the order of the messages and
// the demos that are skipped.
func (a JSONAdapter) Format(sig Signature, demos []map[string]any, inputs map[string]any) ([]Message, error) {
	return formatCall(a, sig, demos, inputs)
}

func (JSONAdapter) system(sh *sigShape) (string, bool) {
	var b strings.Builder
	describeFields(&b, sh)
	b.WriteString("\n\nEach user message is a JSON object of the input fields, keyed by field name. ")
	b.WriteString("Answer with one JSON object whose keys are the output field names: ")
	for i, f := range sh.outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + f.Name + "`")
	}
	b.WriteString(". Write nothing outside the object.\n\n")
	writeObjective(&b, sh)
	return b.String(), true
}

func (JSONAdapter) user(x *valueEncoder, sh *sigShape, vals []any, _ bool) (string, error) {
	return fieldObject(x, sh.inputs, vals)
}

func (JSONAdapter) assistant(x *valueEncoder, sh *sigShape, vals []any) (string, error) {
	return fieldObject(x, sh.outputs, vals)
}

// object writes the present fields as a compact JSON object in field
// order; encoding/json would sort a map's keys.
func fieldObject(x *valueEncoder, fields []Field, vals []any) (string, error) {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for i, v := range vals {
		if v == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := x.json(&b, fields[i].Name); err != nil {
			return "", fieldValueError(fields[i], err)
		}
		b.WriteByte(':')
		if err := x.json(&b, v); err != nil {
			return "", fieldValueError(fields[i], err)
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}

// MarkerAdapter renders fields the way Python DSPy's ChatAdapter does: each
// field is a block "[[ ## name ## ]]\nvalue", blocks are separated by a
// blank line, and an assistant message ends with the block
// "[[ ## completed ## ]]". String values are written as they are, other
// values as compact JSON.
//
// Its system message lists the input and output fields with their
// descriptions, shows the structure of a turn with "{name}" placeholders,
// and states the task: the signature's Instructions, or "Given the fields
// `a`, produce the fields `b`." when there are none. The current request's
// user message ends with the instruction to respond with the output fields,
// starting with the first output's marker and ending with
// "[[ ## completed ## ]]"; demo and history user messages do not.
//
// A history element {"question": "2+2?", "answer": 4} of a signature
// question -> answer gives a user message "[[ ## question ## ]]\n2+2?"
// and an assistant message
// "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]".
type MarkerAdapter struct{}

// Format implements [Adapter]: see there for the order of the messages and
// the demos that are skipped.
func (a MarkerAdapter) Format(sig Signature, demos []map[string]any, inputs map[string]any) ([]Message, error) {
	return formatCall(a, sig, demos, inputs)
}

const completedMarker = "[[ ## completed ## ]]"

func markerFor(name string) string { return "[[ ## " + name + " ## ]]" }

func (MarkerAdapter) system(sh *sigShape) (string, bool) {
	var b strings.Builder
	describeFields(&b, sh)
	b.WriteString("\n\nAll interactions will be structured in the following way, with the appropriate values filled in.\n\n")
	for _, fields := range [][]Field{sh.inputs, sh.outputs} {
		for _, f := range fields {
			b.WriteString(markerFor(f.Name) + "\n{" + f.Name + "}\n\n")
		}
	}
	b.WriteString(completedMarker + "\n\n")
	writeObjective(&b, sh)
	return b.String(), true
}

func (MarkerAdapter) user(x *valueEncoder, sh *sigShape, vals []any, request bool) (string, error) {
	var b strings.Builder
	if err := markerBlocks(&b, x, sh.inputs, vals); err != nil {
		return "", err
	}
	if request {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Respond with the corresponding output fields, starting with the field ")
		for i, f := range sh.outputs {
			if i > 0 {
				b.WriteString(", then ")
			}
			b.WriteString("`" + markerFor(f.Name) + "`")
		}
		b.WriteString(", and then ending with the marker for `" + completedMarker + "`.")
	}
	return b.String(), nil
}

func (MarkerAdapter) assistant(x *valueEncoder, sh *sigShape, vals []any) (string, error) {
	var b strings.Builder
	if err := markerBlocks(&b, x, sh.outputs, vals); err != nil {
		return "", err
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(completedMarker)
	return b.String(), nil
}

func markerBlocks(b *strings.Builder, x *valueEncoder, fields []Field, vals []any) error {
	for i, v := range vals {
		if v == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(markerFor(fields[i].Name) + "\n")
		if err := x.text(b, v); err != nil {
			return fieldValueError(fields[i], err)
		}
	}
	return nil
}

// describeFields writes the numbered input and output fields with their
// descriptions, as DSPy's ChatAdapter does.
func describeFields(b *strings.Builder, sh *sigShape) {
	for i, fields := range [][]Field{sh.inputs, sh.outputs} {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString([]string{"Your input fields are:", "Your output fields are:"}[i])
		if len(fields) == 0 {
			b.WriteString(" none.")
		}
		for j, f := range fields {
			b.WriteString("\n" + strconv.Itoa(j+1) + ". `" + f.Name + "`")
			if f.Description != "" {
				b.WriteString(": " + f.Description)
			}
		}
	}
}

// objective writes the task: the signature's instructions, each line
// indented, or a default naming the fields.
func writeObjective(b *strings.Builder, sh *sigShape) {
	b.WriteString("In adhering to this structure, your objective is:")
	instr := strings.TrimSpace(sh.sig.Instructions)
	if instr == "" {
		instr = defaultInstructions(sh)
	}
	for line := range strings.Lines(instr) {
		b.WriteString("\n        ")
		b.WriteString(strings.TrimRight(line, "\r\n"))
	}
}

// defaultInstructions is DSPy's task description of a signature without
// instructions.
func defaultInstructions(sh *sigShape) string {
	quote := func(fields []Field) string {
		var b strings.Builder
		for i, f := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + f.Name + "`")
		}
		return b.String()
	}
	if len(sh.inputs) == 0 {
		return "Produce the fields " + quote(sh.outputs) + "."
	}
	return "Given the fields " + quote(sh.inputs) + ", produce the fields " + quote(sh.outputs) + "."
}

// adapterStyle is how an adapter renders its messages; formatCall does the rest.
type adapterStyle interface {
	// system returns the system message, if the adapter uses one.
	system(sh *sigShape) (string, bool)
	// user renders input values (aligned with sh.inputs, nil where
	// absent); request is true for the current request.
	user(x *valueEncoder, sh *sigShape, vals []any, request bool) (string, error)
	// assistant renders output values (aligned with sh.outputs).
	assistant(x *valueEncoder, sh *sigShape, vals []any) (string, error)
}

// formatCall is the message order shared by the adapters.
func formatCall(st adapterStyle, sig Signature, demos []map[string]any, inputs map[string]any) ([]Message, error) {
	sh, err := newShape(sig)
	if err != nil {
		return nil, err
	}
	hist, err := sh.history(inputs)
	if err != nil {
		return nil, err
	}
	x := newValueEncoder()
	msgs := make([]Message, 0, 2+2*(len(demos)+len(hist)))
	if s, ok := st.system(sh); ok {
		msgs = append(msgs, Message{Role: RoleSystem, Content: s})
	}
	pair := func(t fieldTurn) error {
		u, err := st.user(x, sh, t.in, false)
		if err != nil {
			return err
		}
		a, err := st.assistant(x, sh, t.out)
		if err != nil {
			return err
		}
		msgs = append(msgs, Message{Role: RoleUser, Content: u}, Message{Role: RoleAssistant, Content: a})
		return nil
	}
	for i, d := range demos {
		t, hasIn, hasOut := sh.turnOf(d)
		if !hasIn || !hasOut {
			continue
		}
		if err := pair(t); err != nil {
			return nil, fmt.Errorf("prompt: demo %d: %w", i, err)
		}
	}
	for i, t := range hist {
		if err := pair(t); err != nil {
			return nil, fmt.Errorf("prompt: history element %d: %w", i, err)
		}
	}
	cur, _ := pickFields(inputs, sh.inputs, sh.inNorm)
	u, err := st.user(x, sh, cur, true)
	if err != nil {
		return nil, fmt.Errorf("prompt: inputs: %w", err)
	}
	return append(msgs, Message{Role: RoleUser, Content: u}), nil
}

func fieldValueError(f Field, err error) error {
	return fmt.Errorf("field %q: %w", f.Name, err)
}

// valueEncoder writes values as compact JSON without HTML escaping, reusing one
// buffer for a whole call.
type valueEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newValueEncoder() *valueEncoder {
	x := &valueEncoder{}
	x.enc = json.NewEncoder(&x.buf)
	x.enc.SetEscapeHTML(false)
	return x
}

// json writes v as compact JSON.
func (x *valueEncoder) json(b *strings.Builder, v any) error {
	x.buf.Reset()
	if err := x.enc.Encode(v); err != nil {
		return err
	}
	b.Write(bytes.TrimSuffix(x.buf.Bytes(), []byte{'\n'}))
	return nil
}

// text writes a string as it is and any other value as compact JSON.
func (x *valueEncoder) text(b *strings.Builder, v any) error {
	if s, ok := v.(string); ok {
		b.WriteString(s)
		return nil
	}
	return x.json(b, v)
}
