package cost

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Table is a named set of model prices. Its name is what [record.Cost]
// carries as Table, so that every priced record says which prices were
// used.
//
// A Table is never changed once built ([Table.With] and [Table.LoadJSON]
// return new tables), so it is safe for concurrent use. A nil *Table is
// the default table, [Default]; the zero Table has no prices and prices
// nothing.
type Table struct {
	name   string
	prices map[string]entry // by canonical model name
}

type entry struct {
	name  string // the canonical model name, the map's key
	price Price
}

var builtinTable = sync.OnceValue(func() *Table {
	t := &Table{name: defaultName, prices: make(map[string]entry, len(defaultEntries))}
	for _, e := range defaultEntries {
		t.prices[e.name] = e
	}
	return t
})

// Builtin returns the table generated into the package from LiteLLM's
// prices, named "litellm-" and the date of the LiteLLM file it was
// generated from (see the package documentation). It is built on first
// use and shared.
func Builtin() *Table { return builtinTable() }

var (
	defaultOnce sync.Once
	defaultT    *Table
)

func loadDefault() {
	t, err := FromEnv()
	if err != nil {
		slog.Error("cost: "+EnvPrices+" names a price file that cannot be used; pricing with the built-in table instead",
			"error", err, "table", Builtin().Name())
	}
	if t == nil {
		t = Builtin()
	}
	defaultT = t
}

// Default returns the table a program prices with when it names none: the
// one the LLMHISTORY_PRICES environment variable names ([FromEnv]), or
// else [Builtin]. It is read on first use and shared: set the variable
// before the program prices its first call. A variable that names a file
// that cannot be used is logged once with [slog.Default], at level Error,
// and the built-in table is used; call [FromEnv] to fail on it instead.
func Default() *Table {
	defaultOnce.Do(loadDefault)
	return defaultT
}

func (t *Table) orDefault() *Table {
	if t == nil {
		return Default()
	}
	return t
}

// NewTable returns a table named name with the given prices, keyed by
// model name. Keys are taken in the form [Table.Lookup] resolves names to:
// case is ignored and Vertex AI's '@' before a version reads as '-'; an
// empty key is ignored, and of keys that differ only in those ways the
// one that sorts last wins.
func NewTable(name string, prices map[string]Price) *Table {
	t := &Table{name: name, prices: make(map[string]entry, len(prices))}
	t.set(prices)
	return t
}

// With returns a new table named name: t's prices, with prices added and
// replacing t's for the same models (keyed as for [NewTable]). An empty
// name is t's name followed by "+custom", so that a record priced by the
// new table does not claim t's name. t is not changed.
func (t *Table) With(name string, prices map[string]Price) *Table {
	t = t.orDefault()
	if name == "" {
		name = t.name + "+custom"
	}
	n := &Table{name: name, prices: make(map[string]entry, len(t.prices)+len(prices))}
	for k, e := range t.prices {
		n.prices[k] = e
	}
	n.set(prices)
	return n
}

func (t *Table) set(prices map[string]Price) {
	keys := make([]string, 0, len(prices))
	for k := range prices {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := canonicalKey(k)
		if c == "" {
			continue
		}
		t.prices[c] = entry{name: c, price: prices[k]}
	}
}

// canonicalKey is the form of every key in a table: trimmed, lower case,
// '@' as '-'. resolve applies the same steps to a name before any lookup,
// so a key is always found by its own name.
func canonicalKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.ReplaceAll(k, "@", "-")
}

// Name returns the table's name, e.g. "litellm-2026-07-24".
func (t *Table) Name() string { return t.orDefault().name }

// Date returns the date of the table's prices, as its name carries it
// ([DateOf]): for LiteLLM's tables, the day their file was taken. It
// reports false for a name without a date: the table's age is unknown.
func (t *Table) Date() (time.Time, bool) { return DateOf(t.Name()) }

// DateOf returns the date a table's name carries: its last YYYY-MM-DD
// that is a real date, standing apart from other digits
// ("litellm-2026-07-24", "litellm-2026-07-24+custom",
// "acme-2026-11-20-negotiated"), as midnight UTC. It reports false for a
// name without one ("acme-2026-11"). A report uses it to tell how old the
// prices of the records it reads are, from the table names they carry.
func DateOf(table string) (time.Time, bool) {
	const n = len("2006-01-02")
	for i := len(table) - n; i >= 0; i-- {
		s := table[i : i+n]
		if s[4] != '-' || s[7] != '-' || !digits(s[:4]) || !digits(s[5:7]) || !digits(s[8:]) {
			continue
		}
		if (i > 0 && isDigit(table[i-1])) || (i+n < len(table) && isDigit(table[i+n])) {
			continue // part of a longer number
		}
		if d, err := time.Parse(time.DateOnly, s); err == nil {
			return d, true
		}
	}
	return time.Time{}, false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Len returns the number of models the table prices.
func (t *Table) Len() int { return len(t.orDefault().prices) }

// Lookup resolves a model name as a provider returned it to one of the
// table's entries (see the package documentation for the rules) and
// returns its price and the entry's name. It reports false when no entry
// is the model: a name is never matched to another model by similarity.
func (t *Table) Lookup(model string) (Price, string, bool) {
	e, ok := t.orDefault().find(model)
	return e.price, e.name, ok
}

// Models returns the names of the table's entries, sorted.
func (t *Table) Models() []string {
	t = t.orDefault()
	names := make([]string, 0, len(t.prices))
	for k := range t.prices {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
