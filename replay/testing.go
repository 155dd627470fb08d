package replay

import "testing"

// ForTest opens the cassette at path for a test, as [New] does, and
// closes it when the test ends. It stops the test at once when the
// cassette cannot be opened (it does not exist in ModeReplay, a line is
// bad), and fails it when Close reports an error (an interaction refused
// for holding a secret, a write that failed).
func ForTest(tb testing.TB, path string, opts ...Option) *Cassette {
	tb.Helper()
	c, err := New(path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
		if c.mode == ModeRecord || c.mode == ModeOnce {
			tb.Logf("replay: %s (%s): %d interactions", path, c.mode, len(c.Interactions()))
		}
	})
	return c
}
