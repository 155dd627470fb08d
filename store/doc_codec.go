package store

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"

	kflate "github.com/klauspost/compress/flate"
)

// A record's document (its JSON without args) is stored compressed: it
// is most of a record's bytes beyond its messages, and nearly the same
// keys and values every time, which DEFLATE with a preset dictionary of
// a typical record takes down to a third. The first byte says how it is
// stored: '{' is plain JSON (any reader may write it so), docFlate1 is
// DEFLATE with docDict1. A dictionary is never changed once released
// (TestDocDictPinned): a new one gets a new first byte.
const docFlate1 = 0x01

// docDict1 is a record with most fields set, the strings its values are
// made of most often near the end (DEFLATE finds the nearest best).
const docDict1 = `{"call_id":"01JD2Q8Z3XKQ4M9R7T5V6W8Y0A","timestamp":"2026-11-23T10:00:00.000000Z","speaker":"agent","method_name":"gemini.models.generateContent","args":[],"args_prefix":{"call_id":"","count":0,"crc32c":0},"kwargs":{"model":"gemini-2.5-flash","stream":true,"max_tokens":1024,"temperature":0.7,"tools":[],"response_format":{"type":"json_object"}},"outcome_summary":{"status":"error","ok":false,"error_type":"rate_limit","retriable":true,"http_status":429,"finish_reason":"length","response_id":"resp_"},"trace_inferred":true,"parent_call_id":"01JD2Q8Y00000000000000000P","depth":1,"tags":["checkout","support"],"metadata":{"tenant":"acme","feature":"summarizer","experiment":"a"},"time_to_first_chunk_ms":140.5,"error_message":"Rate limit reached for requests","program_source":"","output":"","artifact_hit":true,"hops":1,"truncated":["args"],"history_guidance":true,"history_access_detected":true,"history_query_patterns":["slice","map","filter","count"],"cost":{"usd":0.000123,"table":"litellm-2026-11-20"},"usage":{"input_tokens":120,"output_tokens":48,"total_tokens":168,"cached_tokens":64,"cache_write_tokens":32,"reasoning_tokens":16},"anthropic.messages.create","claude-sonnet-4","gpt-4o","openai.chat.completions.create","kwargs":{"model":"gpt-4o-mini","temperature":0.2},"outcome_summary":{"status":"ok","ok":true,"retriable":false,"value_class":"chat.completion","http_status":200,"finish_reason":"stop","response_id":"chatcmpl-"},"trace_id":"","user_id":"user-","duration_ms":812.25,"attempts":1,"model":"gpt-4o-mini","history_record_appended":true,"conversation_history_size":3,"history_access_detected":false,"history_query_patterns":[],"version":1}`

// docWriters compress with klauspost/compress's DEFLATE, not the
// standard library's: a document is small (about 760 bytes, 160 stored)
// and the standard library's writer clears 640 KB of match tables on
// every Reset and builds dynamic Huffman tables for every block, about
// three quarters of its cost here. klauspost's writer resets by moving
// an offset and picks the cheapest block kind; its output is plain
// DEFLATE, which the standard library reads (decodeDoc does, and every
// test decodes what it wrote).
var docWriters = sync.Pool{New: func() any {
	w, err := kflate.NewWriterDict(nil, docLevel, []byte(docDict1))
	if err != nil {
		panic(err) // a valid level: cannot happen
	}
	return w
}}

// docLevel is the writer's compression level (BenchmarkDocCodec weighs
// the levels' speed against the bytes stored).
const docLevel = 2

// encodeDoc compresses a record's JSON.
func encodeDoc(doc []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(doc)/2 + 16)
	buf.WriteByte(docFlate1)
	w := docWriters.Get().(*kflate.Writer)
	w.Reset(&buf)
	w.Write(doc) // a bytes.Buffer does not fail
	w.Close()
	docWriters.Put(w)
	if buf.Len() >= len(doc) {
		return doc // tiny or odd: plain is smaller
	}
	return buf.Bytes()
}

var docReaders = sync.Pool{New: func() any { return flate.NewReaderDict(bytes.NewReader(nil), []byte(docDict1)) }}

// decodeDoc returns a record's JSON as stored.
func decodeDoc(stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] == '{' {
		return stored, nil
	}
	if stored[0] != docFlate1 {
		return nil, fmt.Errorf("store: a record stored in an unknown form (%#x): written by a newer llmhistory?", stored[0])
	}
	r := docReaders.Get().(io.ReadCloser)
	defer docReaders.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(stored[1:]), []byte(docDict1)); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(4 * len(stored))
	if _, err := out.ReadFrom(io.LimitReader(r, 64<<20)); err != nil {
		return nil, fmt.Errorf("store: a stored record is damaged: %w", err)
	}
	return out.Bytes(), nil
}
