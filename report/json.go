package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report as one JSON object indented by two spaces,
// with the keys documented in the package doc.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
