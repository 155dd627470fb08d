package redact

import (
	"slices"

	"github.com/llmhistory/llmhistory/record"
)

// output redacts the answer, a message of the message model: the text of
// its parts (text, reasoning, refusal, a tool's result), a tool call's
// arguments, a reference's URI and the data of a part of another kind.
// A message that holds nothing to redact is left as it is; one that does
// is copied first, since the history may share it.
func (r *Redactor) output(rec *record.Record) {
	m := rec.Output
	if m == nil {
		return
	}
	var parts []record.Part // m's, copied once something changes
	for i := range m.Parts {
		p := m.Parts[i]
		content, uri := r.String(p.Content), r.String(p.URI)
		args, data := r.Bytes(p.Arguments), r.Bytes(p.Data)
		if content == p.Content && uri == p.URI && len(args) == len(p.Arguments) && string(args) == string(p.Arguments) &&
			len(data) == len(p.Data) && string(data) == string(p.Data) {
			continue
		}
		if parts == nil {
			parts = slices.Clone(m.Parts)
		}
		parts[i].Content, parts[i].URI, parts[i].Arguments, parts[i].Data = content, uri, args, data
	}
	if parts != nil {
		rec.Output = &record.Message{Role: m.Role, Parts: parts}
	}
}
