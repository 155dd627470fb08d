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
// is kept once too, as a tagset (the sorted IDs of its tags), and a
// record names its tagset.

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
)

// nameKey is a name of a kind.
type nameKey struct {
	kind kind
	name string
}

// dict is a store's copy of the names and tagsets tables. IDs are never
// reused (AUTOINCREMENT on SQLite, a sequence on PostgreSQL) and names
// are never deleted, so what a dict holds stays true; it learns what
// other writers added by reading the rows past the greatest ID it has.
type dict struct {
	mu       sync.RWMutex
	ids      map[nameKey]int32
	names    map[int32]nameKey
	lastName int32

	tagsetIDs  map[string]int32 // canonical form (tagsetKey) → ID
	tagsets    map[int32][]int32
	lastTagset int32
}

func newDict() *dict {
	return &dict{ids: map[nameKey]int32{}, names: map[int32]nameKey{}, tagsetIDs: map[string]int32{}, tagsets: map[int32][]int32{}}
}

// reset forgets everything: after a write that failed, whose names may
// have been given IDs that its rollback took back.
func (d *dict) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.ids)
	clear(d.names)
	clear(d.tagsetIDs)
	clear(d.tagsets)
	d.lastName, d.lastTagset = 0, 0
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

// tagsetKey is the canonical form of a set of tag IDs: sorted, without
// repeats, comma-separated.
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

// refresh reads the names and tagsets added since the dict last looked.
func (d *dict) refresh(ctx context.Context, s *Store, db querier) error {
	d.mu.RLock()
	lastName, lastTagset := d.lastName, d.lastTagset
	d.mu.RUnlock()
	rows, err := db.QueryContext(ctx, s.q(`SELECT id, kind, name FROM names WHERE id > $1 ORDER BY id`), lastName)
	if err != nil {
		return err
	}
	var got []struct {
		id int32
		k  nameKey
	}
	for rows.Next() {
		var id int32
		var k nameKey
		if err := rows.Scan(&id, &k.kind, &k.name); err != nil {
			rows.Close()
			return err
		}
		got = append(got, struct {
			id int32
			k  nameKey
		}{id, k})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.QueryContext(ctx, s.q(`SELECT id, tags FROM tagsets WHERE id > $1 ORDER BY id`), lastTagset)
	if err != nil {
		return err
	}
	type ts struct {
		id   int32
		key  string
		tags []int32
	}
	var sets []ts
	for rows.Next() {
		var t ts
		if err := rows.Scan(&t.id, &t.key); err != nil {
			rows.Close()
			return err
		}
		if t.tags, err = parseTagset(t.key); err != nil {
			rows.Close()
			return err
		}
		sets = append(sets, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range got {
		d.ids[g.k], d.names[g.id] = g.id, g.k
		d.lastName = max(d.lastName, g.id)
	}
	for _, t := range sets {
		d.tagsetIDs[t.key], d.tagsets[t.id] = t.id, t.tags
		d.lastTagset = max(d.lastTagset, t.id)
	}
	return nil
}

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
		rows[i] = []any{int(k.kind), k.name}
	}
	if err := s.insertMany(ctx, tx, namesInsert, rows, nil); err != nil {
		return err
	}
	if err := d.refresh(ctx, s, tx); err != nil {
		return err
	}
	for _, k := range missing {
		if _, ok := d.id(k.kind, k.name); !ok {
			// Inserted by a writer whose transaction this one cannot see
			// yet (PostgreSQL, READ COMMITTED: it committed after this
			// statement began). Read it by name.
			var id int32
			if err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM names WHERE kind = $1 AND name = $2`), int(k.kind), k.name).Scan(&id); err != nil {
				return fmt.Errorf("store: name %q neither found nor inserted: %w", k.name, err)
			}
			d.mu.Lock()
			d.ids[k], d.names[id] = id, k
			d.mu.Unlock()
		}
	}
	return nil
}

// ensureTagset returns the ID of the tagset of tags (name IDs), inserting
// it when the table does not hold it.
func (d *dict) ensureTagsets(ctx context.Context, s *Store, tx *sql.Tx, want map[string]bool) error {
	var missing []string
	d.mu.RLock()
	for k := range want {
		if _, ok := d.tagsetIDs[k]; !ok {
			missing = append(missing, k)
		}
	}
	d.mu.RUnlock()
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	rows := make([][]any, len(missing))
	for i, k := range missing {
		rows[i] = []any{k}
	}
	if err := s.insertMany(ctx, tx, tagsetsInsert, rows, nil); err != nil {
		return err
	}
	if err := d.refresh(ctx, s, tx); err != nil {
		return err
	}
	for _, k := range missing {
		d.mu.RLock()
		_, ok := d.tagsetIDs[k]
		d.mu.RUnlock()
		if ok {
			continue
		}
		var id int32
		if err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM tagsets WHERE tags = $1`), k).Scan(&id); err != nil {
			return fmt.Errorf("store: tagset %q neither found nor inserted: %w", k, err)
		}
		tags, err := parseTagset(k)
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.tagsetIDs[k], d.tagsets[id] = id, tags
		d.mu.Unlock()
	}
	return nil
}

