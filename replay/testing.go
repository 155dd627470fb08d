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
func ForTest(tb testing.TB, path string, opts ...Option) *Cassette {
	tb.Helper()
	c, err := New(path, opts...)
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
