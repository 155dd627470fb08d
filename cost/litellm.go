package cost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/llmhistory/llmhistory/cost/internal/litellm"
)

// EnvPrices is the environment variable that names a price file for
// [Default]: LiteLLM's model_prices_and_context_window.json, newer than
// the built-in table, or a file of your own prices (see [Table.LoadFile]).
const EnvPrices = "LLMHISTORY_PRICES"

// maxLiteLLMFile bounds what LoadLiteLLM reads: LiteLLM's file is about
// 1.7 MB and grows by about half a megabyte a year.
const maxLiteLLMFile = 64 << 20

// LoadLiteLLM reads LiteLLM's model_prices_and_context_window.json (from
// github.com/BerriAI/litellm, at the root of the repository) and returns a
// table of its prices, named "litellm-" and date as YYYY-MM-DD: the day
// the file was taken, which is what the records it prices carry and how a
// report tells how old their prices are.
//
// It keeps what the built-in table keeps, converted and corrected the same
// way (see the package documentation, "The table"): the table is the
// file's alone, not added to another, so that a price LiteLLM changed or
// dropped is not kept from an older table. Only the entries of the
// providers llmhistory records are read. Input that is not LiteLLM's file
// (not a JSON object, larger than 64 MiB, none of those providers' models
// in it) is an error, and so is a rate of a kept model that is not a price
// (a string, a negative number, more than a dollar a token): such a file
// is damaged, and a fallback would hide it. Errors wrap [ErrPriceFile].
func LoadLiteLLM(r io.Reader, date time.Time) (*Table, error) {
	if date.IsZero() {
		return nil, fmt.Errorf("%w: LoadLiteLLM needs the date the file was taken: the table is named by it", ErrPriceFile)
	}
	data, err := readPriceFile(r, maxLiteLLMFile)
	if err != nil {
		return nil, err
	}
	return loadLiteLLM(data, date)
}

func readPriceFile(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPriceFile, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrPriceFile, limit)
	}
	return data, nil
}

func loadLiteLLM(data []byte, date time.Time) (*Table, error) {
	entries, _, err := litellm.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w%s", ErrPriceFile, err, jsonLine(data, err))
	}
	t := &Table{name: "litellm-" + date.UTC().Format(time.DateOnly), prices: make(map[string]entry, len(entries))}
	for _, e := range entries {
		t.prices[e.Key] = entry{name: e.Key, price: Price{
			Rates:            Rates(e.Base),
			LongContextAbove: e.Above,
			LongContext:      Rates(e.Long),
		}}
	}
	return t, nil
}

// jsonLine is " (line N)" for a JSON syntax or type error, so that a
// person can find it in the file; "" for any other error.
func jsonLine(data []byte, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var offset int64
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	default:
		return ""
	}
	offset = min(max(offset, 0), int64(len(data)))
	return fmt.Sprintf(" (line %d)", bytes.Count(data[:offset], []byte("\n"))+1)
}

// isLiteLLM tells LiteLLM's file from llmhistory's own price file (see
// [Table.LoadJSON]): an object with a "models" key is llmhistory's, as no
// model is named "models"; anything else is taken for LiteLLM's, whose
// loader says what is wrong with it.
func isLiteLLM(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		// Not an object: whichever loader reports it says the same.
		// llmhistory's is the smaller format, and the older error.
		return false
	}
	_, ours := top["models"]
	return !ours
}

// LoadFile reads a price file of either format and returns the table it
// makes:
//
//   - LiteLLM's model_prices_and_context_window.json makes a table of its
//     own, as [LoadLiteLLM] does (t is not used), dated by the YYYY-MM-DD
//     in the file's name if it has one ("litellm-2026-11-20.json"), else
//     by the file's modification time: the day a downloaded file was
//     downloaded;
//   - llmhistory's price file (an object with "models") adds to t's
//     prices, as [Table.LoadJSON] does.
//
// A nil t is [Default]. Errors name the file; those of its content wrap
// [ErrPriceFile] and give the line of a JSON syntax error.
func (t *Table) LoadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a price file", path)
	}
	data, err := readPriceFile(f, maxLiteLLMFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if isLiteLLM(data) {
		date, ok := DateOf(filepath.Base(path))
		if !ok {
			date = st.ModTime()
		}
		n, err := loadLiteLLM(data, date)
		if errors.Is(err, litellm.ErrNoModels) {
			return nil, fmt.Errorf("%s: %w: neither llmhistory's price file (it has no \"models\" object) nor LiteLLM's (it has no model of the providers llmhistory records)", path, ErrPriceFile)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return n, nil
	}
	n, err := t.LoadJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", path, err, jsonLine(data, err))
	}
	return n, nil
}

// FromEnv returns the table of the price file the LLMHISTORY_PRICES
// environment variable names ([EnvPrices]), read by [Table.LoadFile] on
// the built-in table: LiteLLM's file makes a table of its own, a file of
// your own prices is added to [Builtin]. It returns nil and no error when
// the variable is unset or empty, and reads the file again at every call
// ([Default] reads it once).
func FromEnv() (*Table, error) {
	path := os.Getenv(EnvPrices)
	if path == "" {
		return nil, nil
	}
	t, err := Builtin().LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvPrices, path, err)
	}
	return t, nil
}
