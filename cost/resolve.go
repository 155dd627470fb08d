package cost

import (
	"bytes"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/cost/internal/litellm"
)

// Name resolution. find turns a model name as a provider returned it into
// a table entry, trying candidates from the most exact to the least and
// stopping at the first the table has:
//
//  1. the whole name, canonical (trimmed, lower case, '@' as '-');
//  2. the model's own name, taken out of a resource path ("models/x",
//     ".../publishers/google/models/x") or a provider prefix ("azure/x",
//     "openai/x"), which gives the scope to try first: "gemini" for the
//     Gemini API's "models/x", "vertex_ai" for Vertex AI's paths;
//  3. that name with a version or date cut off its end, the longest such
//     prefix first, only at a '-' followed by a date or version, so that
//     gpt-4o-mini-2024-07-18 becomes gpt-4o-mini and never gpt-4o.
//
// A Bedrock model id is taken out of an ARN ("arn:aws:bedrock:...:
// inference-profile/us.anthropic.claude-opus-4-7") in step 2, and loses
// its version ("-v1:0", ":0") in step 3; a global inference profile
// ("global.anthropic.claude-sonnet-4-6") that the table does not list is
// priced as its model.
//
// Each of the names of 2 and 3 is tried in the scope the name gave, then
// bare, then in each scope of the table (gemini, vertex_ai, azure), so
// that a name only LiteLLM's prefixed keys carry (Azure's gpt-35-turbo)
// is found.
//
// find does not allocate for names up to 128 bytes: candidates are built
// in arrays on the stack and looked up as string(bytes), which the
// compiler does without a copy.
func (t *Table) find(model string) (entry, bool) {
	if len(t.prices) == 0 {
		return entry{}, false
	}
	if isCanonical(model) {
		// The common case, a response's model as it is: one lookup, no copy.
		if e, ok := t.prices[model]; ok {
			return e, true
		}
	}
	var buf [128]byte
	n := canonical(buf[:0], model)
	if len(n) == 0 {
		return entry{}, false
	}
	if e, ok := t.prices[string(n)]; ok {
		return e, true
	}
	scope, name := split(n)
	name = fineTuned(name)
	if len(name) == 0 {
		return entry{}, false
	}
	if e, ok := t.findName(scope, name); ok {
		return e, true
	}
	// Bedrock's global inference profile is priced as the model in its
	// own region; a regional one ("us.", "eu.") is not: it costs more for
	// recent models, so it is its own entry or unknown.
	if rest, ok := bytes.CutPrefix(name, []byte(litellm.GlobalProfile)); ok && bedrockID(rest) {
		return t.findName(scope, rest)
	}
	return entry{}, false
}

// findName looks name up in scope, then with a version cut off its end,
// the longest prefix first.
func (t *Table) findName(scope string, name []byte) (entry, bool) {
	var kb [160]byte
	if e, ok := t.inScopes(kb[:0], scope, name); ok {
		return e, true
	}
	bedrock := bedrockID(name)
	if bedrock {
		// "anthropic.claude-opus-4-6-v1:0" is listed as
		// "anthropic.claude-opus-4-6-v1".
		if i := bytes.LastIndexByte(name, ':'); i > 0 && digitRun(name[i+1:]) {
			if e, ok := t.inScopes(kb[:0], scope, name[:i]); ok {
				return e, true
			}
		}
	}
	for i := len(name) - 1; i > 0; i-- {
		if name[i] != '-' {
			continue
		}
		if bedrock && bedrockVersion(name[i+1:]) {
			// The version is cut first, then what is left like any
			// name: "anthropic.claude-sonnet-4-5-20991231-v1:0" is
			// "anthropic.claude-sonnet-4-5" when the table lacks the
			// date.
			return t.findName(scope, name[:i])
		}
		if versionTail(name[:i], name[i+1:]) {
			if e, ok := t.inScopes(kb[:0], scope, name[:i]); ok {
				return e, true
			}
		}
	}
	return entry{}, false
}

