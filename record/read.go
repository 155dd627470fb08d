package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the longest line a [Reader] accepts unless told
// otherwise.
const DefaultMaxLineBytes = 64 << 20

// ErrLineTooLong is wrapped in the [LineError] of a line longer than the
// reader's limit.
var ErrLineTooLong = errors.New("line too long")

// LineError reports a line that is not a record. Reading can go on past it.
type LineError struct {
	Line int   // 1-based line number
	Err  error // why the line was refused
}

func (e *LineError) Error() string { return fmt.Sprintf("record: line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Reader reads records from JSON Lines one at a time, in constant memory
// (one line at a time), for files too big to load whole.
//
// Blank lines are skipped. A malformed line yields a *[LineError] and the
// next Read continues with the following line. A last line that has no
// newline and is not valid JSON is what a crash in mid-write leaves: it is
// skipped, and [Reader.Torn] reports it.
type Reader struct {
	br      *bufio.Reader
	long    []byte // accumulates lines longer than the bufio buffer
	line    int
	torn    bool
	err     error // sticky: io.EOF or a read error
	MaxLine int   // longest accepted line in bytes; 0 means DefaultMaxLineBytes
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Read returns the next record. At the end of the input it returns io.EOF;
// for a malformed line, a *[LineError]; for a failing reader, that error,
// which is returned again by every later call.
func (r *Reader) Read() (Record, error) {
	for {
		raw, last, err := r.next()
		if err != nil {
			return Record{}, err
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		var rec Record
		// Not json.Unmarshal: it would first validate the whole line in a
		// separate pass.
		if err := rec.decode(raw); err != nil {
			if last && !ValidJSON(raw) {
				r.torn = true
				r.err = io.EOF
				return Record{}, io.EOF
			}
			return Record{}, &LineError{Line: r.line, Err: err}
		}
		return rec, nil
	}
}

// next returns the next line without its newline, and whether it is the
// final line with no newline after it.
func (r *Reader) next() (line []byte, last bool, err error) {
	if r.err != nil {
		return nil, false, r.err
	}
	limit := r.MaxLine
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	r.line++
	r.long = r.long[:0]
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			if tooLong {
				return nil, false, &LineError{Line: r.line, Err: fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, limit)}
			}
			if len(r.long) == 0 {
				return chunk[:len(chunk)-1], false, nil
			}
			r.long = append(r.long, chunk[:len(chunk)-1]...)
			return r.long, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if !tooLong && len(r.long)+len(chunk) > limit {
				tooLong = true
				r.long = r.long[:0]
			}
			if !tooLong {
				r.long = append(r.long, chunk...)
			}
		default: // io.EOF or a read error
			r.err = err
			if tooLong {
				return nil, false, &LineError{Line: r.line, Err: fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, limit)}
			}
			r.long = append(r.long, chunk...)
			if len(r.long) == 0 || err != io.EOF {
				if err == io.EOF {
					r.line--
				}
				return nil, false, err
			}
			return r.long, true, nil
		}
	}
}

// Line returns the number of the line last read, counting from 1.
func (r *Reader) Line() int { return r.line }

// Torn reports whether the input ended in a torn line that was skipped.
func (r *Reader) Torn() bool { return r.torn }

// maxLineErrors caps how many malformed lines ReadJSONL describes.
const maxLineErrors = 20

// ReadJSONL reads every record from r. Malformed lines are skipped and
// reported together in the returned error (each a *[LineError], matched
// with errors.As), while every valid record is still returned; a torn last
// line is skipped without error. A failing reader stops reading and its
// error is returned with the records read so far.
func ReadJSONL(r io.Reader) ([]Record, error) {
	rd := NewReader(r)
	var (
		out  []Record
		errs []error
		bad  int
	)
	for {
		rec, err := rd.Read()
		if err == nil {
			out = append(out, rec)
			continue
		}
		if err == io.EOF {
			break
		}
		var le *LineError
		if !errors.As(err, &le) {
			errs = append(errs, err)
			break
		}
		bad++
		if bad <= maxLineErrors {
			errs = append(errs, err)
		}
	}
	if bad > maxLineErrors {
		errs = append(errs, fmt.Errorf("record: %d more malformed lines", bad-maxLineErrors))
	}
	return out, errors.Join(errs...)
}
