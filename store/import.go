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
const importBatch = 4096

// Import writes the records of a JSONL history (as the JSONL sink and the
// spill file write it) into the store, exactly once by call ID, so that
// importing a file twice, or a spill file the store partly got after all,
// duplicates nothing. A line that is not a record is handed to badLine
// (when not nil) and skipped. Import stops at the first write that fails
// and returns what it did until then.
func (s *Store) Import(ctx context.Context, r io.Reader, badLine func(line int, err error)) (ImportResult, error) {
	var res ImportResult
	if s.opts.ReadOnly {
		return res, ErrReadOnly
	}
	// Reading, decoding and readying the records (checking, hashing,
	// encoding) run ahead of the writing, a chunk at a time: the
	// database's work and ours overlap.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan chunk, 1)
	var readErr error
	var torn bool
	counts := make(chan [2]int, 1) // records read, bad lines
	go func() {
		defer close(chunks)
		rd := record.NewReader(r)
		// A conversation's records share the elements of their Args, as
		// the file does, rather than each hold them all: the store keeps
		// each element once anyway.
		rd.SplitArgs = true
		read, bad := 0, 0
		defer func() { counts <- [2]int{read, bad} }()
		batch := make([]record.Record, 0, importBatch)
		args := make([][][]byte, 0, importBatch)
		send := func() bool {
			if len(batch) == 0 {
				return true
			}
			c := prepareChunk(batch, args)
			batch = make([]record.Record, 0, importBatch)
			args = make([][][]byte, 0, importBatch)
			select {
			case chunks <- c:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			rec, err := rd.Read()
			if err == io.EOF {
				break
			}
			var le *record.LineError
			if errors.As(err, &le) {
				bad++
				if badLine != nil {
					badLine(le.Line, le.Err)
				}
				continue
			}
			if err != nil {
				readErr = fmt.Errorf("store: import: %w", err)
				return
			}
			read++
			batch = append(batch, rec)
			args = append(args, rd.Elements())
			if len(batch) == importBatch && !send() {
				return
			}
		}
		torn = rd.Torn()
		send()
	}()
	var werr error
	for c := range chunks {
		if werr != nil {
			continue // drained, so that the reader ends
		}
		w, err := s.writePrepared(ctx, c)
		res.Written += w.Written
		res.Duplicates += w.Duplicates
		if err != nil {
			werr = err
			cancel()
		}
	}
	n := <-counts
	res.Records, res.BadLines, res.Torn = n[0], n[1], torn
	if werr != nil {
		return res, werr
	}
	return res, readErr
}
