package benchdata_test

import (
	"bytes"
	"encoding/json"
	"fmt"

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
