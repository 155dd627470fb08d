package wire

import (
	"bytes"

	"github.com/llmhistory/llmhistory/record"
)

// LastValue returns the JSON value that follows the last occurrence of a
// quoted key (`"usage"`) in b, a fragment of a JSON document, or nil when
// there is none or it is not whole. It reads the tail of a body the
// recorder cut: the fields that close a response (usage, a finish reason)
// are there, and the last occurrence of a key is the outermost one's.
func LastValue(b []byte, key string) []byte {
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 {
		return nil
	}
	return valueAfter(b[i+len(key):])
}

// FirstValue is [LastValue] for the first occurrence of key: the head of a
// cut body opens with the top level's fields (an id, a model).
func FirstValue(b []byte, key string) []byte {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return nil
	}
	return valueAfter(b[i+len(key):])
}

// valueAfter reads ": <value>" at the start of b.
func valueAfter(rest []byte) []byte {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	end := valueEnd(rest)
	if end <= 0 || !record.ValidJSON(rest[:end]) {
		return nil
	}
	return rest[:end]
}

// valueEnd returns the length of the JSON value b starts with (an object,
// an array or a string; anything else runs to the next delimiter), or -1
// when b ends first.
func valueEnd(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	switch b[0] {
	case '"':
		if end, _ := stringEnd(b, 0); end >= 0 {
			return end + 1
		}
		return -1
	case '{', '[':
		depth := 0
		for i := 0; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, _ := stringEnd(b, i)
				if end < 0 {
					return -1
				}
				i = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	i := bytes.IndexAny(b, ",}] \t\r\n")
	if i < 0 {
		return -1
	}
	return i
}
