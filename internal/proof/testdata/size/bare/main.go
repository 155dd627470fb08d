// A program that makes an HTTP call with net/http alone: the baseline the
// recorder-only program's size is measured against.
package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	client := &http.Client{}
	if len(os.Args) > 1 {
		resp, err := client.Get(os.Args[1])
		fmt.Println(resp, err)
	}
}
