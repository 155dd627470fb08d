package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The names a record's columns take (its user, tags, model, provider,
// method, status and error type) are kept once each, in the table names,
// as they are written: the values a filter offers are read from it
// ([Store.Facets]) rather than found by reading every record, and the
// rollups key their rows by the names' small IDs. A record's set of tags
// is a name too (kind tagset: the sorted IDs of its tags), and a record
// names its tagset.

// kind is what a name is the name of.
type kind int16

const (
	kindUser kind = iota + 1
	kindTag
	kindModel
	kindProvider
	kindMethod
	kindStatus
	kindErrorType
	kindTagset // a set of tags: their IDs, sorted, comma-separated
)

// nameKey is a name of a kind.
type nameKey struct {
	kind kind
	name string
}

// dict is a store's copy of the names table. IDs are never reused
// (AUTOINCREMENT on SQLite, a sequence on PostgreSQL) and names are never
// deleted, so what a dict holds stays true; it learns what other writers
// added by reading the rows past the greatest ID it has, and reads by ID
// those that committed out of order (lookup).
type dict struct {
	mu      sync.RWMutex
	ids     map[nameKey]int32
	names   map[int32]nameKey
	tagsets map[int32][]int32 // the tags of each tagset
	last    int32
	epoch   string // the names epoch it was filled in (delete.go)
}

func newDict() *dict {
	return &dict{ids: map[nameKey]int32{}, names: map[int32]nameKey{}, tagsets: map[int32][]int32{}}
}

// reset forgets everything: after a write that failed, whose names may
// have been given IDs that its rollback took back.
func (d *dict) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.ids)
	clear(d.names)
	clear(d.tagsets)
	d.last = 0
}

// id returns the ID of a name; false when the dict does not know it.
func (d *dict) id(k kind, name string) (int32, bool) {
	if name == "" {
		return 0, true
	}
	d.mu.RLock()
	id, ok := d.ids[nameKey{k, name}]
	d.mu.RUnlock()
	return id, ok
}

// name returns the name of an ID; "" for 0 or an ID it does not know.
func (d *dict) name(id int32) string {
	if id == 0 {
		return ""
	}
	d.mu.RLock()
	n := d.names[id]
	d.mu.RUnlock()
	return n.name
}

// tagsOf returns the tag IDs of a tagset.
func (d *dict) tagsOf(tagset int32) []int32 {
	if tagset == 0 {
		return nil
	}
	d.mu.RLock()
	t := d.tagsets[tagset]
	d.mu.RUnlock()
	return t
}

// tagsetKey is the name of a set of tag IDs: sorted, without repeats,
// comma-separated.
func tagsetKey(ids []int32) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	return b.String()
}

func parseTagset(key string) ([]int32, error) {
	var ids []int32
	for f := range strings.SplitSeq(key, ",") {
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("store: a damaged tagset %q", key)
		}
		ids = append(ids, int32(n))
	}
	return ids, nil
}

