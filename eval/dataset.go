package eval

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Item is one example of a [Dataset]: what a model was asked, with what
// tools and parameters, and the answer it gave, kept as the reference.
//
// Its ID is a digest of what it asks and answers (Input, Tools, Params
// and Reference), not of where it came from: the same exchange found in
// two calls is one item, whose Sources name both.
type Item struct {
	ID string `json:"id"`
	// Input is the request's messages, as the record keeps them (the
	// recorder's history guidance left out: it names times and call IDs,
	// and is the recorder's, not the application's).
	Input []record.Message `json:"input"`
	// Tools are the names of the tools the request offered, as the record
	// keeps them (their declarations are the application's: give them to
	// an export).
	Tools []string `json:"tools,omitempty"`
	// Params are the request's parameters (model, temperature,
	// max_tokens, tool_choice ...) from the record's kwargs, without
	// tools and the stream's settings, which say how an answer travels,
	// not what it is.
	Params map[string]json.RawMessage `json:"params,omitempty"`
	// Reference is the answer the call got: what an experiment's answers
	// are compared with, and what a fine-tuning example teaches.
	Reference *record.Message `json:"reference,omitempty"`

	User     string            `json:"user,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// Sources are the call IDs the item was taken from, in the order
	// they were added.
	Sources []string `json:"sources,omitempty"`
}

// itemContent is what an item's ID is a digest of.
type itemContent struct {
	Input     []record.Message           `json:"input"`
	Tools     []string                   `json:"tools,omitempty"`
	Params    map[string]json.RawMessage `json:"params,omitempty"`
	Reference *record.Message            `json:"reference,omitempty"`
}

// ContentID returns the ID the item's content gives it: the first 16 hex digits
// of the SHA-256 of its input, tools, parameters and reference, encoded
// canonically.
func (it *Item) ContentID() string {
	b, _ := json.Marshal(itemContent{it.Input, it.Tools, it.Params, it.Reference}) // messages and raw JSON always marshal
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// merge adds other's sources, tags and metadata to it: other is the same
// exchange, found again.
func (it *Item) merge(other *Item) {
	for _, s := range other.Sources {
		if !slices.Contains(it.Sources, s) {
			it.Sources = append(it.Sources, s)
		}
	}
	for _, t := range other.Tags {
		if !slices.Contains(it.Tags, t) {
			it.Tags = append(it.Tags, t)
		}
	}
	if it.User == "" {
		it.User = other.User
	}
	for k, v := range other.Metadata {
		if _, ok := it.Metadata[k]; !ok {
			if it.Metadata == nil {
				it.Metadata = map[string]string{}
			}
			it.Metadata[k] = v
		}
	}
}

// kwargs that are not an item's parameters: tools are its Tools, and the
// stream's settings say how the answer travelled, not what it is.
var notParams = []string{"tools", "functions", "stream", "stream_options"}

// ItemFromRecord returns the item a call makes: its messages, tools,
// parameters and answer. ok is false when the call has no answer to
// keep as a reference (it failed, or its answer was not recorded).
func ItemFromRecord(r *record.Record) (it Item, ok bool) {
	if !r.Outcome.OK || r.Output == nil || len(r.Output.Parts) == 0 {
		return Item{}, false
	}
	it = Item{
		Input:     withoutGuidance(record.Messages(r.Args)),
		Tools:     offeredTools(r),
		Reference: ptr(r.Output.Clone()),
		User:      r.UserID,
		Tags:      slices.Clone(r.Tags),
		Sources:   []string{r.CallID},
	}
	if len(r.Metadata) > 0 {
		it.Metadata = make(map[string]string, len(r.Metadata))
		for k, v := range r.Metadata {
			it.Metadata[k] = v
		}
	}
	record.EachValidMember(r.Kwargs, func(k, v []byte) bool {
		name := string(k)
		if slices.Contains(notParams, name) {
			return true
		}
		if it.Params == nil {
			it.Params = map[string]json.RawMessage{}
		}
		it.Params[name] = record.AppendCanonicalJSON(nil, v)
		return true
	})
	it.ID = it.ContentID()
	return it, true
}

func ptr[T any](v T) *T { return &v }

// withoutGuidance returns msgs without the history guidance the recorder
// adds (middleware.WithHistoryPreview): from the guidance on, a text part
// is cut, and a system message left with nothing goes.
func withoutGuidance(msgs []record.Message) []record.Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		if m.Role != record.RoleSystem {
			out = append(out, m)
			continue
		}
		var parts []record.Part
		for _, p := range m.Parts {
			if p.Type == record.PartText {
				if i := strings.Index(p.Content, middleware.HistoryGuidance); i >= 0 {
					p.Content = strings.TrimRight(p.Content[:i], "\n")
					if p.Content == "" {
						continue
					}
				}
			}
			parts = append(parts, p)
		}
		if len(parts) > 0 {
			m.Parts = parts
			out = append(out, m)
		}
	}
	return out
}

// BuildOptions says how calls become items.
type BuildOptions struct {
	// Conversations makes one item of each conversation (each trace): its
	// last call that has an answer, whose input is the conversation so
	// far. Otherwise every call with an answer is an item.
	Conversations bool
}

// BuildResult counts what a build did.
type BuildResult struct {
	Calls   int // calls read
	Items   int // items made (before they are added to a dataset)
	Skipped int // calls without an answer to keep as a reference
}

// ItemsFromRecords makes items of recs (see [BuildOptions]). Calls an
// evaluator made ([IsEvaluation]) are left out.
func ItemsFromRecords(recs []record.Record, o BuildOptions) ([]Item, BuildResult) {
	var res BuildResult
	var items []Item
	if !o.Conversations {
		for i := range recs {
			if IsEvaluation(&recs[i]) {
				continue
			}
			res.Calls++
			if it, ok := ItemFromRecord(&recs[i]); ok {
				items = append(items, it)
			} else {
				res.Skipped++
			}
		}
		res.Items = len(items)
		return items, res
	}
	last := map[string]int{} // trace (or call, without one) -> its last call with an answer
	var order []string
	for i := range recs {
		r := &recs[i]
		if IsEvaluation(r) {
			continue
		}
		res.Calls++
		key := r.TraceID
		if key == "" {
			key = "call:" + r.CallID
		}
		if _, seen := last[key]; !seen {
			order = append(order, key)
			last[key] = -1
		}
		if r.Outcome.OK && r.Output != nil && len(r.Output.Parts) > 0 {
			last[key] = i
		}
	}
	for _, key := range order {
		i := last[key]
		if i < 0 {
			res.Skipped++
			continue
		}
		it, _ := ItemFromRecord(&recs[i])
		if recs[i].TraceID != "" {
			if it.Metadata == nil {
				it.Metadata = map[string]string{}
			}
			it.Metadata["trace_id"] = recs[i].TraceID
		}
		items = append(items, it)
	}
	res.Items = len(items)
	return items, res
}

// ItemsFromStore makes items of the records of st that f selects (see
// [BuildOptions]); with o.Conversations, of the whole conversation of
// each trace that has a selected record.
func ItemsFromStore(ctx context.Context, st *store.Store, f store.Filter, o BuildOptions) ([]Item, BuildResult, error) {
	var recs []record.Record
	var traces []string
	seen := map[string]bool{}
	for r, err := range st.Records(ctx, f, store.ReadOptions{}) {
		if err != nil {
			return nil, BuildResult{}, err
		}
		if o.Conversations && r.TraceID != "" {
			if !seen[r.TraceID] {
				seen[r.TraceID] = true
				traces = append(traces, r.TraceID)
			}
			continue
		}
		recs = append(recs, r)
	}
	for _, t := range traces {
		conv, err := st.Trace(ctx, t)
		if err != nil {
			return nil, BuildResult{}, err
		}
		recs = append(recs, conv...)
	}
	items, res := ItemsFromRecords(recs, o)
	return items, res, nil
}

// Dataset is a list of [Item]s with a name: a JSON Lines file that a
// person reviews in a pull request (see [ReadDataset] and
// [Dataset.WriteTo]).
type Dataset struct {
	Name  string
	Items []Item
	index map[string]int // ID -> position in Items
}

// DatasetFormat is the version of the dataset file's format.
const DatasetFormat = 1

// datasetHeader is a dataset file's first line.
type datasetHeader struct {
	Format  int    `json:"llmhistory_dataset"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Items   int    `json:"items"`
}

