// Package litellm converts LiteLLM's model_prices_and_context_window.json
// (github.com/BerriAI/litellm) into the per-token rates package cost
// prices with. It is shared by the generator of the built-in table
// (cost/internal/gen) and by cost.LoadLiteLLM, which reads a newer file
// at run time, so that both select and correct LiteLLM's data the same
// way. It does not import package cost, so that a broken generated table
// never stops the generator from writing a good one.
//
// What is kept: the chat, responses, completion and embedding models of
// the providers llmhistory records (OpenAI, Azure OpenAI, the Gemini API,
// Vertex AI's Gemini and Claude, Anthropic, Amazon Bedrock), with their
// text rates at standard tier. Everything else in the file (images,
// audio, other providers, batch and priority rates) is ignored, whatever
// it holds.
//
// Two corrections are made, both for Claude: a cache rate LiteLLM lacks is
// derived from Anthropic's multipliers of the input rate (a 5-minute write
// 1.25×, a read 0.1×), and the one-hour write is always 2× input, because
// LiteLLM lacks it for many models and has it wrong for some old ones. A
// reasoning rate equal to the output rate is dropped (zero means "priced
// as output").
package litellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Rates mirrors cost.Rates: per-token US dollars, zero meaning "not
// priced apart".
type Rates struct {
	Input, Output, CacheRead, CacheWrite, CacheWrite1h, Reasoning float64
}

// Entry is one model's prices, under the key cost's tables use.
type Entry struct {
	// Key is canonical: lower case, '@' as '-', with an optional
	// "azure/", "gemini/" or "vertex_ai/" scope, or a Bedrock model id
	// ("anthropic.claude-sonnet-4-6", "us.anthropic.claude-opus-4-7").
	Key     string
	Base    Rates
	Above   int // long-context threshold in input tokens; 0: none
	Long    Rates
	Derived []string // rates not taken from LiteLLM as they are
	From    string   // the LiteLLM key
}

func (e *Entry) same(o *Entry) bool {
	return e.Base == o.Base && e.Above == o.Above && e.Long == o.Long
}

// providers are LiteLLM's litellm_provider names whose calls llmhistory
// records.
var providers = map[string]bool{
	"openai":                     true,
	"text-completion-openai":     true,
	"azure":                      true,
	"gemini":                     true,
	"vertex_ai-language-models":  true,
	"vertex_ai-embedding-models": true,
	"vertex_ai-anthropic_models": true,
	"anthropic":                  true,
	"bedrock":                    true,
	"bedrock_converse":           true,
}

var modes = map[string]bool{"chat": true, "responses": true, "completion": true, "embedding": true}

// families are the model-name prefixes kept for the first-party
// providers: they also serve other vendors' models (Azure's Mistral,
// Vertex's Llama), which are not ours to price.
var families = []string{
	"gpt-", "chatgpt-", "o1", "o3", "o4", "codex-", "computer-use-",
	"text-embedding-", "davinci-", "babbage-",
	"gemini-", "text-multilingual-embedding-", "textembedding-gecko", "multimodalembedding",
	"claude-",
}

// scopes are the key prefixes kept; LiteLLM's other prefixed keys of these
// providers ("azure/eu/...", "azure/global-standard/...", "bedrock/us-gov-west-1/...")
// are deployment types or regions a record cannot tell apart, and are
// dropped.
var scopes = []string{"azure", "gemini", "vertex_ai"}

// bedrockKey is a Bedrock model id as the Converse and InvokeModel APIs
// take it: an optional inference-profile region ("us.", "eu.", "apac.",
// "global.", ...), the vendor, a dot, the model.
var bedrockKey = regexp.MustCompile(`^(?:[a-z][a-z-]*\.)?[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9._:-]*$`)

// ErrNoModels is Parse's error for a JSON object without a single model of
// the providers kept: most likely not LiteLLM's file at all.
var ErrNoModels = errors.New("no model of the recorded providers (OpenAI, Azure, Gemini, Vertex AI, Anthropic, Bedrock) in it: is this LiteLLM's model_prices_and_context_window.json?")

// GlobalProfile begins the id of a Bedrock global cross-region inference
// profile ("global.anthropic.claude-sonnet-4-6"), which AWS prices as the
// model itself. Package cost's lookup falls back from it to the model's
// id.
const GlobalProfile = "global."

var aboveKey = regexp.MustCompile(`^input_cost_per_token_above_(\d{1,7})k_tokens$`)

// maxRate bounds a per-token rate: a dollar a token is a million dollars
// per million tokens, far above any model's price. A larger figure is an
// error in the file, not a price.
const maxRate = 1.0

// The rates read from an entry; every one of them is checked.
const (
	inputKey        = "input_cost_per_token"
	outputKey       = "output_cost_per_token"
	cacheReadKey    = "cache_read_input_token_cost"
	cacheWriteKey   = "cache_creation_input_token_cost"
	cacheWrite1hKey = "cache_creation_input_token_cost_above_1hr"
	reasoningKey    = "output_cost_per_reasoning_token"
)

