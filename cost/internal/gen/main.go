// Command gen writes package cost's price table, table_gen.go, from
// LiteLLM's model_prices_and_context_window.json (github.com/BerriAI/litellm,
// at the root of the repository). It keeps the chat, responses, completion
// and embedding models of the providers llmhistory records (OpenAI, Azure
// OpenAI, the Gemini API, Vertex AI's Gemini and Claude, Anthropic) and
// their per-token text rates, and drops everything else, so that a 1.4 MB
// file becomes a table of a few tens of KB.
//
// It is run from package cost's go:generate line (see gen.go there):
//
//	LITELLM_JSON=https://raw.githubusercontent.com/BerriAI/litellm/<commit>/model_prices_and_context_window.json \
//	LITELLM_COMMIT=<commit> LITELLM_DATE=<the commit's date, YYYY-MM-DD> \
//	go generate ./cost
//
// -in takes a file path or an https URL. The table is named
// "litellm-" + -date; that name is what record.Cost.Table carries.
//
// Two corrections are made to LiteLLM's data, both for Claude and both
// printed when they happen: a cache rate LiteLLM lacks is derived from
// Anthropic's published multipliers of the base input rate (a 5-minute
// cache write 1.25×, a read 0.1×), and the one-hour cache write is always
// 2× the input rate, because LiteLLM lacks it for most current models and
// has it wrong for some old ones. A rate equal to the output rate is
// dropped from the reasoning field (zero means "priced as output").
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	in := flag.String("in", "", "LiteLLM's model_prices_and_context_window.json: a file path or an https URL")
	commit := flag.String("commit", "", "the LiteLLM commit the file was taken at")
	date := flag.String("date", "", "that commit's date, YYYY-MM-DD: the table is named litellm-DATE")
	out := flag.String("out", "table_gen.go", "the Go file to write")
	flag.Parse()
	if *in == "" || *commit == "" || *date == "" {
		fmt.Fprintln(os.Stderr, "gen: -in, -commit and -date are required (from go generate: set LITELLM_JSON, LITELLM_COMMIT and LITELLM_DATE)")
		flag.Usage()
		os.Exit(2)
	}
	if _, err := time.Parse(time.DateOnly, *date); err != nil {
		fatal(fmt.Errorf("-date %q is not YYYY-MM-DD", *date))
	}
	raw, err := read(*in)
	if err != nil {
		fatal(err)
	}
	entries, notes, err := build(raw)
	if err != nil {
		fatal(err)
	}
	src, err := render(entries, "litellm-"+*date, fmt.Sprintf("github.com/BerriAI/litellm at commit %s (%s), model_prices_and_context_window.json", *commit, *date))
	if err != nil {
		fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fatal(err)
	}
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "gen:", n)
	}
	fmt.Fprintf(os.Stderr, "gen: wrote %s: %d models, %d bytes\n", *out, len(entries), len(src))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// maxInput bounds what is read: LiteLLM's file is about 1.5 MB.
const maxInput = 64 << 20

func read(in string) ([]byte, error) {
	if strings.HasPrefix(in, "http://") {
		return nil, errors.New("-in: use https")
	}
	var r io.Reader
	if strings.HasPrefix(in, "https://") {
		c := &http.Client{Timeout: 2 * time.Minute}
		resp, err := c.Get(in)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", in, resp.Status)
		}
		r = resp.Body
	} else {
		f, err := os.Open(in)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s: larger than %d bytes", in, maxInput)
	}
	return b, nil
}

// rates mirrors cost.Rates: per-token USD, zero meaning "not priced
// apart". The generator does not import package cost, so that a broken
// table never stops it from writing a good one.
type rates struct {
	Input, Output, CacheRead, CacheWrite, CacheWrite1h, Reasoning float64
}

type entry struct {
	Key     string // canonical: lower case, '@' as '-', an optional "azure/", "gemini/" or "vertex_ai/" scope
	Base    rates
	Above   int // long-context threshold in input tokens; 0: none
	Long    rates
	Derived []string // rates not taken from LiteLLM as they are
	from    string   // the LiteLLM key
}

func (e *entry) same(o *entry) bool {
	return e.Base == o.Base && e.Above == o.Above && e.Long == o.Long
}

// The providers, as LiteLLM's litellm_provider names them, whose calls
// llmhistory records.
var providers = map[string]bool{
	"openai":                     true,
	"text-completion-openai":     true,
	"azure":                      true,
	"gemini":                     true,
	"vertex_ai-language-models":  true,
	"vertex_ai-embedding-models": true,
	"vertex_ai-anthropic_models": true,
	"anthropic":                  true,
}

var modes = map[string]bool{"chat": true, "responses": true, "completion": true, "embedding": true}

