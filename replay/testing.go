package replay

import "testing"

// ForTest opens the cassette at path for a test, as [New] does, and
// closes it when the test ends. It stops the test at once when the
// cassette cannot be opened (it does not exist in ModeReplay, a line is
// bad), and fails it when Close reports an error (an interaction refused
// for holding a secret, a write that failed).
//
// A recording (ModeRecord, ModeOnce) made by a test that failed is not
// written: a cassette should hold a conversation that passed. Fix the test
// and record again.
//
// Unlike New, ForTest replays the waits of recorded rate limits as 0
// ([WithRetryAfter](0)), so a test of a retry does not sleep for the
// Retry-After the provider sent when it was recorded. The wait is no part
// of what such a test checks (the SDK still reads the header and still
// retries; the recorder still folds the attempts), and every run of the
// suite would pay for it. Give WithRetryAfter (a negative value keeps
// them) or [WithRecordedSpeed] to replay them as recorded.
func ForTest(tb testing.TB, path string, opts ...Option) *Cassette {
	tb.Helper()
	c, err := New(path, append([]Option{shortWaitsInTests}, opts...)...)
	if err != nil {
		tb.Fatal(err)
		return nil // a testing.TB whose Fatal returns
	}
	tb.Cleanup(func() {
		recording := c.mode == ModeRecord || c.mode == ModeOnce
		if recording && tb.Failed() {
			c.mu.Lock()
			c.dirty = false
			c.discard = true
			c.mu.Unlock()
			tb.Logf("replay: %s was not written: the test failed", path)
		}
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
		if recording && !tb.Failed() {
			tb.Logf("replay: %s (%s): %d interactions", path, c.mode, len(c.Interactions()))
		}
	})
	return c
}

// shortWaitsInTests is ForTest's default: waits replayed as 0.
func shortWaitsInTests(c *config) { c.retryAfter, c.retryAfterByDefault = 0, true }
