package store

import (
	"encoding/binary"
	"errors"
)

// A record's args are stored as references to messages (see write.go):
// the first base_count message IDs of its base record's args, then the IDs
// in refs, each written as the zigzag varint of its difference from the
// one before (the first from the last ID taken from the base, or 0). IDs
// of one conversation are near each other, so a reference takes a byte
// or two.

func appendRefs(dst []byte, prev int64, ids []int64) []byte {
	for _, id := range ids {
		dst = binary.AppendVarint(dst, id-prev)
		prev = id
	}
	return dst
}

var errBadRefs = errors.New("store: damaged message references")

// decodeRefs appends the IDs refs hold to dst.
func decodeRefs(dst []int64, prev int64, refs []byte) ([]int64, error) {
	for len(refs) > 0 {
		d, n := binary.Varint(refs)
		if n <= 0 {
			return dst, errBadRefs
		}
		prev += d
		dst = append(dst, prev)
		refs = refs[n:]
	}
	return dst, nil
}

// countRefs is how many IDs refs holds, without decoding them: each
// varint ends with the one byte of it whose high bit is clear.
func countRefs(refs []byte) int {
	n := 0
	for _, b := range refs {
		if b < 0x80 {
			n++
		}
	}
	return n
}