// families are the model-name prefixes kept: a provider above also serves
// other vendors' models (Azure's Mistral, Vertex's Llama), which are not
// ours to price.
var families = []string{
	"gpt-", "chatgpt-", "o1", "o3", "o4", "codex-", "computer-use-",
	"text-embedding-", "davinci-", "babbage-",
	"gemini-", "text-multilingual-embedding-", "textembedding-gecko", "multimodalembedding",
	"claude-",
}

// scopes are the key prefixes kept; LiteLLM's other prefixed keys of these
// providers (Azure's "azure/eu/...", "azure/global-standard/...") are
// deployment types a record cannot tell apart, and are dropped.
var scopes = []string{"azure", "gemini", "vertex_ai"}

var aboveKey = regexp.MustCompile(`^input_cost_per_token_above_(\d+)k_tokens$`)

// build selects and converts LiteLLM's entries, sorted by key, and says
// what it changed or skipped.
func build(raw []byte) ([]entry, []string, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, nil, fmt.Errorf("not LiteLLM's price file: %w", err)
	}
	var notes []string
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	byKey := map[string]*entry{}
	for _, k := range keys {
		var m map[string]any
		if json.Unmarshal(all[k], &m) != nil {
			continue // sample_spec's documentation strings and the like
		}
		prov, _ := m["litellm_provider"].(string)
		mode, _ := m["mode"].(string)
		if !providers[prov] || !modes[mode] {
			continue
		}
		key, ok := canonical(k)
		if !ok {
			continue
		}
		if _, _, ok := hasInput(m); !ok {
			notes = append(notes, fmt.Sprintf("%s: no per-token input and output rates, skipped", k))
			continue
		}
		e := convert(k, key, m, prov == "anthropic" || prov == "vertex_ai-anthropic_models")
		if old, dup := byKey[key]; dup {
			if !old.same(e) {
				notes = append(notes, fmt.Sprintf("%s and %s are both %s with different prices: kept %s", old.from, k, key, old.from))
			}
			continue
		}
		byKey[key] = e
	}

	var out []entry
	for _, e := range byKey {
		if i := strings.IndexByte(e.Key, '/'); i > 0 {
			// A scoped entry priced like the bare one adds nothing: a
			// lookup of the scoped name falls back to the bare name.
			if bare, ok := byKey[e.Key[i+1:]]; ok && bare.same(e) {
				continue
			}
		}
		out = append(out, *e)
	}
	for _, e := range out {
		if len(e.Derived) > 0 {
			notes = append(notes, fmt.Sprintf("%s: derived %s", e.Key, strings.Join(e.Derived, "; ")))
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.Key, b.Key) })
	if len(out) == 0 {
		return nil, notes, errors.New("no model of the recorded providers found: is this LiteLLM's model_prices_and_context_window.json?")
	}
	return out, notes, nil
}

// canonical turns a LiteLLM key into the table's form, or says it is not
// one of ours.
func canonical(k string) (string, bool) {
	key := strings.ToLower(strings.TrimSpace(k))
	// "vertex_ai/claude-opus-4-6@default" is LiteLLM's name for the
	// version Vertex serves by default: the plain name.
	key = strings.TrimSuffix(key, "@default")
	key = strings.ReplaceAll(key, "@", "-")
	base := key
	if i := strings.IndexByte(key, '/'); i >= 0 {
		if !slices.Contains(scopes, key[:i]) {
			return "", false
		}
		base = key[i+1:]
	}
	if strings.Contains(base, "/") {
		return "", false
	}
	fam := strings.TrimPrefix(base, "ft:")
	for _, f := range families {
		if strings.HasPrefix(fam, f) {
			return key, true
		}
	}
	return "", false
}

