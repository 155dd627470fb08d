package record

import "unicode/utf8"

// Bounds of a record's attribution (UserID, Tags, Metadata): what is over
// them is dropped, and the field named in Truncated.
const (
	MaxTags             = 64  // tags kept, the first given
	MaxMetadata         = 64  // metadata keys kept, the first given
	MaxAttributionBytes = 256 // bytes of a user id, a tag, or a metadata key or value
)

// ClipAttribution cuts s to at most MaxAttributionBytes, at a rune
// boundary, and reports whether it cut.
func ClipAttribution(s string) (string, bool) {
	if len(s) <= MaxAttributionBytes {
		return s, false
	}
	n := MaxAttributionBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
