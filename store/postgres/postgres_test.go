package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	_ "github.com/llmhistory/llmhistory/store/postgres"
	"github.com/llmhistory/llmhistory/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func harness() storetest.Harness {
	return storetest.Harness{
		NewURL: func(t *testing.T) string { return pgtest.Shared(t).NewDatabase(t) },
		Exec: func(t *testing.T, url, query string) {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			require.NoError(t, err)
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, query)
			require.NoError(t, err)
		},
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, harness()) }
