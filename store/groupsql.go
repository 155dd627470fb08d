package store

import (
	"fmt"
	"strconv"
	"time"
)

// Aggregates of records are added up in Go (aggregate.go); an aggregate
// the database adds up itself (AggregateScores) groups by these
// expressions, over records r and their tags t (tagJoin).

// groupExpr is the SQL of a dimension over records r (and tags t).
func groupExpr(g GroupBy) (string, bool) {
	switch g {
	case ByHour:
		return "r.ts / 3600000000", true
	case ByDay:
		return "r.ts / 86400000000", true
	case ByUser:
		return "coalesce(r.user_id, '')", true
	case ByTag:
		return "coalesce(t.name, '')", true
	case ByModel:
		return "coalesce(r.model, '')", true
	case ByProvider:
		return "r.provider", true
	case ByMethod:
		return "r.method", true
	case ByErrorType:
		return "coalesce(r.error_type, '')", true
	case ByTrace:
		return "coalesce(r.trace_id, '')", true
	}
	return "", false
}

// tagJoin joins each record r to its tags t (none: one row of NULL),
// through its tagset's name ("3,17": its tags' IDs): a record's tags are
// found from its row, not by reading every record's (record_attrs is
// keyed by tag).
var tagJoin = ` LEFT JOIN names ts ON ts.id = r.tagset LEFT JOIN names t ON t.kind = ` + strconv.Itoa(int(kindTag)) +
	` AND (',' || ts.name || ',') LIKE ('%,' || CAST(t.id AS TEXT) || ',%')`

// keyString renders a group's value of one dimension as scanned.
func (s *Store) keyString(dim GroupBy, v any, t *time.Time) string {
	switch dim {
	case ByHour, ByDay:
		n := toInt(v)
		unit := int64(time.Hour / time.Microsecond)
		if dim == ByDay {
			unit *= 24
		}
		*t = time.UnixMicro(n * unit).UTC()
		return t.Format(time.RFC3339)
	}
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func toInt(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case []byte:
		n, _ := strconv.ParseInt(string(v), 10, 64)
		return n
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// rawKey appends the scanned key values, each ended by a zero byte.
func rawKey(dst []byte, vals []any) []byte {
	for _, v := range vals {
		switch v := (*(v.(*any))).(type) {
		case int64:
			dst = strconv.AppendInt(dst, v, 10)
		case string:
			dst = append(dst, v...)
		case []byte:
			dst = append(dst, v...)
		case float64:
			dst = strconv.AppendFloat(dst, v, 'g', -1, 64)
		case nil:
		default:
			dst = fmt.Append(dst, v)
		}
		dst = append(dst, 0)
	}
	return dst
}
