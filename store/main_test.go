package store_test

import (
	"testing"

	"github.com/llmhistory/llmhistory/internal/pgtest"
)

// The shared PostgreSQL server of the import and migration tests is
// stopped when they end.
func TestMain(m *testing.M) { pgtest.Main(m) }
