package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Dialect is the SQL a backend speaks. The store holds the SQL of each;
// a backend only opens connections and says what its errors mean.
type Dialect int

// The dialects the store knows.
const (
	SQLite Dialect = iota + 1
	PostgreSQL
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case PostgreSQL:
		return "postgres"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// A Backend opens the databases of one URL scheme. Backends register
// themselves in an init function ([Register]), as database/sql drivers do;
// a program links only the backends it imports.
type Backend struct {
	// Dialect is the SQL the store speaks to the database.
	Dialect Dialect
	// Open connects to the database the URL names. write is the pool the
	// store writes through; read, the one it reads through (the same
	// pool will do). A SQLite backend gives write one connection, so
	// that the process's writes queue in Go rather than on the file
	// lock, and opens the file with WAL, a busy timeout and foreign keys
	// on. ReadOnly asks for a pool that cannot write.
	Open func(ctx context.Context, url string, o OpenOptions) (write, read *sql.DB, err error)
	// Fault says what a failed write means (the database is down, locked,
	// full or read-only); nil means [FaultOther] for every error.
	Fault func(error) Fault
	// SpillPath is where records go while the database cannot take them,
	// for a URL of this backend; nil puts them in the working directory.
	SpillPath func(url string) string
	// Redact returns the URL as it may be shown (no password).
	Redact func(url string) string
}

// OpenOptions is what [Backend.Open] is asked for.
type OpenOptions struct {
	ReadOnly    bool
	BusyTimeout int // milliseconds a SQLite write waits for the file lock
}

var (
	backendsMu sync.RWMutex
	backends   = map[string]Backend{}
)

// Register makes a backend available to [Open] for URLs of the given
// scheme ("sqlite", "postgres"). It panics if the scheme is registered
// twice or the backend has no Open, as sql.Register does.
func Register(scheme string, b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if b.Open == nil || b.Dialect == 0 {
		panic("store: Register of scheme " + scheme + " without Open or Dialect")
	}
	if _, dup := backends[scheme]; dup {
		panic("store: Register called twice for scheme " + scheme)
	}
	backends[scheme] = b
}

// Schemes lists the URL schemes of the registered backends, sorted.
func Schemes() []string {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	var s []string
	for k := range backends {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// IsURL reports whether s names a store rather than a file: it begins
// with "sqlite:", "postgres://" or "postgresql://". Those three are known
// whether or not their backends are linked, so that a command can tell
// a URL from a file name before it has anything to open.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "sqlite:") || strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// backendFor finds the backend of url.
func backendFor(url string) (scheme string, b Backend, err error) {
	scheme, _, ok := strings.Cut(url, ":")
	if !ok || scheme == "" {
		return "", Backend{}, fmt.Errorf("%w: %q is not a store URL (sqlite:FILE or postgres://...)", ErrUnknownScheme, url)
	}
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	backendsMu.RLock()
	b, ok = backends[scheme]
	backendsMu.RUnlock()
	if !ok {
		pkg := scheme
		return scheme, Backend{}, fmt.Errorf("%w %q: import github.com/llmhistory/llmhistory/store/%s", ErrUnknownScheme, scheme, pkg)
	}
	return scheme, b, nil
}
