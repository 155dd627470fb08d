package postgres_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/postgres"
)

// A store in PostgreSQL, opened by a pgx URL once the package is
// imported (the schema is made or migrated on the first open), and a
// week's spend by model. It needs a server, so it only compiles here;
// store/postgres's tests run the store's conformance suite against a
// real one.
func Example() {
	ctx := context.Background()
	s, err := store.Open(ctx, "postgres://llm@localhost/history?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	groups, err := s.Aggregate(ctx, store.AggregateQuery{
		Filter: store.Filter{Since: time.Now().Add(-7 * 24 * time.Hour)},
		By:     []store.GroupBy{store.ByModel},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range groups {
		fmt.Printf("%s: %d calls, $%.2f\n", g.Key[0], g.Calls, g.CostUSD)
	}
}
