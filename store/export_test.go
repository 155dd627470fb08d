package store

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmhistory/llmhistory/record"
)

// MigrateTo migrates s with the released migrations and one more, version
// SchemaVersion+1, made of sql: as a future llmhistory would.
func MigrateTo(ctx context.Context, s *Store, sqlite, postgres string) error {
	next := migration{version: SchemaVersion + 1, sqlite: []string{sqlite}, postgres: []string{postgres}}
	return s.migrate(ctx, append(append([]migration(nil), migrations...), next))
}

// SetWalkBound sets how many matches a term needs for a newest-first page
// to walk rather than gather (0: the store's own choice).
func SetWalkBound(s *Store, n int64) { s.walkBound = n }

// CaptureRows hands fn every row the store inserts, with the head of its
// INSERT, until undo is called.
func CaptureRows(fn func(head string, rows [][]any)) (undo func()) {
	rowsHook = fn
	return func() { rowsHook = nil }
}

// CountNormalize counts the records the store normalizes, until undo.
func CountNormalize() (count func() int, undo func()) {
	var n atomic.Int64
	normalize = func(r *record.Record) { n.Add(1); r.Normalize() }
	return func() int { return int(n.Load()) }, func() { normalize = (*record.Record).Normalize }
}

// Estimate is the database planner's estimate of the rows query returns.
func Estimate(s *Store, query string, args ...any) (float64, bool) {
	return s.d.estimate(context.Background(), s.r, s.q(query), args...)
}

// ExecForTest runs query on the store's writer.
func ExecForTest(tb testing.TB, s *Store, query string) {
	tb.Helper()
	if _, err := s.w.ExecContext(context.Background(), query); err != nil {
		tb.Fatal(err)
	}
}

// ImportBatch is how many records Import writes per transaction.
const ImportBatch = importBatch

// EncodeDoc and DecodeDoc are the codec of a record's stored document.
func EncodeDoc(doc []byte) []byte             { return encodeDoc(doc) }
func DecodeDoc(stored []byte) ([]byte, error) { return decodeDoc(stored) }
func DocDict() []byte                         { return []byte(docDict1) }

// RollupColumns are the columns an aggregate reads of a rollup row.
const RollupColumns = rollupColumns

// SQLitePlan is SQLite's EXPLAIN QUERY PLAN of query, its steps' details
// one a line.
func SQLitePlan(tb testing.TB, s *Store, query string, args ...any) string {
	tb.Helper()
	rows, err := s.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+s.q(query), args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			tb.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n")
}
