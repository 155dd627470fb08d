package benchdata_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/llmhistory/llmhistory/internal/benchdata"
)

func Example() {
	fmt.Println(len(benchdata.Request), json.Valid(benchdata.Request))
	fmt.Println(len(benchdata.Response), json.Valid(benchdata.Response))
	fmt.Println(bytes.Count(benchdata.Stream, []byte("\n\n")), "events")
	// Output:
	// 4065 true
	// 4135 true
	// 102 events
}

func ExampleTransport() {
	client := &http.Client{Transport: benchdata.SSE}
	resp, err := client.Post("http://api.example/v1/chat/completions", "application/json", bytes.NewReader(benchdata.Request))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 32<<10)
	reads := 0
	for {
		_, err := resp.Body.Read(buf)
		if err != nil {
			break
		}
		reads++
	}
	fmt.Println(resp.Header.Get("Content-Type"), reads, "reads")
	// Output:
	// text/event-stream 102 reads
}
