// Package wire holds the gjson helpers the built-in providers share.
//
// Parse views a captured body as a string without copying it: a body is
// parsed on every call, and gjson.ParseBytes would copy it whole. The
// price is that a string taken from the result may point into the body,
// which the recorder reuses once the provider returns; Str copies such a
// string out. Everything a provider keeps must go through Str or be
// copied into a buffer of its own.
package wire

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Parse parses b, which must not change while the result is in use.
func Parse(b []byte) gjson.Result {
	if len(b) == 0 {
		return gjson.Result{}
	}
	return gjson.Parse(unsafe.String(&b[0], len(b)))
}

// Str returns r's string value, copied out of the parsed body.
func Str(r gjson.Result) string { return strings.Clone(r.String()) }
