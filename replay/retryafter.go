package replay

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers by which a provider tells a client how long to wait before
// it retries, as the SDKs read them: retry-after-ms (OpenAI, Anthropic; in
// milliseconds) first, then Retry-After (in seconds, or an HTTP date).
const (
	headerRetryAfterMs = "Retry-After-Ms"
	headerRetryAfter   = "Retry-After"
)

// waitsLonger says a header of h asks for a wait longer than limit.
func waitsLonger(h http.Header, limit time.Duration) bool {
	for _, k := range []string{headerRetryAfterMs, headerRetryAfter} {
		if d, ok := parseWait(k, h.Get(k)); ok && d > limit {
			return true
		}
	}
	return false
}

// shortenWait rewrites the headers of h that ask for a wait longer than
// limit to ask for limit.
func shortenWait(h http.Header, limit time.Duration) {
	if d, ok := parseWait(headerRetryAfterMs, h.Get(headerRetryAfterMs)); ok && d > limit {
		h.Set(headerRetryAfterMs, strconv.FormatInt(limit.Milliseconds(), 10))
	}
	if d, ok := parseWait(headerRetryAfter, h.Get(headerRetryAfter)); ok && d > limit {
		h.Set(headerRetryAfter, strconv.FormatInt(int64(limit/time.Second), 10))
	}
}

// parseWait reads the wait of one header's value; a date is read against
// now, when the answer is replayed. Values a client would not read are
// not waits.
func parseWait(header, v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	unit := time.Second
	if header == headerRetryAfterMs {
		unit = time.Millisecond
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) || f < 0 {
			return 0, false
		}
		if f*float64(unit) >= math.MaxInt64 {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(f * float64(unit)), true
	}
	if header == headerRetryAfter {
		if t, err := http.ParseTime(v); err == nil {
			return time.Until(t), true
		}
	}
	return 0, false
}
