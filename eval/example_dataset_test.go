package eval_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Two calls that asked the same and got the same answer are one item of a
// dataset, with both calls as its sources; the dataset exports to
// OpenAI's fine-tuning format.
func ExampleDataset() {
	answer := record.TextMessage(record.RoleAssistant, "Paris.")
	call := func(id string) record.Record {
		return record.Record{
			CallID: id, MethodName: "openai.chat.completions.create",
			Args:    json.RawMessage(`[{"role":"user","parts":[{"type":"text","content":"Capital of France?"}]}]`),
			Kwargs:  json.RawMessage(`{"model":"gpt-4o-mini","stream":true}`),
			Outcome: record.Success("chat.completion"), Output: &answer,
		}
	}
	items, _ := eval.ItemsFromRecords([]record.Record{call("01A"), call("01B")}, eval.BuildOptions{})
	d := &eval.Dataset{Name: "capitals"}
	fmt.Println("new items:", d.Add(items...))
	d.WriteTo(os.Stdout)
	eval.Export(os.Stdout, d, eval.FormatOpenAI, eval.ExportOptions{})
	// Output:
	// new items: 1
	// {"llmhistory_dataset":1,"name":"capitals","version":"e216309f0e7b09b9","items":1}
	// {"id":"a417ae199c34db98","input":[{"role":"user","parts":[{"type":"text","content":"Capital of France?"}]}],"params":{"model":"gpt-4o-mini"},"reference":{"role":"assistant","parts":[{"type":"text","content":"Paris."}]},"sources":["01A","01B"]}
	// {"messages":[{"role":"user","content":"Capital of France?"},{"role":"assistant","content":"Paris."}]}
}

// Two variants compared on one item: the baseline answered right, the
// other did not.
func ExampleCompare() {
	ref := record.TextMessage(record.RoleAssistant, "Madrid.")
	item := eval.Item{Input: []record.Message{record.TextMessage(record.RoleUser, "Capital of Spain?")}, Reference: &ref}
	item.ID = item.ContentID()
	trial := func(variant, answer string) eval.Trial {
		out := record.TextMessage(record.RoleAssistant, answer)
		return eval.Trial{Item: item.ID, Variant: variant, Output: &out,
			Scores: []store.Score{{Name: "exact_match", Value: store.Bool(answer == "Madrid.")}}}
	}
	res := &eval.ExperimentResult{Experiment: "swap",
		Variants: []eval.Variant{{Name: "mini"}, {Name: "nano"}}, Items: []eval.Item{item},
		Trials: []eval.Trial{trial("mini", "Madrid."), trial("nano", "Barcelona.")}}
	c, _ := eval.Compare(eval.CompareOptions{NoLatency: true}, res)
	for _, s := range c.Summary[1:] {
		fmt.Printf("%s %s: %d wins, %d losses, %d ties\n", s.Score, s.Run, s.Wins, s.Losses, s.Ties)
	}
	fmt.Print(c.Items[0].Cells[1].Diff)
	// Output:
	// exact_match nano: 0 wins, 1 losses, 0 ties
	// --- mini
	// +++ nano
	// @@ -1 +1 @@
	// -Madrid.
	// +Barcelona.
}
