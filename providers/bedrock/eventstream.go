package bedrock

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strconv"
)

// The application/vnd.amazon.eventstream framing, as AWS documents it for
// its streaming APIs (and as aws-sdk-go-v2's aws/protocol/eventstream
// reads it). Each message is
//
//	total length   uint32, big endian: the whole message, these 4 bytes included
//	headers length uint32
//	prelude CRC    uint32: CRC-32 (IEEE) of the 8 bytes before it
//	headers        name length (1 byte), name, value type (1 byte), value
//	payload        the rest
//	message CRC    uint32: CRC-32 of every byte of the message before it
//
// A header's value is, by type: 0 true and 1 false (no bytes), 2 a byte, 3
// an int16, 4 an int32, 5 an int64, 6 bytes and 7 a string (each a uint16
// length, then that many bytes), 8 a timestamp (int64 milliseconds), 9 a
// UUID (16 bytes). Bedrock names a message with the string headers
// :message-type ("event", "exception" or "error"), :event-type (chunk,
// messageStart, contentBlockDelta, ...), :exception-type
// (throttlingException, ...), :error-code and :error-message, and
// :content-type.

const (
	preludeLen = 12
	crcLen     = 4
	minFrame   = preludeLen + crcLen
	// maxFrame and maxHeaders are the bounds AWS gives (16 MiB a message,
	// 128 KiB of headers), which the SDK's decoder enforces too: a length
	// above them is damage, not a message to wait for.
	maxFrame   = 16 << 20
	maxHeaders = 128 << 10
)

// frame is one message of an eventstream body. Its fields are views into
// the body.
type frame struct {
	messageType   []byte // :message-type
	eventType     []byte // :event-type
	exceptionType []byte // :exception-type
	errorCode     []byte // :error-code
	errorMessage  []byte // :error-message
	payload       []byte
}

// errShort says that the bytes end before the frame they start does: the
// end of a capture cut by the recorder, or a stream that ended half way.
var errShort = errors.New("the stream ends in the middle of a frame")

// frameError says what is wrong with a damaged frame.
type frameError struct {
	offset int // where the frame starts in the body
	why    string
}

func (e *frameError) Error() string {
	return "the eventstream frame at byte " + strconv.Itoa(e.offset) + " is damaged: " + e.why
}

// readFrame reads the frame at the start of b and returns it and its
// length; errShort when b ends before it does, a *frameError (offset 0)
// when it is damaged: a prelude or message CRC that does not match, a
// length out of bounds, headers that do not parse.
func readFrame(b []byte) (f frame, n int, err error) {
	if len(b) < preludeLen {
		return f, 0, errShort
	}
	total := binary.BigEndian.Uint32(b[0:4])
	hlen := binary.BigEndian.Uint32(b[4:8])
	if crc32.ChecksumIEEE(b[:8]) != binary.BigEndian.Uint32(b[8:12]) {
		return f, 0, &frameError{why: "prelude CRC mismatch"}
	}
	if total < minFrame || total > maxFrame || hlen > maxHeaders || hlen > total-minFrame {
		return f, 0, &frameError{why: "length " + strconv.FormatUint(uint64(total), 10) + " with " + strconv.FormatUint(uint64(hlen), 10) + " bytes of headers is out of bounds"}
	}
	n = int(total)
	if len(b) < n {
		return f, 0, errShort
	}
	if crc32.ChecksumIEEE(b[:n-crcLen]) != binary.BigEndian.Uint32(b[n-crcLen:n]) {
		return f, 0, &frameError{why: "message CRC mismatch"}
	}
	headers := b[preludeLen : preludeLen+int(hlen)]
	f.payload = b[preludeLen+int(hlen) : n-crcLen]
	if why := f.readHeaders(headers); why != "" {
		return frame{}, 0, &frameError{why: why}
	}
	return f, n, nil
}

// readHeaders reads the headers a frame is named by, and says what is
// wrong with them, if anything.
func (f *frame) readHeaders(h []byte) string {
	for len(h) > 0 {
		nameLen := int(h[0])
		if nameLen == 0 || 1+nameLen+1 > len(h) {
			return "a header name runs past the headers"
		}
		name := h[1 : 1+nameLen]
		typ := h[1+nameLen]
		h = h[1+nameLen+1:]
		var size int
		switch typ {
		case 0, 1:
			size = 0
		case 2:
			size = 1
		case 3:
			size = 2
		case 4:
			size = 4
		case 5, 8:
			size = 8
		case 9:
			size = 16
		case 6, 7:
			if len(h) < 2 {
				return "a header value runs past the headers"
			}
			size = 2 + int(binary.BigEndian.Uint16(h))
		default:
			return "header type " + strconv.Itoa(int(typ)) + " is unknown"
		}
		if size > len(h) {
			return "a header value runs past the headers"
		}
		if typ == 7 {
			v := h[2:size]
			switch string(name) {
			case ":message-type":
				f.messageType = v
			case ":event-type":
				f.eventType = v
			case ":exception-type":
				f.exceptionType = v
			case ":error-code":
				f.errorCode = v
			case ":error-message":
				f.errorMessage = v
			}
		}
		h = h[size:]
	}
	return ""
}

// scanFrames calls fn with each frame of b, from its start, until fn
// returns false or b ends. It returns where it stopped and why: nil at
// the end of b (or when fn stopped it), errShort when b ends in the middle
// of a frame, a *frameError with the frame's offset when one is damaged.
func scanFrames(b []byte, fn func(frame) bool) (int, error) {
	off := 0
	for off < len(b) {
		f, n, err := readFrame(b[off:])
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				fe.offset = off
			}
			return off, err
		}
		off += n
		if !fn(f) {
			break
		}
	}
	return off, nil
}

// resync returns where the first whole frame in b starts, or -1: b is the
// tail of a capture the recorder cut, which starts anywhere in a frame.
// A frame is known by its prelude CRC and then its message CRC, which a
// stretch of payload matches by chance about once in 2^64.
func resync(b []byte) int {
	for i := 0; i+minFrame <= len(b); i++ {
		if crc32.ChecksumIEEE(b[i:i+8]) != binary.BigEndian.Uint32(b[i+8:i+12]) {
			continue
		}
		if _, _, err := readFrame(b[i:]); err == nil {
			return i
		}
	}
	return -1
}