// learn adds names read from the table.
func (d *dict) learn(ids []int32, keys []nameKey) error {
	sets := make(map[int32][]int32)
	for i, k := range keys {
		if k.kind == kindTagset {
			tags, err := parseTagset(k.name)
			if err != nil {
				return err
			}
			sets[ids[i]] = tags
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, k := range keys {
		d.ids[k], d.names[ids[i]] = ids[i], k
		d.last = max(d.last, ids[i])
	}
	for id, tags := range sets {
		d.tagsets[id] = tags
	}
	return nil
}

// read learns the names a query returns (id, kind, name).
func (d *dict) read(ctx context.Context, db querier, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ids []int32
	var keys []nameKey
	for rows.Next() {
		var id int32
		var k nameKey
		if err := rows.Scan(&id, &k.kind, &k.name); err != nil {
			return err
		}
		ids, keys = append(ids, id), append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return d.learn(ids, keys)
}

// refresh reads the names added since the dict last looked.
func (d *dict) refresh(ctx context.Context, s *Store, db querier) error {
	d.mu.RLock()
	last := d.last
	d.mu.RUnlock()
	return d.read(ctx, db, s.q(`SELECT id, kind, name FROM names WHERE id > $1 ORDER BY id`), last)
}

// lookup makes sure the dict holds the names of the given IDs (tagsets
// among them), reading those it lacks: added by writers whose IDs
// committed out of order, which refresh, reading past the greatest ID
// held, misses.
func (d *dict) lookup(ctx context.Context, s *Store, db querier, ids []int32) error {
	var missing []any
	d.mu.RLock()
	for _, id := range ids {
		if _, ok := d.names[id]; !ok && id > 0 {
			missing = append(missing, id)
		}
	}
	d.mu.RUnlock()
	if len(missing) == 0 {
		return nil
	}
	if err := d.refresh(ctx, s, db); err != nil {
		return err
	}
	return chunked(missing, 500, func(part []any) error {
		return d.read(ctx, db, s.q(`SELECT id, kind, name FROM names WHERE id IN (`+placeholders(1, len(part))+`)`), part...)
	})
}

var namesInsert = &insertSpec{table: "names", columns: []column{{"kind", colInt}, {"name", colText}}, tail: ` ON CONFLICT (kind, name) DO NOTHING`}

// ensure gives every name of want an ID, inserting those the table does
// not hold, in tx. Another writer may insert the same name meanwhile:
// the insert skips it, and the read after it finds its ID.
func (d *dict) ensure(ctx context.Context, s *Store, tx *sql.Tx, want map[nameKey]bool) error {
	var missing []nameKey
	for k := range want {
		if _, ok := d.id(k.kind, k.name); !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// Sorted, so that writers inserting the same names lock them in the
	// same order.
	slices.SortFunc(missing, func(a, b nameKey) int {
		if a.kind != b.kind {
			return int(a.kind - b.kind)
		}
		return strings.Compare(a.name, b.name)
	})
	rows := make([][]any, len(missing))
	for i, k := range missing {
		rows[i] = []any{int64(k.kind), k.name}
	}
	if err := s.insertMany(ctx, tx, namesInsert, rows, nil); err != nil {
		return err
	}
	if err := d.refresh(ctx, s, tx); err != nil {
		return err
	}
	for _, k := range missing {
		if _, ok := d.id(k.kind, k.name); ok {
			continue
		}
		// Inserted by a writer whose IDs committed out of order: read it
		// by name.
		if err := d.read(ctx, tx, s.q(`SELECT id, kind, name FROM names WHERE kind = $1 AND name = $2`), int(k.kind), k.name); err != nil {
			return err
		}
		if _, ok := d.id(k.kind, k.name); !ok {
			return fmt.Errorf("store: name %q neither found nor inserted", k.name)
		}
	}
	return nil
}

// Facets are the values a [Filter] can take: every user, tag, model,
// provider, method and error type the store's records have had, each
// sorted. They are kept as records are written, so asking costs a read
// of a small table, not of the records. Values whose records retention
// deleted stay.
type Facets struct {
	Users, Tags, Models, Providers, Methods, ErrorTypes []string
}

// Facets returns the values a filter can take.
func (s *Store) Facets(ctx context.Context) (Facets, error) {
	// Read whole, not from the dict: a writer's IDs may commit out of
	// order, so a dict that reads past its greatest ID can miss one.
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT kind, name FROM names WHERE kind <> $1`), int(kindTagset))
	if err != nil {
		return Facets{}, s.readErr(err)
	}
	defer rows.Close()
	var f Facets
	for rows.Next() {
		var k nameKey
		if err := rows.Scan(&k.kind, &k.name); err != nil {
			return Facets{}, s.readErr(err)
		}
		var into *[]string
		switch k.kind {
		case kindUser:
			into = &f.Users
		case kindTag:
			into = &f.Tags
		case kindModel:
			into = &f.Models
		case kindProvider:
			into = &f.Providers
		case kindMethod:
			into = &f.Methods
		case kindErrorType:
			into = &f.ErrorTypes
		default:
			continue
		}
		*into = append(*into, k.name)
	}
	if err := rows.Err(); err != nil {
		return Facets{}, s.readErr(err)
	}
	for _, l := range []*[]string{&f.Users, &f.Tags, &f.Models, &f.Providers, &f.Methods, &f.ErrorTypes} {
		slices.Sort(*l)
	}
	return f, nil
}
