package store_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/llmhistory/llmhistory/store"
)

// A user asks for their history to go: Delete takes their records and
// all that holds something of them, and says what it did and what it
// checked. The messages both users' conversations hold (the system
// prompt, and two answers alike) stay: user-7's records use them too.
func ExampleStore_Delete() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "history.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(ctx, history()); err != nil {
		log.Fatal(err)
	}

	rc, err := s.Delete(ctx, store.Filter{UserID: "user-42"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d records, %d conversation, %d messages deleted; %d kept, shared\n", rc.Records, rc.Traces, rc.Messages, rc.MessagesShared)
	fmt.Printf("%d checks, all zero: %v\n", len(rc.Checks), rc.Clean())
	facets, _ := s.Facets(ctx)
	fmt.Println("users left:", facets.Users)

	_, err = s.Delete(ctx, store.Filter{})
	fmt.Println(err == store.ErrEmptyFilter)
	// Output:
	// 3 records, 1 conversation, 3 messages deleted; 3 kept, shared
	// 11 checks, all zero: true
	// users left: [user-7]
	// true
}
