package cost

import (
	"strings"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/record"
)

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
	// Local counts the records without cost of calls to a model run on
	// the caller's own machine ([Local]): no table prices them, and they
	// are neither priced nor unpriced.
	Local int
	// UnpricedModels counts the Unpriced records by model ("" for a
	// record without one): the prices a table is missing. Nil until one.
	UnpricedModels map[string]int
	// Tables counts the priced records by the table that priced them
	// ([record.Cost].Table), so that a total can say whose prices it is
	// made of: records written by several recorders, or before and after
	// a price file, may carry several. Nil until one.
	Tables map[string]int

	// MaxNames, when positive, bounds the distinct names UnpricedModels
	// and Tables each hold, for a summary of input no one checked (a
	// history file): the records of names past the bound are counted
	// under [OtherNames], and a name longer than 256 bytes is cut (and
	// ends in "…"), so one garbled record cannot hold megabytes. Zero
	// keeps every name, whole. Set it before the first Add.
	MaxNames int
}

// OtherNames is the name under which a Summary with MaxNames counts the
// records of names past its bound.
const OtherNames = "(other)"

// maxNameBytes is the longest name a Summary with MaxNames keeps. Model
// and table names are far shorter; a longer one is damage.
const maxNameBytes = 256

// Add counts r.
func (s *Summary) Add(r *record.Record) {
	s.Calls++
	switch {
	case r.Cost != nil:
		s.Priced++
		s.USD += r.Cost.USD
		s.Tables = s.count(s.Tables, r.Cost.Table)
	case Local(r.MethodName):
		s.Local++
	case r.Usage == nil:
		s.NoUsage++
	default:
		s.Unpriced++
		s.UnpricedModels = s.count(s.UnpricedModels, r.Model)
	}
}

// count adds one to name in m, within MaxNames, and returns m (made on
// first use).
func (s *Summary) count(m map[string]int, name string) map[string]int {
	if m == nil {
		m = make(map[string]int)
	}
	if s.MaxNames > 0 {
		name = cutName(name)
		if _, ok := m[name]; !ok && len(m) >= s.MaxNames {
			name = OtherNames
		}
	}
	m[name]++
	return m
}

// cutName returns name cut to maxNameBytes on a rune boundary. A cut name
// is a copy, so that the long original can be freed.
func cutName(name string) string {
	if len(name) <= maxNameBytes {
		return name
	}
	cut := maxNameBytes
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return strings.Clone(name[:cut]) + "…"
}

// Local reports whether a call of this method went to a model run on the
// caller's own machine: Ollama's native API (providers/ollama's method
// names, "ollama.chat" and the others). Such a call costs nothing per
// token; the recorder does not price it, whatever a table says of its
// model's name (a local model may be named as a priced one), and a
// [Summary] and the evidence report count it as local, not as unpriced.
func Local(method string) bool { return strings.HasPrefix(method, "ollama.") }
