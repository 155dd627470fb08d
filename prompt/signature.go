package prompt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldKind is the kind of a signature field.
type FieldKind int

// Field kinds.
const (
	// KindText is an ordinary field; it is the zero value.
	KindText FieldKind = iota
	// KindHistory marks the input field that carries the conversation
	// history: its value is a [History] or a *[History]. A signature has at
	// most one, among its inputs.
	KindHistory
)

// String returns "text", "history" or "FieldKind(n)".
func (k FieldKind) String() string {
	switch k {
	case KindText:
		return "text"
	case KindHistory:
		return "history"
	}
	return "FieldKind(" + strconv.Itoa(int(k)) + ")"
}

// Field is one input or output field of a [Signature].
type Field struct {
	Name        string // as declared: "question", "user_id"
	Description string
	// Label is what the line adapter writes before a value. Empty means
	// Name with its first letter upper-cased ("user_id" gives "User_id").
	Label string
	Kind  FieldKind
}

// label returns f.Label, or f.Name with its first letter upper-cased.
func (f Field) label() string {
	if f.Label != "" {
		return f.Label
	}
	r, n := utf8.DecodeRuneInString(f.Name)
	if r == utf8.RuneError || unicode.IsUpper(r) {
		return f.Name
	}
	return string(unicode.ToUpper(r)) + f.Name[n:]
}

// Signature is the contract of a signature-driven program: ordered input
// and output fields and an optional task description.
//
// Values are looked up in the maps a caller gives (the call's inputs,
// demos and history elements) by field name, whatever the key's case or
// snake/camel spelling: keys and names are compared lower-cased with '_'
// and '-' removed, so "user_id", "userId", "UserID" and "USER-ID" all name
// the field "user_id". Unknown keys are ignored, and a key whose value is
// nil counts as absent. When several keys of one map name the same field,
// the key spelled exactly as the field's name wins, then the least key in
// byte order.
//
// A signature is well formed when every field has a name that is not empty
// once normalized, no two fields (inputs and outputs together) share a
// normalized name, every Kind is KindText or KindHistory, at most one field
// is of kind KindHistory and it is an input, and there is at least one
// output. Adapters and [Signature.Validate] fail with [ErrInvalidSignature]
// otherwise.
type Signature struct {
	// Instructions is the optional task description, used by adapters
	// that have a system message.
	Instructions string
	Inputs       []Field
	Outputs      []Field
}

// ErrInvalidSignature is the error of a signature that is not well formed
// (see [Signature]); the wrapping error says what is wrong.
var ErrInvalidSignature = errors.New("prompt: invalid signature")

// HistoryField returns the first input field of kind [KindHistory]. The
// field is found by its Kind, never by its name: an input named "history"
// of kind KindText is an ordinary field.
func (s Signature) HistoryField() (Field, bool) {
	for _, f := range s.Inputs {
		if f.Kind == KindHistory {
			return f, true
		}
	}
	return Field{}, false
}

// Validate reports whether an adapter would accept the signature and the
// history value in inputs. It fails with [ErrInvalidSignature] when the
// signature is not well formed, and with a *[HistoryError] when the history
// field is present in inputs with an invalid value or an invalid element.
// An absent history key, a nil value and a signature without a history
// field are all valid.
func (s Signature) Validate(inputs map[string]any) error {
	sh, err := newShape(s)
	if err != nil {
		return err
	}
	_, err = sh.history(inputs)
	return err
}

// normKey normalizes a field name or a map key: lower-cased, without '_'
// and '-'.
func normKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '_' || r == '-' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// sigShape is a well-formed signature split for rendering: the text inputs
// (the history field excluded), the outputs, and the history field.
type sigShape struct {
	sig     Signature
	inputs  []Field
	outputs []Field
	inNorm  []string // normKey of each of inputs
	outNorm []string // normKey of each of outputs
	hist    Field
	hasHist bool
}

// newShape checks sig and splits it.
func newShape(sig Signature) (*sigShape, error) {
	sh := &sigShape{sig: sig}
	seen := make(map[string]string, len(sig.Inputs)+len(sig.Outputs))
	check := func(where string, i int, f Field) error {
		n := normKey(f.Name)
		if n == "" {
			return fmt.Errorf("%w: %s[%d] has no name (got %q)", ErrInvalidSignature, where, i, f.Name)
		}
		if f.Kind != KindText && f.Kind != KindHistory {
			return fmt.Errorf("%w: field %q has unknown kind %v", ErrInvalidSignature, f.Name, f.Kind)
		}
		if prev, ok := seen[n]; ok {
			return fmt.Errorf("%w: fields %q and %q have the same name once case, '_' and '-' are ignored", ErrInvalidSignature, prev, f.Name)
		}
		seen[n] = f.Name
		return nil
	}
	for i, f := range sig.Inputs {
		if err := check("Inputs", i, f); err != nil {
			return nil, err
		}
		if f.Kind == KindHistory {
			if sh.hasHist {
				return nil, fmt.Errorf("%w: two history fields, %q and %q; a signature has at most one", ErrInvalidSignature, sh.hist.Name, f.Name)
			}
			sh.hist, sh.hasHist = f, true
			continue
		}
		sh.inputs = append(sh.inputs, f)
		sh.inNorm = append(sh.inNorm, normKey(f.Name))
	}
	for i, f := range sig.Outputs {
		if err := check("Outputs", i, f); err != nil {
			return nil, err
		}
		if f.Kind == KindHistory {
			return nil, fmt.Errorf("%w: history field %q is an output; it must be an input", ErrInvalidSignature, f.Name)
		}
		sh.outputs = append(sh.outputs, f)
		sh.outNorm = append(sh.outNorm, normKey(f.Name))
	}
	if len(sh.outputs) == 0 {
		return nil, fmt.Errorf("%w: no output fields", ErrInvalidSignature)
	}
	return sh, nil
}

// pickFields returns the values of fields in m, aligned with fields; nil means
// absent. norm holds normKey of each field's name. See [Signature] for the
// key rules.
func pickFields(m map[string]any, fields []Field, norm []string) (vals []any, n int) {
	vals = make([]any, len(fields))
	var keys []string // the key each value came from
	for k, v := range m {
		if v == nil {
			continue
		}
		nk := normKey(k)
		for i, fn := range norm {
			if fn != nk {
				continue
			}
			if keys == nil {
				keys = make([]string, len(fields))
			}
			if vals[i] == nil || betterKey(k, keys[i], fields[i].Name) {
				if vals[i] == nil {
					n++
				}
				vals[i], keys[i] = v, k
			}
			break
		}
	}
	return vals, n
}

// betterKey reports whether key k beats key old for the field named name.
func betterKey(k, old, name string) bool {
	if old == name {
		return false
	}
	return k == name || k < old
}

// lookupField returns the value of field f in m, nil when absent.
func lookupField(m map[string]any, f Field) any {
	vals, _ := pickFields(m, []Field{f}, []string{normKey(f.Name)})
	return vals[0]
}

// sigFieldNames returns the fields' names joined by ", ".
func sigFieldNames(fields []Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
