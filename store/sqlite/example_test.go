package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// A store in a SQLite file: opened by its URL once the package is
// imported, written as a recorder's sink writes it, and read back.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "history")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "history.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	err = s.AppendBatch(ctx, []record.Record{{
		CallID:     "call-1",
		Timestamp:  "2026-11-23T10:00:00.000000Z",
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       []byte(`[{"role":"user","content":"Where is my parcel?"}]`),
		Outcome:    record.Success("chat.completion"),
		TraceID:    "order-17",
		UserID:     "user-42",
		Model:      "gpt-4o-mini",
	}})
	if err != nil {
		log.Fatal(err)
	}
	r, err := s.Get(ctx, "call-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.UserID, r.Model, string(r.Args))
	// Output:
	// user-42 gpt-4o-mini [{"role":"user","content":"Where is my parcel?"}]
}
