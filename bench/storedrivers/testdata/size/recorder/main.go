// Command recorder records one call and nothing else, for the size of its
// binary.
package main

import "github.com/llmhistory/llmhistory/middleware"

func main() {
	rec := middleware.NewRecorder()
	defer rec.Close()
	_, _ = rec.Client(nil).Get("http://localhost:1/")
}
