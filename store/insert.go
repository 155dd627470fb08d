package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// A table's rows are inserted many at once, as each database takes them
// fastest (the dialect's insert): SQLite in multi-row INSERTs, PostgreSQL
// in one INSERT of column arrays.

// colType is what PostgreSQL's arrays of a column are.
type colType int8

const (
	colInt colType = iota
	colText
	colBytes
	colFloat
)

// column is a column of an insert.
type column struct {
	name string
	typ  colType
}

// insertSpec says how rows go into a table.
type insertSpec struct {
	table   string
	columns []column
	// pgSelect, when not "", is the SELECT list over the arrays (named
	// as the columns) on PostgreSQL: a value the server makes of them.
	pgSelect string
	// tail follows the rows: ON CONFLICT ...; returning, RETURNING ...
	tail, returning string
}

func (sp *insertSpec) names() string {
	var b strings.Builder
	for i, c := range sp.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name)
	}
	return b.String()
}

// insertMany inserts rows (each a value per column, in order) and hands
// each statement's RETURNING rows to scan.
func (s *Store) insertMany(ctx context.Context, tx *sql.Tx, sp *insertSpec, rows [][]any, scan func(*sql.Rows) error) error {
	if len(rows) == 0 {
		return nil
	}
	if rowsHook != nil {
		rowsHook(`INSERT INTO `+sp.table+` (`+sp.names()+`) VALUES `, rows)
	}
	return s.d.insert(ctx, s, tx, sp, rows, scan)
}

// runInsert executes an insert, with its RETURNING rows to scan when it
// has some.
func runInsert(ctx context.Context, tx *sql.Tx, query, returning string, args []any, scan func(*sql.Rows) error) error {
	if returning == "" {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	}
	rows, err := tx.QueryContext(ctx, query+" "+returning, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// The columns as arrays pgx encodes: plain slices when no value is NULL
// (pgx's fast path), slices of pointers when some are.

func intColumn(rows [][]any, i int) (any, error) {
	vals := make([]int64, len(rows))
	nulls := false
	for r, row := range rows {
		switch x := row[i].(type) {
		case nil:
			nulls = true
		case int64:
			vals[r] = x
		case int32:
			vals[r] = int64(x)
		case int16:
			vals[r] = int64(x)
		case int:
			vals[r] = int64(x)
		default:
			return nil, fmt.Errorf("a %T is not an integer", x)
		}
	}
	if !nulls {
		return vals, nil
	}
	out := make([]*int64, len(rows))
	for r, row := range rows {
		if row[i] != nil {
			out[r] = &vals[r]
		}
	}
	return out, nil
}

func textColumn(rows [][]any, i int) (any, error) {
	vals := make([]string, len(rows))
	nulls := false
	for r, row := range rows {
		switch x := row[i].(type) {
		case nil:
			nulls = true
		case string:
			vals[r] = x
		default:
			return nil, fmt.Errorf("a %T is not text", x)
		}
	}
	if !nulls {
		return vals, nil
	}
	out := make([]*string, len(rows))
	for r, row := range rows {
		if row[i] != nil {
			out[r] = &vals[r]
		}
	}
	return out, nil
}

func bytesColumn(rows [][]any, i int) (any, error) {
	out := make([][]byte, len(rows))
	for r, row := range rows {
		switch x := row[i].(type) {
		case nil:
		case []byte:
			out[r] = x
			if x == nil {
				out[r] = []byte{}
			}
		default:
			return nil, fmt.Errorf("a %T is not bytes", x)
		}
	}
	return out, nil
}

func floatColumn(rows [][]any, i int) (any, error) {
	vals := make([]float64, len(rows))
	nulls := false
	for r, row := range rows {
		switch x := row[i].(type) {
		case nil:
			nulls = true
		case float64:
			vals[r] = x
		default:
			return nil, fmt.Errorf("a %T is not a number", x)
		}
	}
	if !nulls {
		return vals, nil
	}
	out := make([]*float64, len(rows))
	for r, row := range rows {
		if row[i] != nil {
			out[r] = &vals[r]
		}
	}
	return out, nil
}
