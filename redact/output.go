package redact

import "github.com/llmhistory/llmhistory/record"

// output redacts what the response said, as the record keeps it.
func (r *Redactor) output(rec *record.Record) {
	rec.Output = r.String(rec.Output)
	rec.Reasoning = r.String(rec.Reasoning)
	cloned := false
	for i := range rec.ToolCalls {
		tc := &rec.ToolCalls[i]
		if args := r.String(tc.Arguments); args != tc.Arguments {
			if !cloned {
				rec.ToolCalls, cloned = append([]record.ToolCall(nil), rec.ToolCalls...), true
				tc = &rec.ToolCalls[i]
			}
			tc.Arguments = args
		}
	}
}
