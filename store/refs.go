package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
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

// A record's answer (its Output) is a message too, kept once with the
// messages of args: the next call of its conversation sends it back as
// one of them. Its stored JSON (a record_docs doc) names it by ID in a
// first member of the store's own, which readers take out before they
// decode the rest as a record.
const outputRefKey = `{"llmhistory_output_message_id":`

// withOutputRef returns the JSON of a record, doc, naming its answer.
func withOutputRef(doc []byte, id int64) []byte {
	out := make([]byte, 0, len(doc)+len(outputRefKey)+20)
	out = append(out, outputRefKey...)
	out = strconv.AppendInt(out, id, 10)
	if len(doc) > 2 {
		out = append(out, ',')
	}
	return append(out, doc[1:]...)
}

// outputRef takes the answer's ID out of a stored record's JSON: the
// record's JSON, and the ID (0 when it has no answer).
func outputRef(doc []byte) ([]byte, int64) {
	rest, ok := bytes.CutPrefix(doc, []byte(outputRefKey))
	if !ok {
		return doc, 0
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return doc, 0
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return doc, 0
	}
	if rest[end] == '}' {
		return []byte("{}"), id
	}
	// The record's own members, its opening brace in place of the comma.
	return append([]byte{'{'}, rest[end+1:]...), id
}