// bedrockID reports whether name has the shape of a Bedrock model id, a
// vendor and a dot before the model ("anthropic.claude-sonnet-4-6",
// "us.anthropic.claude-opus-4-7", "meta.llama3-70b-instruct-v1:0"): its
// first '.' comes before any '-', after a word of letters. No OpenAI,
// Gemini or Claude name has that shape ("gpt-5.4", "gemini-2.5-pro").
func bedrockID(name []byte) bool {
	for i, c := range name {
		switch {
		case c == '.':
			return i > 0
		case 'a' <= c && c <= 'z':
		default:
			return false
		}
	}
	return false
}

// bedrockVersion: Bedrock's model version, "v1", "v2:0".
func bedrockVersion(tail []byte) bool {
	v, ok := bytes.CutPrefix(tail, []byte("v"))
	if !ok {
		return false
	}
	major, minor, colon := bytes.Cut(v, []byte(":"))
	return digitRun(major) && (!colon || digitRun(minor))
}

// digitRun: one or more ASCII digits, and nothing else.
func digitRun(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// tableScopes are the prefixes the table's keys may carry, as LiteLLM's
// do: prices that differ from the bare name's (Azure's regional markups,
// the Gemini API against Vertex AI), or names only one provider uses.
var tableScopes = [...]string{"gemini", "vertex_ai", "azure"}

func (t *Table) inScopes(kb []byte, scope string, name []byte) (entry, bool) {
	if scope != "" {
		if e, ok := t.prices[string(scoped(kb, scope, name))]; ok {
			return e, true
		}
	}
	if e, ok := t.prices[string(name)]; ok {
		return e, true
	}
	for _, s := range tableScopes {
		if s == scope {
			continue
		}
		if e, ok := t.prices[string(scoped(kb, s, name))]; ok {
			return e, true
		}
	}
	return entry{}, false
}

func scoped(kb []byte, scope string, name []byte) []byte {
	kb = append(kb[:0], scope...)
	kb = append(kb, '/')
	return append(kb, name...)
}

// canonical appends the canonical form of s to dst: as canonicalKey, so
// that a table's key is always found by its own name. ASCII names, all of
// the providers' model names, take a path that does not allocate.
func canonical(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst, canonicalKey(s)...)
		}
	}
	for len(s) > 0 && asciiSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && asciiSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '@':
			c = '-'
		}
		dst = append(dst, c)
	}
	return dst
}

// isCanonical reports whether canonical would return s unchanged.
func isCanonical(s string) bool {
	if s == "" || asciiSpace(s[0]) || asciiSpace(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' || c == '@' {
			return false
		}
	}
	return true
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// split takes the model's name out of a resource path or a provider
// prefix, and says which scope that points at ("" for none).
func split(n []byte) (scope string, name []byte) {
	if bytes.HasPrefix(n, []byte("arn:")) {
		return "", arnModel(n)
	}
	if i := modelsSegment(n); i >= 0 {
		name = n[i+len("models/"):]
		switch {
		case i == 0:
			// The Gemini API names models "models/gemini-2.5-flash".
			return "gemini", name
		case bytes.Contains(n[:i], []byte("publishers/")) || bytes.HasPrefix(n, []byte("projects/")):
			// Vertex AI: "publishers/google/models/gemini-2.5-pro",
			// "projects/p/locations/l/publishers/anthropic/models/claude-opus-4@20250514".
			return "vertex_ai", name
		default:
			return "", name
		}
	}
	if j := bytes.IndexByte(n, '/'); j > 0 {
		switch string(n[:j]) {
		case "azure":
			return "azure", n[j+1:]
		case "gemini":
			return "gemini", n[j+1:]
		case "vertex_ai":
			return "vertex_ai", n[j+1:]
		case "openai", "anthropic", "bedrock":
			// First-party prices, and Bedrock's model ids, are the
			// table's bare names.
			return "", n[j+1:]
		}
	}
	return "", n
}

