package store

import (
	"context"
	"time"
)

// Description is what a store holds, in figures.
type Description struct {
	URL            string // without a password
	Dialect        Dialect
	SchemaVersion  int
	Records        int64
	Messages       int64 // distinct messages (elements of args)
	Traces         int64
	Oldest, Newest time.Time // timestamps of the oldest and newest records
	Bytes          int64     // see [Store.Size]
	SpillPath      string    // "" when opened read-only
}

// Describe counts what the store holds. It reads every record's row
// once: for a command or a test, not a hot path.
func (s *Store) Describe(ctx context.Context) (Description, error) {
	d := Description{URL: s.url, Dialect: s.dialect, SpillPath: s.SpillPath()}
	var err error
	if d.SchemaVersion, err = s.schemaVersion(ctx, s.r); err != nil {
		return d, err
	}
	var oldest, newest *int64
	err = s.r.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT trace_id), min(ts), max(ts) FROM records`).Scan(&d.Records, &d.Traces, &oldest, &newest)
	if err == nil {
		err = s.r.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&d.Messages)
	}
	if err != nil {
		return d, s.readErr(err)
	}
	if oldest != nil {
		d.Oldest, d.Newest = time.UnixMicro(*oldest).UTC(), time.UnixMicro(*newest).UTC()
	}
	d.Bytes, err = s.Size(ctx)
	return d, err
}
