package middleware

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		limit := rng.IntN(3 * tailSize)
		size := rng.IntN(4 * tailSize)
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		c := newCapture(limit)
		for rest := data; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), tailSize+100))
			c.write(rest[:n])
			rest = rest[n:]
		}
		head := min(size, limit)
		require.Equal(t, data[:head], c.head)
		assert.Equal(t, size > limit, c.truncated())
		assert.Equal(t, int64(size), c.total)
		if size > limit {
			// The tail holds the last bytes written past the head.
			past := data[limit:]
			want := past[max(0, len(past)-tailSize):]
			require.Equal(t, want, c.tailBytes())
		}
		c.release()
	}
}

func TestReadUpTo(t *testing.T) {
	tests := []struct {
		in       string
		limit    int
		wantMore bool
	}{
		{"", 10, false},
		{"short", 10, false},
		{"exactly10!", 10, false},
		{"eleven byte", 10, true},
		{strings.Repeat("x", 100000), 50000, true},
	}
	for _, tt := range tests {
		got, more, err := readUpTo(iotest.OneByteReader(strings.NewReader(tt.in)), nil, tt.limit, -1)
		require.NoError(t, err)
		assert.Equal(t, tt.wantMore, more, "%d bytes, limit %d", len(tt.in), tt.limit)
		if !more {
			assert.Equal(t, tt.in, string(got))
		} else {
			assert.Equal(t, tt.in[:len(got)], string(got))
		}
	}
	boom := errors.New("boom")
	got, _, err := readUpTo(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), nil, 10, -1)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, "abc", string(got))
}

func TestDecompress(t *testing.T) {
	out, ok := decompress("br", []byte("x"), 10)
	assert.False(t, ok)
	assert.Nil(t, out)
	out, ok = decompress("identity", []byte("plain"), 10)
	assert.True(t, ok)
	assert.Equal(t, "plain", string(out))
	_, ok = decompress("gzip", []byte("not gzip"), 10)
	assert.False(t, ok)
}

func TestTraceparentID(t *testing.T) {
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", traceparentID("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
	assert.Empty(t, traceparentID("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), "upper case is invalid")
	assert.Empty(t, traceparentID("00-4bf92f35-00f067aa0ba902b7-01"))
	assert.Empty(t, traceparentID(""))
}

// allocated returns the bytes f allocates: the least of five runs, since
// the counter is the process's and other tests' goroutines may still be
// allocating beside f.
func allocated(f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// A capture filled to its limit allocates under twice the limit on the
// way (growth by doubling; append's 1.25× for large slices allocated about
// five times), and once when the body's length is known.
func TestCaptureGrowth(t *testing.T) {
	const limit = 1 << 20
	chunk := make([]byte, 4<<10)
	fill := func(size int) func() {
		return func() {
			c := newCapture(limit)
			c.size = size
			for range 2 * limit / len(chunk) { // twice the limit: the tail ring fills too
				c.write(chunk)
			}
		}
	}
	unknown := allocated(fill(0))
	known := allocated(fill(limit))
	t.Logf("allocated for a 2 MiB body: %d KiB with the length unknown, %d KiB known", unknown>>10, known>>10)
	assert.Less(t, unknown, uint64(2*limit+2*tailSize), "length unknown: doubling")
	assert.Less(t, known, uint64(limit+2*tailSize), "length known: one step")

	body := strings.Repeat("x", limit)
	readers := make(chan io.Reader, 5)
	for range 5 {
		readers <- strings.NewReader(body)
	}
	sized := allocated(func() { _, _, _ = readUpTo(<-readers, nil, 2*limit, limit) })
	assert.Less(t, sized, uint64(limit+2*tailSize), "readUpTo with the length known: one step")
}
