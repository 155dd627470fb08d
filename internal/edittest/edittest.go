// Package edittest holds what the tests of request-body edits share: the
// history preview's guidance must be one insertion into the body, every
// other byte kept (see providers.GuidanceEditor).
package edittest

import "bytes"

// Insertion returns what was inserted into in to give out, when out is in
// with one run of bytes added and nothing else changed.
func Insertion(in, out []byte) ([]byte, bool) {
	if len(out) < len(in) {
		return nil, false
	}
	p := 0
	for p < len(in) && in[p] == out[p] {
		p++
	}
	if !bytes.HasSuffix(out, in[p:]) {
		return nil, false
	}
	return out[p : len(out)-len(in)+p], true
}
