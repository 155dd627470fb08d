package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
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
// Reading is strict, as [DecodeLine] is: a line is a record only when it is
// a JSON object with every required field of the format (those of [Fields]
// marked Required, "version" among them) and a version this package knows.
// Blank lines are skipped. Any other line yields a *[LineError] that says
// why, and the next Read continues with the following line. A last line
// that has no newline, begins as a record does ('{') and is not valid
// JSON is what a crash in mid-write leaves: it is skipped, and
// [Reader.Torn] reports it. Any other last line (50 MB of text without a
// newline, say) is a line that is not a record, like any other.
//
// Records written with [JSONLOptions.ArgsPrefix] hold only what their Args
// add to an earlier record's: the Reader puts their Args back together, so
// each record comes out whole. For that it keeps the latest record of each
// of the last 4096 traces (64 MiB of Args at most), as the writer does. A
// record whose earlier record is missing or damaged comes out marked, with
// only the Args it adds (see [ArgsPrefix]); [Reader.Unresolved] counts them.
type Reader struct {
	br      *bufio.Reader
	long    []byte // accumulates lines longer than the bufio buffer
	line    int
	torn    bool
	err     error    // sticky: io.EOF or a read error
	seen    presence // reused line to line: one allocation less per record
	MaxLine int      // longest accepted line in bytes; 0 means DefaultMaxLineBytes

	// SkipArgs gives every record with Args nil, for a program that does
	// not look at them (the report). Records written with args_prefix are
	// checked against the records they name as ever (Unresolved counts
	// the ones that do not match, and they come out marked), but their
	// Args are not put back together: a conversation's whole Args, which
	// each record would hold, take the square of its length to build.
	// Set it before the first Read.
	SkipArgs bool
	// SplitArgs gives every record with Args nil, and the elements its
	// Args hold by [Reader.Elements] instead, for a program that takes
	// Args apart anyway (the store keeps each element once). Records
	// written with args_prefix are checked as with SkipArgs, and the
	// elements a record shares with the record it continues are that
	// record's, not copies: reading costs the file's length, where
	// whole Args would cost the square of a conversation's. Set it
	// before the first Read.
	SplitArgs bool

	prefixes   *prefixResolver
	unresolved int
	firstBad   int // line of the first record left unresolved
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Read returns the next record. At the end of the input it returns io.EOF;
// for a line that is not a record, a *[LineError]; for a failing reader,
// that error, which is returned again by every later call.
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
		if r.prefixes != nil {
			r.prefixes.elems = nil // the last record's, until this one's
		}
		r.seen = newPresence()
		rec, err := decodeLine(raw, &r.seen)
		if err != nil {
			if last && raw[0] == '{' && !ValidJSON(raw) {
				r.torn = true
				r.err = io.EOF
				return Record{}, io.EOF
			}
			return Record{}, &LineError{Line: r.line, Err: err}
		}
		if r.prefixes == nil {
			r.prefixes = newPrefixResolver()
			r.prefixes.skipArgs = r.SkipArgs
			r.prefixes.splitArgs = r.SplitArgs
		}
		if !r.prefixes.resolve(&rec) {
			if r.unresolved++; r.unresolved == 1 {
				r.firstBad = r.line
			}
		}
		return rec, nil
	}
}

// Elements returns, with [Reader.SplitArgs] set, the elements of the Args
// of the record the last Read returned, in order: each a JSON value as
// [Record.AppendJSON] writes it, a view into bytes the Reader does not
// change. What they are is what the record's Args would have held whole
// (only what it adds, when its earlier record was missing). Without
// SplitArgs it returns nil.
func (r *Reader) Elements() [][]byte {
	if r.prefixes == nil {
		return nil
	}
	return r.prefixes.elems
}

// Unresolved returns how many records read so far named an earlier record
// for the start of their Args that was missing or did not match, and the
// line of the first. Each came out marked (see [ArgsPrefix]).
func (r *Reader) Unresolved() (records, firstLine int) { return r.unresolved, r.firstBad }

// MissingFieldsError is the reason a JSON object is not a record: it lacks
// required fields of the format.
type MissingFieldsError struct {
	Fields []string // JSON names, nested ones as "outcome_summary.status"
}

func (e *MissingFieldsError) Error() string {
	if len(e.Fields) == 1 {
		return "not a record: no " + e.Fields[0] + " field"
	}
	return "not a record: no " + strings.Join(e.Fields, ", ") + " fields"
}

