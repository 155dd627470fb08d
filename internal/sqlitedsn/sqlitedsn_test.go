package sqlitedsn_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
)

func TestPath(t *testing.T) {
	for url, want := range map[string]string{
		"sqlite:history.db":                       "history.db",
		"sqlite:///var/lib/h.db":                  "/var/lib/h.db",
		"sqlite:h.db?_pragma=cache_size(-200000)": "h.db",
	} {
		assert.Equal(t, want, sqlitedsn.Path(url), url)
	}
	_, params := sqlitedsn.Split("sqlite:h.db?_pragma=cache_size(-200000)")
	assert.Equal(t, "_pragma=cache_size(-200000)", params)
}

func TestDSNEscapesThePath(t *testing.T) {
	dsn := sqlitedsn.DSN("/tmp/a?b#c%d.db", 5000, true)
	assert.Contains(t, dsn, "file:/tmp/a%3fb%23c%25d.db?mode=ro")
	assert.Contains(t, dsn, "_busy_timeout=5000")
}

func Example() {
	fmt.Println(sqlitedsn.DSN(sqlitedsn.Path("sqlite:history.db"), 5000, true))
	// Output:
	// file:history.db?mode=ro&_pragma=query_only(1)&_busy_timeout=5000&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)
}
