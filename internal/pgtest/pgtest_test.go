package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/llmhistory/llmhistory/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A shared server gives each test a database of its own, and a server of
// one's own stops and starts again on its port.
func TestServer(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if v == "postgres" {
		t.Fatalf("current_database() = %q, want the test's own", v)
	}

	own := pgtest.Start(t, pgtest.Options{})
	if err := own.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, own.URL("postgres")); err == nil {
		t.Fatal("connected to a stopped server")
	}
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	c2, err := pgx.Connect(ctx, own.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	c2.Close(ctx)
}
