// Package sqlitedsn turns a store's "sqlite:" URL into the file it names
// and the data source name modernc.org/sqlite opens it with: the settings
// store/sqlite gives its connections, for the tests and benchmarks that
// open the same file through the driver directly (a raw baseline, a
// schema taken back to an older version).
package sqlitedsn

import (
	"fmt"
	"strings"
)

// Path returns the file a "sqlite:" URL names: what follows "sqlite:",
// less the "//" of the URL form "sqlite:///abs/path", up to a "?".
func Path(url string) string {
	p, _ := Split(url)
	return p
}

// Split cuts a sqlite: URL into its file and its driver parameters (what
// follows "?": "_pragma=cache_size(-200000)&_pragma=...", passed on to
// modernc.org/sqlite after the store's own).
func Split(url string) (file, params string) {
	p := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	file, params, _ = strings.Cut(p, "?")
	return file, params
}

// DSN is the modernc.org/sqlite data source name for file: WAL, the busy
// timeout (ms), foreign keys, and BEGIN IMMEDIATE for transactions, so
// that a writer takes the lock when it begins rather than failing at its
// first write. readOnly opens a connection that cannot write.
func DSN(file string, busyTimeoutMS int, readOnly bool) string {
	var q []string
	if readOnly {
		q = append(q, "mode=ro", "_pragma=query_only(1)")
	} else {
		// A writer's cache holds the indexes' hot pages across batches.
		// secure_delete: every byte a write frees (a deleted row, the old
		// copy of a row moved or rewritten, a freed page) is overwritten
		// with zeros then, so that an erasure (Store.Delete) leaves no
		// stale copy of the text it deletes anywhere in the file.
		q = append(q, "_auto_vacuum=INCREMENTAL", "_pragma=journal_mode(WAL)", "_txlock=immediate", "_pragma=cache_size(-65536)", "_pragma=secure_delete(1)")
	}
	q = append(q, fmt.Sprintf("_busy_timeout=%d", busyTimeoutMS), "_pragma=synchronous(NORMAL)", "_pragma=foreign_keys(1)")
	return "file:" + Escape(file) + "?" + strings.Join(q, "&")
}

// Escape makes a path safe in a file: URI.
func Escape(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}
