package cost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrPriceFile is returned, wrapped, by [Table.LoadJSON] for a price file
// it cannot take: not JSON, an unknown field, a rate missing, negative or
// not finite.
var ErrPriceFile = errors.New("cost: invalid price file")

// maxPriceFile bounds what LoadJSON reads.
const maxPriceFile = 8 << 20

// priceFile is the override file's format; see the package documentation,
// "Overriding prices".
type priceFile struct {
	Version int                  `json:"version"`
	Table   string               `json:"table"`
	Models  map[string]fileModel `json:"models"`
}

type fileRates struct {
	Input        *json.Number `json:"input_per_mtok"`
	Output       *json.Number `json:"output_per_mtok"`
	CacheRead    *json.Number `json:"cache_read_per_mtok"`
	CacheWrite   *json.Number `json:"cache_write_per_mtok"`
	CacheWrite1h *json.Number `json:"cache_write_1h_per_mtok"`
	Reasoning    *json.Number `json:"reasoning_per_mtok"`
}

type fileModel struct {
	fileRates
	LongContext *fileLong `json:"long_context"`
}

type fileLong struct {
	AboveTokens int `json:"above_tokens"`
	fileRates
}

// LoadJSON reads a price file and returns a new table: t's prices with the
// file's added and replacing t's for the same models, named by the file's
// "table" (or as [Table.With] names it). t is not changed.
//
// The format, with rates in US dollars per million tokens:
//
//	{
//	  "version": 1,
//	  "table": "acme-2026-11",
//	  "models": {
//	    "my-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0},
//	    "gemini-2.5-pro": {
//	      "input_per_mtok": 1.25, "output_per_mtok": 10, "cache_read_per_mtok": 0.125,
//	      "long_context": {"above_tokens": 200000, "input_per_mtok": 2.5, "output_per_mtok": 15}
//	    }
//	  }
//	}
//
// Each model must give input_per_mtok and output_per_mtok (0 for an
// embedding model's output); cache_read_per_mtok, cache_write_per_mtok,
// cache_write_1h_per_mtok and reasoning_per_mtok are optional, and when
// left out are priced as [Rates] says. long_context, optional, needs
// above_tokens and any of the same rates. An unknown field is an error,
// not ignored: a misspelt rate would otherwise price tokens at a fallback.
// Errors wrap [ErrPriceFile].
func (t *Table) LoadJSON(r io.Reader) (*Table, error) {
	t = t.orDefault()
	data, err := io.ReadAll(io.LimitReader(r, maxPriceFile+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPriceFile, err)
	}
	if len(data) > maxPriceFile {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrPriceFile, maxPriceFile)
	}
	prices, name, err := parsePriceFile(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPriceFile, err)
	}
	return t.With(name, prices), nil
}

func parsePriceFile(data []byte) (map[string]Price, string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f priceFile
	if err := dec.Decode(&f); err != nil {
		return nil, "", err
	}
	if dec.More() {
		return nil, "", errors.New("data after the price object")
	}
	if f.Version != 0 && f.Version != 1 {
		return nil, "", fmt.Errorf("version %d (this reader knows 1)", f.Version)
	}
	if f.Models == nil {
		return nil, "", errors.New(`no "models" object`)
	}
	prices := make(map[string]Price, len(f.Models))
	seen := make(map[string]string, len(f.Models))
	for model, m := range f.Models {
		key := canonicalKey(model)
		if key == "" {
			return nil, "", errors.New("a model with an empty name")
		}
		if other, dup := seen[key]; dup {
			return nil, "", fmt.Errorf("models %q and %q are the same name", other, model)
		}
		seen[key] = model
		p, err := m.price()
		if err != nil {
			return nil, "", fmt.Errorf("model %q: %w", model, err)
		}
		prices[model] = p
	}
	return prices, strings.TrimSpace(f.Table), nil
}

func (m *fileModel) price() (Price, error) {
	if m.Input == nil || m.Output == nil {
		return Price{}, errors.New("input_per_mtok and output_per_mtok are required")
	}
	var p Price
	var err error
	if p.Rates, err = m.fileRates.rates(); err != nil {
		return Price{}, err
	}
	if l := m.LongContext; l != nil {
		if l.AboveTokens <= 0 {
			return Price{}, errors.New("long_context: above_tokens must be a positive number of input tokens")
		}
		p.LongContextAbove = l.AboveTokens
		if p.LongContext, err = l.fileRates.rates(); err != nil {
			return Price{}, fmt.Errorf("long_context: %w", err)
		}
	}
	return p, nil
}

func (f *fileRates) rates() (Rates, error) {
	var r Rates
	for _, x := range []struct {
		name string
		n    *json.Number
		dst  *float64
	}{
		{"input_per_mtok", f.Input, &r.Input},
		{"output_per_mtok", f.Output, &r.Output},
		{"cache_read_per_mtok", f.CacheRead, &r.CacheRead},
		{"cache_write_per_mtok", f.CacheWrite, &r.CacheWrite},
		{"cache_write_1h_per_mtok", f.CacheWrite1h, &r.CacheWrite1h},
		{"reasoning_per_mtok", f.Reasoning, &r.Reasoning},
	} {
		if x.n == nil {
			continue
		}
		v, err := perToken(string(*x.n))
		if err != nil {
			return Rates{}, fmt.Errorf("%s: %w", x.name, err)
		}
		*x.dst = v
	}
	return r, nil
}

// perToken converts a JSON number of dollars per million tokens to
// dollars per token by moving the decimal exponent, so that "2.5" becomes
// exactly the float64 the literal 2.5e-06 is, not 2.5/1e6 with a rounding
// of its own.
func perToken(num string) (float64, error) {
	mant, exp := num, 0
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(num[i+1:], "+"))
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", num)
		}
		// Beyond ±1000 the result is 0 or +Inf either way; the clamp
		// keeps exp-6 from overflowing.
		mant, exp = num[:i], max(-1000, min(e, 1000))
	}
	v, err := strconv.ParseFloat(mant+"e"+strconv.Itoa(exp-6), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s is not a rate (finite and not negative)", num)
	}
	return v, nil
}