// arnModel returns the model id of a Bedrock ARN, as the Converse and
// InvokeModel APIs take in place of a model id:
// "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6"
// and "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-7"
// name their model. An application inference profile, a provisioned
// model or a custom model names only an id of the account's: nil, unknown.
func arnModel(n []byte) []byte {
	// arn:partition:service:region:account:resource; the resource's id
	// may hold ':' itself ("...-v1:0").
	rest := n
	for range 5 {
		i := bytes.IndexByte(rest, ':')
		if i < 0 {
			return nil
		}
		rest = rest[i+1:]
	}
	for _, kind := range []string{"foundation-model/", "inference-profile/"} {
		if id, ok := bytes.CutPrefix(rest, []byte(kind)); ok {
			return id
		}
	}
	return nil
}

// modelsSegment returns the index of the last "models/" that begins a
// path segment, or -1: "tunedmodels/x" is not a model of the table.
func modelsSegment(n []byte) int {
	const seg = "models/"
	for end := len(n); ; {
		i := bytes.LastIndex(n[:end], []byte(seg))
		if i < 0 {
			return -1
		}
		if i == 0 || n[i-1] == '/' {
			return i
		}
		end = i + len(seg) - 1
	}
}

// fineTuned reduces an OpenAI fine-tuned model,
// "ft:gpt-4o-mini-2024-07-18:org:suffix:id", to the name its price is
// listed under, "ft:gpt-4o-mini-2024-07-18". A fine-tuned model is never
// priced as its base model: OpenAI bills it at other rates.
func fineTuned(name []byte) []byte {
	if !bytes.HasPrefix(name, []byte("ft:")) {
		return name
	}
	if i := bytes.IndexByte(name[3:], ':'); i >= 0 {
		return name[:3+i]
	}
	return name
}

// versionTail reports whether tail, what follows a '-' after prefix, is a
// version or a date, so that prefix names the same model:
//
//	2024-08-06, 20250929, 0613, 001     gpt-4o-2024-08-06, claude-sonnet-4-5-20250929,
//	                                    gpt-4-0613, gemini-2.5-flash-001
//	05-20, 09-2025 after -preview/-exp  gemini-2.5-flash-preview-05-20 → gemini-2.5-flash-preview
//	preview- and a date                 gemini-2.5-flash-preview-05-20 → gemini-2.5-flash
//
// A preview's date is cut to the preview's name first; a dated preview is
// priced as the model only when the table has neither.
func versionTail(prefix, tail []byte) bool {
	if len(prefix) == 0 {
		return false
	}
	if fullDate(tail) {
		return true
	}
	if shortDate(tail) {
		return bytes.HasSuffix(prefix, []byte("-preview")) || bytes.HasSuffix(prefix, []byte("-exp"))
	}
	if rest, ok := bytes.CutPrefix(tail, []byte("preview-")); ok {
		return fullDate(rest) || shortDate(rest)
	}
	return false
}

// fullDate: 3, 4 or 8 digits, or 4-2-2 digits.
func fullDate(b []byte) bool {
	var l [3]int
	switch k := digitRuns(b, &l); {
	case k == 1:
		return l[0] == 3 || l[0] == 4 || l[0] == 8
	case k == 3:
		return l[0] == 4 && l[1] == 2 && l[2] == 2
	}
	return false
}

// shortDate: 2-2 or 2-4 digits (Gemini's preview dates, MM-DD and MM-YYYY).
func shortDate(b []byte) bool {
	var l [3]int
	return digitRuns(b, &l) == 2 && l[0] == 2 && (l[1] == 2 || l[1] == 4)
}

// digitRuns splits b at '-' into runs of digits and stores their lengths
// in l. It returns the number of runs, or 0 when b is anything else: empty
// runs, other bytes, more than three runs.
func digitRuns(b []byte, l *[3]int) int {
	k, n := 0, 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '-' {
			if n == 0 || k == len(l) {
				return 0
			}
			l[k], k, n = n, k+1, 0
			continue
		}
		if b[i] < '0' || b[i] > '9' {
			return 0
		}
		n++
	}
	return k
}
