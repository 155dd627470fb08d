package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Source is one JSONL input of [Build]: a name for messages (a file name,
// "<stdin>") and the reader.
type Source struct {
	Name string
	R    io.Reader
}

// progressEvery is how many records pass between looks at the clock and
// the context.
const progressEvery = 4096

// Build reads the JSON Lines of every source, in order, through a
// [record.Reader] and returns the report of all their records. A garbled
// line is counted (see [Builder.AddBadLine]) and reading goes on; a torn
// last line is counted too. Build stops at the first source that fails to
// read, or when ctx is done, and returns the error with what it read.
func Build(ctx context.Context, opts Options, sources ...Source) (*Report, error) {
	b := NewBuilder(opts)
	err := b.ReadFrom(ctx, sources...)
	return b.Report(), err
}

// ReadFrom adds the records of every source to b, as [Build] does.
func (b *Builder) ReadFrom(ctx context.Context, sources ...Source) error {
	start := time.Now()
	var read int64
	last := start
	for _, src := range sources {
		if err := b.readOne(ctx, src, &read, start, &last); err != nil {
			return err
		}
	}
	if b.opts.Progress != nil {
		b.opts.Progress(Progress{Records: b.records, Bytes: read, Elapsed: time.Since(start)})
	}
	return nil
}

// readOne adds the records of one source and notes what was read from it
// for the report's provenance, even when reading fails half way.
func (b *Builder) readOne(ctx context.Context, src Source, read *int64, start time.Time, last *time.Time) error {
	cr := &countingReader{r: src.R, n: read}
	rd := record.NewReader(cr)
	rd.SkipArgs = true // no figure reads them; a long conversation's would cost its square
	in := Input{Name: keyOf(src.Name)}
	defer func() {
		in.Lines, in.Torn = int64(rd.Line()), rd.Torn()
		n, first := rd.Unresolved()
		in.UnresolvedArgs, in.FirstUnresolvedLine = int64(n), int64(first)
		b.inputs = append(b.inputs, in)
	}()
	for i := 0; ; i++ {
		if i%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if b.opts.Progress != nil {
				if now := time.Now(); now.Sub(*last) >= 100*time.Millisecond {
					*last = now
					b.opts.Progress(Progress{Records: b.records, Bytes: *read, Elapsed: now.Sub(start)})
				}
			}
		}
		rec, err := rd.Read()
		if err == nil {
			b.Add(rec)
			in.Records++
			continue
		}
		if err == io.EOF {
			break
		}
		var le *record.LineError
		if errors.As(err, &le) {
			in.BadLines++
			b.AddBadLine(src.Name, le.Line, le.Err)
			if b.opts.OnBadLine != nil {
				b.opts.OnBadLine(src.Name, le.Line, le.Err)
			}
			continue
		}
		return fmt.Errorf("%s: %w", src.Name, err)
	}
	if rd.Torn() {
		b.AddTorn(src.Name)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
