package middleware

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"io"
	"strings"
	"sync"
)

// tailSize is how much of the end of a long response is kept beside its
// head: enough for a stream's last events (usage, finish reason).
const tailSize = 64 << 10

// capture keeps the head of a body up to a limit, then a ring of its last
// tailSize bytes. It never holds more than limit+tailSize bytes.
type capture struct {
	pooled *[]byte // head's pool entry, to put back without allocating
	limit  int
	size   int // the body's length when known (Content-Length), else 0
	head   []byte
	tail   []byte // ring, allocated once the head is full
	tpos   int    // next write position in tail
	twrap  bool   // the ring has wrapped
	total  int64  // bytes seen
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// maxPooled keeps huge buffers out of the pool.
const maxPooled = 256 << 10

func newCapture(limit int) capture {
	p := bufPool.Get().(*[]byte)
	return capture{limit: limit, pooled: p, head: (*p)[:0]}
}

func (c *capture) write(p []byte) {
	c.total += int64(len(p))
	if room := c.limit - len(c.head); room > 0 {
		n := min(room, len(p))
		if len(c.head)+n > cap(c.head) {
			c.head = grow(c.head, max(c.size, len(c.head)+n), c.limit)
		}
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	if c.tail == nil {
		c.tail = make([]byte, tailSize)
	}
	if len(p) >= tailSize {
		copy(c.tail, p[len(p)-tailSize:])
		c.tpos, c.twrap = 0, true
		return
	}
	n := copy(c.tail[c.tpos:], p)
	if n < len(p) {
		copy(c.tail, p[n:])
		c.twrap = true
	}
	c.tpos = (c.tpos + len(p)) % tailSize
	if c.tpos == 0 {
		c.twrap = true
	}
}

func (c *capture) truncated() bool { return c.total > int64(len(c.head)) }

// tailBytes returns the ring's content in order.
func (c *capture) tailBytes() []byte {
	if c.tail == nil {
		return nil
	}
	if !c.twrap {
		return c.tail[:c.tpos]
	}
	out := make([]byte, 0, tailSize)
	out = append(out, c.tail[c.tpos:]...)
	return append(out, c.tail[:c.tpos]...)
}

// release returns the head buffer to the pool. The capture is unusable
// afterwards.
func (c *capture) release() {
	if c.pooled != nil && c.head != nil && cap(c.head) <= maxPooled {
		*c.pooled = c.head[:0] // head may have grown past the pooled buffer
		bufPool.Put(c.pooled)
	}
	c.pooled, c.head, c.tail = nil, nil, nil
}

// decompress returns the body as the provider sent it before encoding,
// when the caller asked for the encoded bytes (its own Accept-Encoding).
// At most limit bytes are produced; a cut or broken stream yields what
// could be read.
func decompress(encoding string, b []byte, limit int) ([]byte, bool) {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return b, true
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, false
		}
		r = zr
	case "deflate":
		r = flate.NewReader(bytes.NewReader(b))
	default:
		return nil, false // br, zstd: not in the standard library
	}
	out, _ := io.ReadAll(io.LimitReader(r, int64(limit)))
	return out, true
}