func num(m map[string]any, k string) float64 {
	v, _ := m[k].(float64)
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func hasInput(m map[string]any) (float64, float64, bool) {
	in, ok1 := m["input_cost_per_token"].(float64)
	out, ok2 := m["output_cost_per_token"].(float64)
	return in, out, ok1 && ok2
}

func convert(from, key string, m map[string]any, claude bool) *entry {
	e := &entry{Key: key, from: from}
	e.Base = rates{
		Input:        num(m, "input_cost_per_token"),
		Output:       num(m, "output_cost_per_token"),
		CacheRead:    num(m, "cache_read_input_token_cost"),
		CacheWrite:   num(m, "cache_creation_input_token_cost"),
		CacheWrite1h: num(m, "cache_creation_input_token_cost_above_1hr"),
		Reasoning:    num(m, "output_cost_per_reasoning_token"),
	}
	// One long-context tier: the lowest threshold LiteLLM gives.
	var thresholds []int
	for k := range m {
		if sm := aboveKey.FindStringSubmatch(k); sm != nil {
			if n, err := strconv.Atoi(sm[1]); err == nil && n > 0 {
				thresholds = append(thresholds, n)
			}
		}
	}
	slices.Sort(thresholds)
	if len(thresholds) > 0 {
		n := thresholds[0]
		sfx := fmt.Sprintf("_above_%dk_tokens", n)
		long := rates{
			Input:        num(m, "input_cost_per_token"+sfx),
			Output:       num(m, "output_cost_per_token"+sfx),
			CacheRead:    num(m, "cache_read_input_token_cost"+sfx),
			CacheWrite:   num(m, "cache_creation_input_token_cost"+sfx),
			CacheWrite1h: num(m, "cache_creation_input_token_cost_above_1hr"+sfx),
			Reasoning:    num(m, "output_cost_per_reasoning_token"+sfx),
		}
		// A zero above the threshold is LiteLLM's placeholder, not a
		// free tier (gemini-2.0-flash-exp has input 1.5e-07 and 0 above
		// 128k): the runtime reads zero as "the base rate", so a tier of
		// zeros is no tier.
		if long != (rates{}) {
			e.Above, e.Long = n*1000, long
		}
	}
	if claude {
		e.Derived = append(e.Derived, claudeCache(&e.Base)...)
		if e.Above > 0 && e.Long.Input > 0 {
			for _, d := range claudeCache(&e.Long) {
				e.Derived = append(e.Derived, "long "+d)
			}
		}
	}
	if e.Base.Reasoning == e.Base.Output {
		e.Base.Reasoning = 0
	}
	if e.Long.Reasoning == e.Long.Output {
		e.Long.Reasoning = 0
	}
	return e
}

// claudeCache fills r's cache rates from Anthropic's multipliers of the
// input rate: 5-minute write 1.25×, 1-hour write 2×, read 0.1×. Rates
// LiteLLM has are kept, except the 1-hour write, which LiteLLM lacks for
// most current Claude models and has wrong for some old ones (claude-3-opus
// at 0.4× input, below its own 5-minute rate): it is always 2×.
func claudeCache(r *rates) []string {
	var d []string
	if r.CacheRead == 0 {
		r.CacheRead = round(0.1 * r.Input)
		d = append(d, "cache read 0.1× input")
	}
	if r.CacheWrite == 0 {
		r.CacheWrite = round(1.25 * r.Input)
		d = append(d, "cache write 1.25× input")
	}
	if h := round(2 * r.Input); r.CacheWrite1h != h {
		if r.CacheWrite1h == 0 {
			d = append(d, "1h cache write 2× input")
		} else {
			d = append(d, fmt.Sprintf("1h cache write 2× input, not LiteLLM's %g", r.CacheWrite1h))
		}
		r.CacheWrite1h = h
	}
	return d
}

// round removes the binary noise of a product (1.25 × 3e-06 is
// 3.7500000000000005e-06) so that derived rates read as prices do.
func round(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return v
}

func render(entries []entry, name, source string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by cost/internal/gen from LiteLLM's price file; DO NOT EDIT.\n\n")
	b.WriteString("package cost\n\n")
	fmt.Fprintf(&b, "// defaultName names the generated table; it is what record.Cost.Table\n// carries for a call the default table priced.\nconst defaultName = %q\n\n", name)
	fmt.Fprintf(&b, "// defaultSource is where the generated table's prices come from.\nconst defaultSource = %q\n\n", source)
	b.WriteString("// defaultEntries are the generated table's prices, sorted by name: per-token\n// USD, zero meaning the fallback documented on Rates.\n")
	b.WriteString("var defaultEntries = [...]entry{\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "\t{%q, Price{", e.Key)
		var parts []string
		if e.Base != (rates{}) {
			parts = append(parts, "Rates: "+ratesLit(e.Base))
		}
		if e.Above > 0 {
			parts = append(parts, fmt.Sprintf("LongContextAbove: %d", e.Above), "LongContext: "+ratesLit(e.Long))
		}
		b.WriteString(strings.Join(parts, ", "))
		b.WriteString("}},")
		if len(e.Derived) > 0 {
			b.WriteString(" // derived: " + strings.Join(e.Derived, "; "))
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func ratesLit(r rates) string {
	var f []string
	add := func(name string, v float64) {
		if v != 0 {
			f = append(f, name+": "+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	add("Input", r.Input)
	add("Output", r.Output)
	add("CacheRead", r.CacheRead)
	add("CacheWrite", r.CacheWrite)
	add("CacheWrite1h", r.CacheWrite1h)
	add("Reasoning", r.Reasoning)
	return "Rates{" + strings.Join(f, ", ") + "}"
}
