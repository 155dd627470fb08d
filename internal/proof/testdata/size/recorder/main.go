// A program that records its HTTP calls and does nothing else: what a
// user who only records compiles.
package main

import (
	"fmt"
	"os"

	"github.com/llmhistory/llmhistory/middleware"
)

func main() {
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	if len(os.Args) > 1 {
		resp, err := client.Get(os.Args[1])
		fmt.Println(resp, err)
	}
}