// versionError is a record of a version this package does not read.
type versionError struct{ v int }

func (e versionError) Error() string {
	if e.v < 1 {
		return fmt.Sprintf("version %d is not a format version", e.v)
	}
	return fmt.Sprintf("format version %d is newer than this reader's (%d)", e.v, Version)
}

func (e versionError) Unwrap() error {
	if e.v > Version {
		return ErrUnsupportedVersion
	}
	return nil
}

// DecodeLine decodes one line of JSON Lines as a [Reader] does, strictly:
// the line must hold one JSON object with every required field of the
// format present and not null (see [Fields]; nested objects' required
// fields too, and "version"), and a version from 1 to [Version]. The error
// says why a line is not a record: invalid JSON and where, a JSON value
// that is not an object, the fields it lacks (a *[MissingFieldsError]), a
// field of the wrong type, or a newer version (matching
// [ErrUnsupportedVersion]). Unknown fields are ignored.
//
// [Record.UnmarshalJSON] stays lenient, as encoding/json callers expect: it
// reads whatever fields an object has.
func DecodeLine(line []byte) (Record, error) {
	seen := newPresence()
	return decodeLine(line, &seen)
}

func decodeLine(line []byte, seen *presence) (Record, error) {
	var r Record
	if err := decodeRecordSeen(line, &r, seen); err != nil {
		return Record{}, lineReason(line, err)
	}
	// A newer version may have other required fields: its version is the
	// first thing wrong with it.
	if r.Version > Version {
		return Record{}, versionError{r.Version}
	}
	if missing := seen.missing(); len(missing) > 0 {
		return Record{}, &MissingFieldsError{Fields: missing}
	}
	if r.Version < 1 {
		return Record{}, versionError{r.Version}
	}
	r.Normalize()
	return r, nil
}

// lineReason turns a decoding failure into what is wrong with the line as
// a whole: a syntax error anywhere in it comes first, then a value that is
// not an object, and only then the decoder's own complaint.
func lineReason(line []byte, err error) error {
	s := scanner{b: line}
	s.ws()
	if serr := s.skipValue(); serr != nil {
		// "invalid literal" says less than the word that is not one.
		if se, ok := serr.(*syntaxError); ok && se.Msg == "invalid literal" {
			end := se.Offset
			for end < len(line) && end-se.Offset < 20 && !bytes.ContainsRune([]byte(" \t,:]}\"{["), rune(line[end])) {
				end++
			}
			se.Msg = fmt.Sprintf("unexpected %q", line[se.Offset:end])
		}
		return serr
	}
	s.ws()
	if s.i != len(line) {
		return s.fail("more after the first JSON value")
	}
	switch c := bytes.TrimLeft(line, " \t\r\n")[0]; c {
	case '{':
		return err
	case '[':
		return errors.New("not a record: a JSON array, not an object")
	case '"':
		return errors.New("not a record: a JSON string, not an object")
	case 'n':
		return errors.New("not a record: null")
	case 't', 'f':
		return errors.New("not a record: a JSON bool, not an object")
	}
	return errors.New("not a record: a JSON number, not an object")
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

// ErrNoRecords is in the error of [ReadJSONL] when the input has lines
// but not one of them is a record: most likely not a history file at all.
var ErrNoRecords = errors.New("record: no line of the input is a record")

// ReadJSONL reads every record from r, as a [Reader] does. Lines that are
// not records are skipped and reported together in the returned error
// (each a *[LineError], matched with errors.As; the first 20 described,
// the rest counted), with [ErrNoRecords] too when no line was a record,
// while every valid record is still returned; a torn last line is skipped
// without error. Records whose Args could not be put back together are
// returned marked, and counted in the error with [ErrUnresolvedPrefix]. A
// failing reader stops reading and its error is returned with the records
// read so far.
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
		errs = append(errs, fmt.Errorf("record: %d more lines that are not records", bad-maxLineErrors))
	}
	if len(out) == 0 && bad > 0 {
		errs = append(errs, ErrNoRecords)
	}
	if n, line := rd.Unresolved(); n > 0 {
		errs = append(errs, fmt.Errorf("%w: %d records, the first on line %d, hold only the args they add, marked truncated", ErrUnresolvedPrefix, n, line))
	}
	return out, errors.Join(errs...)
}
