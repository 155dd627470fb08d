package cost

import "github.com/llmhistory/llmhistory/record"

// Summary sums the costs that records carry and counts the calls that
// carry none, and why, so that a report can give a total and say how much
// of it is missing. It reads Cost as [Table.Apply] left it and prices
// nothing itself. The zero Summary is empty and ready to use.
type Summary struct {
	Calls  int     // records added
	Priced int     // records with a cost
	USD    float64 // the sum of their costs
	// Unpriced counts the records that have usage but no cost: a model the
	// table does not know (or usage that breaks its one meaning).
	Unpriced int
	// NoUsage counts the records without usage and cost, most of them
	// failed calls, that a provider billed nothing for or did not say.
	NoUsage int
	// UnpricedModels counts the Unpriced records by model ("" for a
	// record without one): the prices a table is missing. Nil until one.
	UnpricedModels map[string]int
}

// Add counts r.
func (s *Summary) Add(r *record.Record) {
	s.Calls++
	switch {
	case r.Cost != nil:
		s.Priced++
		s.USD += r.Cost.USD
	case r.Usage == nil:
		s.NoUsage++
	default:
		s.Unpriced++
		if s.UnpricedModels == nil {
			s.UnpricedModels = make(map[string]int)
		}
		s.UnpricedModels[r.Model]++
	}
}
