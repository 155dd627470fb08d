package main

import (
	"errors"
	"strings"

	"github.com/llmhistory/llmhistory/cost"
)

// loadPrices reads the price file -prices names: LiteLLM's file makes a
// table of its own; a file of your own prices is added to the table
// LLMHISTORY_PRICES names, or else to the module's. Its errors name the
// file and say what is wrong, with the line of a JSON error.
func loadPrices(path string) (*cost.Table, error) {
	base, err := envPrices()
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = cost.Builtin()
	}
	t, err := base.LoadFile(path)
	if err != nil {
		return nil, priceError(err)
	}
	return t, nil
}

// envPrices is the table the file LLMHISTORY_PRICES names, or nil when the
// variable is unset. A file that cannot be used is an error here, where a
// program that records would log it and price with the module's table:
// the command says so at once instead.
func envPrices() (*cost.Table, error) {
	t, err := cost.FromEnv()
	if err != nil {
		return nil, priceError(err)
	}
	return t, nil
}

// priceError is a price file's error as the command shows it: the file
// and what is wrong, without the package's "cost: " inside.
func priceError(err error) error {
	if errors.Is(err, cost.ErrPriceFile) {
		return errors.New(strings.Replace(err.Error(), "cost: ", "", 1))
	}
	return err
}
