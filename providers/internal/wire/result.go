package wire

import (
	"strconv"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// Undecodable is the result of a 2xx response whose body should be one
// JSON document and is not. A body that is the beginning of a JSON
// document ended early: judged from the bytes alone, the response was cut
// on its way, as a dropped connection cuts it, and that is
// [record.ErrorTransport] (a client that reads it gets an unexpected EOF,
// and may retry). Anything else is [NotJSON].
//
// The recorder knows more than the bytes: when the body came whole, as
// its Content-Length or chunked framing declared, nothing was lost on the
// way, and it makes such a result [record.ErrorDecode], not retriable.
func Undecodable(body []byte) providers.Result {
	if record.CutJSON(body) {
		return providers.Result{
			Outcome:      record.Failure(record.ErrorTransport),
			ErrorMessage: "the response ended before its JSON did (" + strconv.Itoa(len(body)) + " bytes)",
		}
	}
	return NotJSON(len(body))
}

// NotJSON is the result of a 2xx response of n bytes that should be JSON
// and is not: no client can decode it, so the call failed with
// [record.ErrorDecode]. The body is not quoted: it may be anything, an
// HTML page or binary. Not Finished: a body the caller stopped reading
// half way is incomplete, not undecodable.
func NotJSON(n int) providers.Result {
	return providers.Result{
		Outcome:      record.Failure(record.ErrorDecode),
		ErrorMessage: "the response is not JSON (" + strconv.Itoa(n) + " bytes)",
	}
}

// Unfinished turns res into the outcome of a stream that reached the end of
// its body without its end (no end marker, no finish reason, or its last
// event cut off): nothing tells the caller it had the whole answer, so the
// call is [record.ErrorIncomplete], not a success. The response id and
// finish reason it had are kept.
func Unfinished(res *providers.Result, why string) {
	keep := res.Outcome
	res.Outcome = record.Failure(record.ErrorIncomplete)
	res.Outcome.ResponseID, res.Outcome.FinishReason = keep.ResponseID, keep.FinishReason
	res.ErrorMessage = why
}
