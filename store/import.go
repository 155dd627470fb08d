package store

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/llmhistory/llmhistory/record"
)

// ImportResult counts what [Store.Import] did.
type ImportResult struct {
	Records    int  // records read
	Written    int  // records new to the store
	Duplicates int  // records it held already, by call ID
	BadLines   int  // lines that were not records, skipped
	Torn       bool // the last line was cut short (a crash mid-write), skipped
}

// importBatch is how many records Import writes per transaction.
const importBatch = 1000

// Import writes the records of a JSONL history (as the JSONL sink and the
// spill file write it) into the store, exactly once by call ID, so that
// importing a file twice, or a spill file the store partly got after all,
// duplicates nothing. A line that is not a record is handed to badLine
// (when not nil) and skipped. Import stops at the first write that fails
// and returns what it did until then.
func (s *Store) Import(ctx context.Context, r io.Reader, badLine func(line int, err error)) (ImportResult, error) {
	var res ImportResult
	rd := record.NewReader(r)
	batch := make([]record.Record, 0, importBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		w, err := s.Write(ctx, batch)
		res.Written += w.Written
		res.Duplicates += w.Duplicates
		batch = batch[:0]
		return err
	}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		var le *record.LineError
		if errors.As(err, &le) {
			res.BadLines++
			if badLine != nil {
				badLine(le.Line, le.Err)
			}
			continue
		}
		if err != nil {
			return res, fmt.Errorf("store: import: %w", err)
		}
		res.Records++
		batch = append(batch, rec)
		if len(batch) == importBatch {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	res.Torn = rd.Torn()
	return res, flush()
}
