package prompt

import (
	"errors"
	"fmt"
)

// History is the value of a signature's history field (see [KindHistory]):
// earlier turns of the same signature, oldest first.
//
// Each element of Messages is one turn: a map holding at least one of the
// signature's input fields (the history field itself excluded) and at least
// one of its output fields, keyed as described on [Signature]. An adapter
// renders each element as two messages, a user message of its input fields
// and an assistant message of its output fields, placed after the demos and
// before the current request. An empty History renders no messages.
type History struct {
	Messages []map[string]any
}

// Tags of a *[HistoryError]; match them with [errors.Is].
var (
	// ErrInvalidHistoryValue: the history field's value is not a History
	// or a non-nil *History.
	ErrInvalidHistoryValue = errors.New("invalid_history_value")
	// ErrInvalidHistoryElement: an element of History.Messages has no
	// signature input field or no signature output field.
	ErrInvalidHistoryElement = errors.New("invalid_history_element")
)

// HistoryError is the tagged error of an invalid history: [errors.Is]
// matches its Tag, and [errors.As] gives the field, the failing element's
// index and the reason.
type HistoryError struct {
	Tag    error  // ErrInvalidHistoryValue or ErrInvalidHistoryElement
	Field  string // the history field's name
	Index  int    // the failing element's index; -1 for an invalid value
	Reason string // why, in words
}

// Error returns, for example,
// `prompt: invalid_history_element: field "history" element 1: no signature output field (want one of answer)`.
func (e *HistoryError) Error() string {
	tag := "invalid_history"
	if e.Tag != nil {
		tag = e.Tag.Error()
	}
	if e.Index < 0 {
		return fmt.Sprintf("prompt: %s: field %q: %s", tag, e.Field, e.Reason)
	}
	return fmt.Sprintf("prompt: %s: field %q element %d: %s", tag, e.Field, e.Index, e.Reason)
}

// Unwrap returns the tag.
func (e *HistoryError) Unwrap() error { return e.Tag }

// fieldTurn is one rendered exchange (a demo or a history element): the values
// of the shape's inputs and outputs, nil where absent.
type fieldTurn struct {
	in, out []any
}

// turnOf picks the text inputs and the outputs of m, and reports
// whether it has at least one of each.
func (sh *sigShape) turnOf(m map[string]any) (t fieldTurn, hasIn, hasOut bool) {
	var nIn, nOut int
	t.in, nIn = pickFields(m, sh.inputs, sh.inNorm)
	t.out, nOut = pickFields(m, sh.outputs, sh.outNorm)
	return t, nIn > 0, nOut > 0
}

// history returns the validated turns of the history value in inputs: none
// when the signature has no history field or the value is absent or nil.
func (sh *sigShape) history(inputs map[string]any) ([]fieldTurn, error) {
	if !sh.hasHist {
		return nil, nil
	}
	v := lookupField(inputs, sh.hist)
	if v == nil {
		return nil, nil
	}
	var h History
	switch x := v.(type) {
	case History:
		h = x
	case *History:
		if x == nil {
			return nil, sh.valueError("got a nil *prompt.History")
		}
		h = *x
	default:
		return nil, sh.valueError(fmt.Sprintf("want prompt.History or *prompt.History, got %T", v))
	}
	if len(h.Messages) == 0 {
		return nil, nil
	}
	turns := make([]fieldTurn, len(h.Messages))
	for i, m := range h.Messages {
		t, hasIn, hasOut := sh.turnOf(m)
		switch {
		case !hasIn && len(sh.inputs) == 0:
			return nil, sh.elementError(i, "no signature input field (the signature has none besides the history field)")
		case !hasIn:
			return nil, sh.elementError(i, "no signature input field (want one of "+sigFieldNames(sh.inputs)+")")
		case !hasOut:
			return nil, sh.elementError(i, "no signature output field (want one of "+sigFieldNames(sh.outputs)+")")
		}
		turns[i] = t
	}
	return turns, nil
}

func (sh *sigShape) valueError(reason string) error {
	return &HistoryError{Tag: ErrInvalidHistoryValue, Field: sh.hist.Name, Index: -1, Reason: reason}
}

func (sh *sigShape) elementError(i int, reason string) error {
	return &HistoryError{Tag: ErrInvalidHistoryElement, Field: sh.hist.Name, Index: i, Reason: reason}
}
