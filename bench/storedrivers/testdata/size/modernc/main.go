// Command modernc records one call into a SQLite store through the modernc
// driver, for the size of its binary.
package main

import (
	"context"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

func main() {
	s, err := store.Open(context.Background(), "sqlite:history.db")
	if err != nil {
		panic(err)
	}
	rec := middleware.NewRecorder(middleware.WithSink(s))
	defer rec.Close()
	_, _ = rec.Client(nil).Get("http://localhost:1/")
}