// Add adds items to d, each once: an item with the ID of one already
// there (the same exchange, from another call) adds its sources, tags
// and metadata to it. An item without an ID gets its content's. It
// returns how many items were new.
func (d *Dataset) Add(items ...Item) (added int) {
	if d.index == nil {
		d.index = make(map[string]int, len(d.Items))
		for i := range d.Items {
			d.index[d.Items[i].ID] = i
		}
	}
	for _, it := range items {
		if it.ID == "" {
			it.ID = it.ContentID()
		}
		if i, ok := d.index[it.ID]; ok {
			d.Items[i].merge(&it)
			continue
		}
		d.index[it.ID] = len(d.Items)
		d.Items = append(d.Items, it)
		added++
	}
	return added
}

// Item returns the item of this ID, or nil.
func (d *Dataset) Item(id string) *Item {
	for i := range d.Items {
		if d.Items[i].ID == id {
			return &d.Items[i]
		}
	}
	return nil
}

// Version is the dataset's content version: a digest of its items, as
// they are written, in order. Any change to an item changes it.
func (d *Dataset) Version() string {
	h := sha256.New()
	var line []byte
	for i := range d.Items {
		line = appendItem(line[:0], &d.Items[i])
		h.Write(line)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func appendItem(dst []byte, it *Item) []byte {
	b, _ := json.Marshal(it) // an item always marshals: messages and raw JSON do
	return append(dst, b...)
}

// WriteTo writes d as JSON Lines: a header line (its name, content
// version and count of items), then one item a line, keys in a fixed
// order, in the order the items were added, so that a change to a
// dataset is a diff of the lines it touches.
func (d *Dataset) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	head, _ := json.Marshal(datasetHeader{DatasetFormat, d.Name, d.Version(), len(d.Items)})
	n, _ := bw.Write(append(head, '\n'))
	total := int64(n)
	var line []byte
	for i := range d.Items {
		line = append(appendItem(line[:0], &d.Items[i]), '\n')
		n, _ := bw.Write(line)
		total += int64(n)
	}
	return total, bw.Flush()
}

// WriteFile writes d to path, whole or not at all (a file beside it,
// renamed over it).
func (d *Dataset) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := d.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Errors of reading a dataset.
var (
	// ErrDatasetFormat: the header names a format newer than this
	// package reads.
	ErrDatasetFormat = errors.New("eval: a newer dataset format")
	// ErrItemID: an item's ID is not its content's (it was edited by
	// hand): remove the ID, and reading gives it the right one.
	ErrItemID = errors.New("eval: the item's id is not its content's")
)

// LineError is a line of a dataset file that is not an item, or a header
// this package cannot read.
type LineError struct {
	Line int   // 1-based
	Err  error // why
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// maxDatasetLine bounds one line of a dataset file.
const maxDatasetLine = 64 << 20

// ReadDataset reads a dataset written by [Dataset.WriteTo], or by hand:
// the header line is optional, an item without an ID gets its content's,
// and an item found twice is kept once, its sources merged. A line that
// is not an item is an error that names it ([*LineError]), and
// reading stops there: a dataset is not read in part. Blank lines are
// skipped; unknown fields are ignored.
func ReadDataset(r io.Reader) (*Dataset, error) {
	d := &Dataset{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxDatasetLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line == 1 && isHeader(b) {
			var h datasetHeader
			if err := json.Unmarshal(b, &h); err != nil {
				return nil, &LineError{Line: line, Err: fmt.Errorf("the header: %v", err)}
			}
			if h.Format > DatasetFormat {
				return nil, &LineError{Line: line, Err: fmt.Errorf("%w (%d; this reads %d)", ErrDatasetFormat, h.Format, DatasetFormat)}
			}
			d.Name = h.Name
			continue
		}
		it, err := decodeItem(b)
		if err != nil {
			return nil, &LineError{Line: line, Err: err}
		}
		d.Add(it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return d, nil
}

// isHeader reports whether a first line is a dataset's header.
func isHeader(b []byte) bool {
	found := false
	record.EachValidMember(b, func(k, _ []byte) bool {
		found = found || string(k) == "llmhistory_dataset"
		return !found
	})
	return found
}

// decodeItem reads one item's line strictly: a JSON object with input
// messages, and an ID, if any, that is its content's.
func decodeItem(b []byte) (Item, error) {
	if !json.Valid(b) {
		return Item{}, errors.New("not JSON")
	}
	if b[0] != '{' {
		return Item{}, errors.New("an item is a JSON object")
	}
	var it Item
	if err := json.Unmarshal(b, &it); err != nil {
		return Item{}, err
	}
	if len(it.Input) == 0 {
		return Item{}, errors.New("the item has no input messages")
	}
	for i, m := range it.Input {
		if m.Role == "" && !(len(m.Parts) == 1 && m.Parts[0].Type == record.PartOther) {
			return Item{}, fmt.Errorf("input message %d has no role", i+1)
		}
	}
	for k, v := range it.Params {
		it.Params[k] = record.AppendCanonicalJSON(nil, v)
	}
	want := it.ContentID()
	switch it.ID {
	case "":
		it.ID = want
	case want:
	default:
		return Item{}, fmt.Errorf("%w: %s is %s", ErrItemID, it.ID, want)
	}
	return it, nil
}

// ReadDatasetFile reads the dataset at path (see [ReadDataset]). An error
// names the file.
func ReadDatasetFile(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := ReadDataset(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// AppendToDatasetFile adds items to the dataset at path, made with this
// name when there is none, and writes it back whole; it returns how many
// items were new.
func AppendToDatasetFile(path, name string, items ...Item) (added int, err error) {
	d, err := ReadDatasetFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		d = &Dataset{Name: name}
	case err != nil:
		return 0, err
	}
	added = d.Add(items...)
	return added, d.WriteFile(path)
}