// Parse selects and converts LiteLLM's entries, sorted by key, and says in
// notes what it changed or skipped. It returns an error for input that is
// not LiteLLM's price file (not a JSON object, or none of the models
// above), and for an entry of a kept provider whose rate is not a price (a
// string, a negative number, a number too large for a rate), naming the
// entry: such a rate is a damaged file, and pricing with a fallback would
// hide it. Entries of other providers are not read.
func Parse(data []byte) ([]Entry, []string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM from an editor
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, nil, err
	}
	if all == nil {
		return nil, nil, errors.New("null, not an object of models")
	}
	var notes []string
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	byKey := map[string]*Entry{}
	for _, k := range keys {
		var m map[string]json.RawMessage
		if json.Unmarshal(all[k], &m) != nil {
			continue // sample_spec's documentation strings, other metadata
		}
		prov, mode := str(m["litellm_provider"]), str(m["mode"])
		if !providers[prov] || !modes[mode] {
			continue
		}
		bedrock := strings.HasPrefix(prov, "bedrock")
		key, ok := canonical(k, bedrock)
		if !ok {
			continue
		}
		if m[inputKey] == nil || m[outputKey] == nil {
			notes = append(notes, fmt.Sprintf("%s: no per-token input and output rates, skipped", k))
			continue
		}
		e, err := convert(k, key, m, strings.Contains(key, "claude-"))
		if err != nil {
			return nil, notes, fmt.Errorf("model %q: %w", k, err)
		}
		if bedrock && e.Base.Input == 0 && e.Base.Output == 0 && e.Long == (Rates{}) {
			// LiteLLM's placeholder for a Bedrock model without a public
			// price (a gated preview): AWS bills every on-demand call,
			// so a zero would make paid calls look free. Unknown is the
			// truth. (The Gemini API's experimental models at zero were
			// free, and are kept.)
			notes = append(notes, fmt.Sprintf("%s: input and output priced at 0, skipped", k))
			continue
		}
		if old, dup := byKey[key]; dup {
			if !old.same(e) {
				notes = append(notes, fmt.Sprintf("%s and %s are both %s with different prices: kept %s", old.From, k, key, old.From))
			}
			continue
		}
		byKey[key] = e
	}

	var out []Entry
	for _, e := range byKey {
		if i := strings.IndexByte(e.Key, '/'); i > 0 {
			// A scoped entry priced like the bare one adds nothing: a
			// lookup of the scoped name falls back to the bare name.
			if bare, ok := byKey[e.Key[i+1:]]; ok && bare.same(e) {
				continue
			}
		}
		if rest, ok := strings.CutPrefix(e.Key, GlobalProfile); ok {
			// Likewise Bedrock's global inference profile, priced as the
			// model in its own region: a lookup of a global profile
			// falls back to the model's id. (The regional profiles,
			// "us.", "eu.", cost more for recent models, and have no
			// such fallback.)
			if bare, ok := byKey[rest]; ok && bare.same(e) {
				continue
			}
		}
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	for _, e := range out {
		if len(e.Derived) > 0 {
			notes = append(notes, fmt.Sprintf("%s: derived %s", e.Key, strings.Join(e.Derived, "; ")))
		}
	}
	if len(out) == 0 {
		return nil, notes, ErrNoModels
	}
	return out, notes, nil
}

// str is a JSON string's value, or "" for anything else.
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// canonical turns a LiteLLM key into the table's form, or says it is not
// one of ours.
func canonical(k string, bedrock bool) (string, bool) {
	key := strings.ToLower(strings.TrimSpace(k))
	// "vertex_ai/claude-opus-4-6@default" is LiteLLM's name for the
	// version Vertex serves by default: the plain name.
	key = strings.TrimSuffix(key, "@default")
	key = strings.ReplaceAll(key, "@", "-")
	if bedrock {
		// Bedrock's own model ids only: LiteLLM's "bedrock/<region>/..."
		// keys price regions and commitments a record cannot tell
		// apart, and its bare "claude-..." keys are not ids Bedrock
		// takes.
		return key, bedrockKey.MatchString(key)
	}
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

// rate reads one rate: absent is 0; anything but a finite number from 0 to
// maxRate is an error.
func rate(m map[string]json.RawMessage, k string) (float64, error) {
	raw, ok := m[k]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		s := string(raw)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return 0, fmt.Errorf("%s is %s, not a per-token price", k, s)
	}
	if v < 0 || v > maxRate || math.IsNaN(v) {
		return 0, fmt.Errorf("%s is %g, not a per-token price (0 to %g dollars)", k, v, maxRate)
	}
	return v, nil
}

func rates(m map[string]json.RawMessage, suffix string) (Rates, error) {
	var r Rates
	for _, x := range []struct {
		key string
		dst *float64
	}{
		{inputKey, &r.Input},
		{outputKey, &r.Output},
		{cacheReadKey, &r.CacheRead},
		{cacheWriteKey, &r.CacheWrite},
		{cacheWrite1hKey, &r.CacheWrite1h},
		{reasoningKey, &r.Reasoning},
	} {
		v, err := rate(m, x.key+suffix)
		if err != nil {
			return Rates{}, err
		}
		*x.dst = v
	}
	return r, nil
}

func convert(from, key string, m map[string]json.RawMessage, claude bool) (*Entry, error) {
	e := &Entry{Key: key, From: from}
	var err error
	if e.Base, err = rates(m, ""); err != nil {
		return nil, err
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
		long, err := rates(m, fmt.Sprintf("_above_%dk_tokens", n))
		if err != nil {
			return nil, err
		}
		// A zero above the threshold is LiteLLM's placeholder, not a
		// free tier (gemini-2.0-flash-exp has input 1.5e-07 and 0 above
		// 128k): the runtime reads zero as "the base rate", so a tier of
		// zeros is no tier.
		if long != (Rates{}) {
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
	return e, nil
}

// claudeCache fills r's cache rates from Anthropic's multipliers of the
// input rate: 5-minute write 1.25×, 1-hour write 2×, read 0.1×. Rates
// LiteLLM has are kept, except the 1-hour write, which LiteLLM lacks for
// many Claude models and has wrong for some old ones (claude-3-opus at
// 0.4× input, below its own 5-minute rate): it is always 2×.
func claudeCache(r *Rates) []string {
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
