package replay

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseWait(t *testing.T) {
	tests := []struct {
		header, value string
		want          time.Duration
		ok            bool
	}{
		{headerRetryAfter, "20", 20 * time.Second, true},
		{headerRetryAfter, " 1.5 ", 1500 * time.Millisecond, true},
		{headerRetryAfterMs, "250", 250 * time.Millisecond, true},
		{headerRetryAfter, "0", 0, true},
		{headerRetryAfter, "-1", 0, false},
		{headerRetryAfter, "NaN", 0, false},
		{headerRetryAfter, "", 0, false},
		{headerRetryAfter, "soon", 0, false},
		{headerRetryAfterMs, "Wed, 21 Oct 2099 07:28:00 GMT", 0, false}, // a date is seconds' header only
		{headerRetryAfter, "1e30", time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		got, ok := parseWait(tt.header, tt.value)
		assert.Equal(t, tt.ok, ok, "%s: %q", tt.header, tt.value)
		assert.Equal(t, tt.want, got, "%s: %q", tt.header, tt.value)
	}
	d, ok := parseWait(headerRetryAfter, "Wed, 21 Oct 2099 07:28:00 GMT")
	assert.True(t, ok)
	assert.Greater(t, d, 24*time.Hour)
	d, ok = parseWait(headerRetryAfter, "Wed, 21 Oct 2015 07:28:00 GMT")
	assert.True(t, ok, "a date past: no wait")
	assert.Less(t, d, time.Duration(0))
}

// FuzzShortenWait: whatever the headers say, once shortened they ask for
// no more than the limit, and headers that asked for less are kept.
func FuzzShortenWait(f *testing.F) {
	f.Add("20", "20000", int64(0))
	f.Add("Wed, 21 Oct 2099 07:28:00 GMT", "", int64(time.Second))
	f.Add("1.5", "1e3", int64(1500*time.Millisecond))
	f.Add("Inf", "-5", int64(0))
	f.Add("1e400", "NaN", int64(time.Hour))
	f.Fuzz(func(t *testing.T, retryAfter, retryAfterMs string, limit int64) {
		if limit < 0 {
			limit = -limit
		}
		if limit < 0 { // math.MinInt64
			return
		}
		h := http.Header{}
		h.Set(headerRetryAfter, retryAfter)
		h.Set(headerRetryAfterMs, retryAfterMs)
		before := h.Clone()
		shortenWait(h, time.Duration(limit))
		if waitsLonger(h, time.Duration(limit)) {
			t.Fatalf("still longer than %v: %v (was %v)", time.Duration(limit), h, before)
		}
		for _, k := range []string{headerRetryAfter, headerRetryAfterMs} {
			if d, ok := parseWait(k, before.Get(k)); (!ok || d <= time.Duration(limit)) && h.Get(k) != before.Get(k) {
				t.Fatalf("%s changed though it asked for no more than the limit: %q to %q", k, before.Get(k), h.Get(k))
			}
		}
	})
}
