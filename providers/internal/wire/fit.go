package wire

import (
	"encoding/json"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// SpeakerForRole maps the role of a request's last message to a record
// speaker: a user's message (or a system or developer message with
// nothing after it) is the user speaking; a tool or function result is
// the tool; an assistant or model message means the model is continuing
// its own work, the agent. It returns "" for an empty role.
func SpeakerForRole(role string) string {
	switch strings.ToLower(role) {
	case "":
		return ""
	case "tool", "function", "ipython", "function_call_output":
		return record.SpeakerTool
	case "assistant", "model":
		return record.SpeakerAgent
	}
	return record.SpeakerUser
}

// FitArray builds a JSON array from elems (each a valid JSON value) within
// max bytes, copied into a new buffer. When they do not all fit it keeps
// the latest elements, the ones a conversation's next turn depends on,
// behind a marker string "…[N earlier items cut]", and reports cut. (A
// call's Args are built in the buffer the recorder lends by
// convert.Args, which comes here only to cut.)
func FitArray[T ~string | ~[]byte](elems []T, max int) (arr json.RawMessage, cut bool) {
	total := 2
	for _, e := range elems {
		total += len(e) + 1
	}
	if total <= max {
		out := make([]byte, 0, total)
		out = append(out, '[')
		for i, e := range elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, e...)
		}
		return append(out, ']'), false
	}
	keep, size := 0, 64 // room for the marker
	for i := len(elems) - 1; i >= 0 && size+len(elems[i])+1 <= max; i-- {
		size += len(elems[i]) + 1
		keep++
	}
	out := make([]byte, 0, size+2)
	out = append(out, `["…[`...)
	out = append(out, []byte(itoa(len(elems)-keep))...)
	out = append(out, ` earlier items cut]"`...)
	for _, e := range elems[len(elems)-keep:] {
		out = append(out, ',')
		out = append(out, e...)
	}
	return append(out, ']'), true
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
