package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/store"
)

// Whatever a flag gives, ParseRetention returns a retention or an error,
// and what it returns reads back the same from its Spec.
func FuzzParseRetention(f *testing.F) {
	for _, s := range []string{"all=1y", "support=30d, user:u-42=7d", "tag:a=12h,bytes=100", "x=-1d", "=", "all=1y,all=2y", "user:=3d", "tag:x=9999999999y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := store.ParseRetention(text)
		if err != nil {
			return
		}
		back, err := store.ParseRetention(r.Spec())
		require.NoError(t, err, "spec %q of %q", r.Spec(), text)
		require.Equal(t, r, back)
		_ = r.String()
	})
}