var (
	namesInsert   = &insertSpec{table: "names", columns: []column{{"kind", colInt}, {"name", colText}}, tail: ` ON CONFLICT (kind, name) DO NOTHING`}
	tagsetsInsert = &insertSpec{table: "tagsets", columns: []column{{"tags", colText}}, tail: ` ON CONFLICT (tags) DO NOTHING`}
)

// tagsetID returns the ID of a tagset the dict holds.
func (d *dict) tagsetID(key string) (int32, bool) {
	if key == "" {
		return 0, true
	}
	d.mu.RLock()
	id, ok := d.tagsetIDs[key]
	d.mu.RUnlock()
	return id, ok
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
	rows, err := s.r.QueryContext(ctx, `SELECT kind, name FROM names`)
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

// lookup makes sure the dict holds the names and tagsets of the given
// IDs, reading those it lacks (added by writers whose IDs committed out
// of order, which refresh, reading past the greatest ID held, misses).
func (d *dict) lookup(ctx context.Context, s *Store, db querier, nameIDs, tagsetIDs []int32) error {
	var names, sets []any
	d.mu.RLock()
	for _, id := range nameIDs {
		if _, ok := d.names[id]; !ok && id != 0 {
			names = append(names, id)
		}
	}
	for _, id := range tagsetIDs {
		if _, ok := d.tagsets[id]; !ok && id != 0 {
			sets = append(sets, id)
		}
	}
	d.mu.RUnlock()
	if len(names)+len(sets) == 0 {
		return nil
	}
	if err := d.refresh(ctx, s, db); err != nil {
		return err
	}
	err := chunked(names, 500, func(part []any) error {
		rows, err := db.QueryContext(ctx, s.q(`SELECT id, kind, name FROM names WHERE id IN (`+placeholders(1, len(part))+`)`), part...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int32
			var k nameKey
			if err := rows.Scan(&id, &k.kind, &k.name); err != nil {
				return err
			}
			d.mu.Lock()
			d.ids[k], d.names[id] = id, k
			d.mu.Unlock()
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	return chunked(sets, 500, func(part []any) error {
		rows, err := db.QueryContext(ctx, s.q(`SELECT id, tags FROM tagsets WHERE id IN (`+placeholders(1, len(part))+`)`), part...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int32
			var key string
			if err := rows.Scan(&id, &key); err != nil {
				return err
			}
			tags, err := parseTagset(key)
			if err != nil {
				return err
			}
			d.mu.Lock()
			d.tagsetIDs[key], d.tagsets[id] = id, tags
			d.mu.Unlock()
		}
		return rows.Err()
	})
}
