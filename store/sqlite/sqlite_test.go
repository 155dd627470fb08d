package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/store/sqlite"
	"github.com/llmhistory/llmhistory/store/storetest"
)

func harness() storetest.Harness {
	return storetest.Harness{
		NewURL: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		Exec: func(t *testing.T, url, query string) {
			db, err := sql.Open("sqlite", sqlite.DSN(sqlite.Path(url), 5000, false))
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(query)
			require.NoError(t, err)
		},
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, harness()) }
