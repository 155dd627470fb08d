package middleware

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"
	"unsafe"

	"github.com/llmhistory/llmhistory/record"
)

// crockford is the alphabet of ULIDs: no I, L, O or U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var idGen struct {
	mu     sync.Mutex
	lastMS int64
	hi     uint16 // the 80 random bits, as 16 + 64
	lo     uint64
	rng    *rand.ChaCha8
}

func init() {
	var seed [32]byte
	_, _ = crand.Read(seed[:])
	idGen.rng = rand.NewChaCha8(seed)
}

// NewCallID returns a new call ID: a ULID, 26 characters that sort in the
// order the IDs were made (48 bits of milliseconds, then 80 random bits,
// incremented within one millisecond).
func NewCallID() string { return newCallID(time.Now()) }

func newCallID(t time.Time) string {
	b := newULID(t)
	return encodeULID(b)
}

// newIdentity returns a new call ID and the timestamp of t, made in one
// allocation: a call needs both, and each would cost its own.
func newIdentity(t time.Time) (callID, timestamp string) {
	buf := make([]byte, 26, 26+32)
	appendULID(buf[:0], newULID(t))
	buf = record.AppendTime(buf, t)
	s := unsafe.String(&buf[0], len(buf))
	return s[:26], s[26:]
}

func newULID(t time.Time) [16]byte {
	ms := t.UnixMilli()
	g := &idGen
	g.mu.Lock()
	if ms <= g.lastMS {
		// Same millisecond (or a clock that stepped back): count up, so IDs
		// still sort in the order they were made.
		ms = g.lastMS
		g.lo++
		if g.lo == 0 {
			g.hi++
		}
	} else {
		g.lastMS = ms
		g.lo = g.rng.Uint64()
		g.hi = uint16(g.rng.Uint64())
	}
	hi, lo := g.hi, g.lo
	g.mu.Unlock()

	var b [16]byte
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	binary.BigEndian.PutUint16(b[6:8], hi)
	binary.BigEndian.PutUint64(b[8:16], lo)
	return b
}

// encodeULID writes 128 bits as 26 base-32 digits, most significant first.
func encodeULID(b [16]byte) string {
	var out [26]byte
	appendULID(out[:0], b)
	return string(out[:])
}

// appendULID writes the 26 digits of b into dst[:26] (dst's capacity).
func appendULID(dst []byte, b [16]byte) {
	dst = dst[:26]
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	for i := 25; i >= 0; i-- {
		dst[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
}
