// Package ncruces registers github.com/ncruces/go-sqlite3 (with its FTS5
// extension) as a store backend under the scheme "ncruces:FILE", with the
// store's SQLite dialect: the driver store/sqlite did not choose, for
// measuring the two on the same work.
package ncruces

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"

	"github.com/llmhistory/llmhistory/store"
)

// The ncruces driver, registered under its own scheme with the store's
// SQLite dialect: "ncruces:FILE".
func init() {
	store.Register("ncruces", store.Backend{Dialect: store.SQLite, Open: openNcruces})
}

func ncrucesDSN(file string, busyMS int, readOnly bool) string {
	var q []string
	if readOnly {
		q = append(q, "mode=ro", "_pragma=query_only(1)")
	} else {
		q = append(q, "_pragma=auto_vacuum(incremental)", "_pragma=journal_mode(wal)", "_txlock=immediate", "_pragma=cache_size(-65536)")
	}
	q = append(q, fmt.Sprintf("_pragma=busy_timeout(%d)", busyMS), "_pragma=synchronous(normal)", "_pragma=foreign_keys(1)")
	return "file:" + file + "?" + strings.Join(q, "&")
}

func openNcruces(ctx context.Context, url string, o store.OpenOptions) (w, r *sql.DB, err error) {
	file := strings.TrimPrefix(url, "ncruces:")
	withFTS := func(c *sqlite3.Conn) error { return fts5.Register(c) }
	w, err = driver.Open(ncrucesDSN(file, o.BusyTimeout, o.ReadOnly), withFTS)
	if err != nil {
		return nil, nil, err
	}
	if o.ReadOnly {
		return w, w, w.PingContext(ctx)
	}
	w.SetMaxOpenConns(1)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, nil, err
	}
	r, err = driver.Open("file:"+file+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=query_only(1)", o.BusyTimeout), withFTS)
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	r.SetMaxOpenConns(4)
	return w, r, nil
}
