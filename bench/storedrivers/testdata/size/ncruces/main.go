// Command ncruces records one call into a SQLite store through the ncruces
// driver, for the size of its binary.
package main

import (
	"context"

	_ "github.com/llmhistory/llmhistory/bench/storedrivers/ncruces"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/store"
)

func main() {
	s, err := store.Open(context.Background(), "ncruces:history.db")
	if err != nil {
		panic(err)
	}
	rec := middleware.NewRecorder(middleware.WithSink(s))
	defer rec.Close()
	_, _ = rec.Client(nil).Get("http://localhost:1/")
}
