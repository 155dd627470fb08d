package edittest_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/internal/edittest"
)

func ExampleInsertion() {
	ins, ok := edittest.Insertion([]byte(`{"a":[2]}`), []byte(`{"a":[1,2]}`))
	fmt.Printf("%s %v\n", ins, ok)
	_, ok = edittest.Insertion([]byte(`{"a":[2]}`), []byte(`{"b":[2]}`))
	fmt.Println(ok)
	// Output:
	// 1, true
	// false
}
