package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"strings"
	"sync"

	"github.com/llmhistory/llmhistory/record"
)

// Kind is a kind of personal data (or of secret) that a [Redactor]
// finds. Its String is the word a replaced span keeps: "EMAIL".
type Kind uint8

// The kinds of personal data found, each by its own detector.
const (
	Email  Kind = iota + 1 // an email address
	Phone                  // a phone number, international (+44 20 7946 0958) or in a common national form
	Card                   // a payment card number that passes the Luhn check
	IBAN                   // an international bank account number whose checksum holds
	IP                     // an IPv4 or IPv6 address (loopback and unspecified left alone)
	Secret                 // a credential: by a known prefix (sk-, AKIA, ghp_, xoxb-, AIza...), a named field, or its entropy
)

// precedence lists every kind, in the order they win when two findings
// cover the same bytes.
var precedence = [...]Kind{Secret, Card, IBAN, Email, Phone, IP}

// Kinds returns every kind, a secret first: when two findings cover the
// same bytes, the one whose kind comes first wins.
func Kinds() []Kind { return slices.Clone(precedence[:]) }

var kindNames = [...]string{Email: "EMAIL", Phone: "PHONE", Card: "CARD", IBAN: "IBAN", IP: "IP", Secret: "SECRET"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "UNKNOWN"
}

// rank orders kinds by precedence: lower wins a tie.
func (k Kind) rank() int { return slices.Index(precedence[:], k) }

// Option configures a [Redactor].
type Option func(*config)

type config struct {
	key   []byte
	kinds [len(kindNames)]bool
}

// WithKey makes every replaced span carry a keyed hash of the value it
// replaced, "[EMAIL:3f9a1c]" rather than "[EMAIL]": the first six hex
// digits of an HMAC-SHA256 under key of the value, normalized (an email
// in lower case, a number's digits). Two mentions of one value get the
// same mark, so a reader can still follow a customer through a
// conversation; without the key nobody can tell which value it was, as
// anyone could from a plain hash of an email by hashing guesses. Keep the
// key as you keep any secret; an empty key means no hash.
func WithKey(key []byte) Option {
	return func(c *config) { c.key = slices.Clone(key) }
}

// Only limits the redactor to the given kinds; by default it looks for
// all of them.
func Only(kinds ...Kind) Option {
	return func(c *config) {
		c.kinds = [len(kindNames)]bool{}
		for _, k := range kinds {
			if int(k) < len(c.kinds) {
				c.kinds[k] = true
			}
		}
	}
}

// Redactor finds personal data and secrets in text and JSON and replaces
// each with a mark of its kind. It is safe for concurrent use.
type Redactor struct {
	cfg  config
	macs sync.Pool // hash.Hash under cfg.key
}

// New returns a redactor; with no options it looks for every [Kind] and
// marks spans without a hash.
func New(opts ...Option) *Redactor {
	var cfg config
	for _, k := range precedence {
		cfg.kinds[k] = true
	}
	for _, o := range opts {
		o(&cfg)
	}
	r := &Redactor{cfg: cfg}
	if len(cfg.key) > 0 {
		r.macs.New = func() any { return hmac.New(sha256.New, r.cfg.key) }
	}
	return r
}

// PII returns a redactor of records for middleware.WithRedactor: it
// replaces the personal data and secrets (see [Kind]) in a record's args,
// kwargs, output, reasoning, tool calls, error message, program source,
// tags and metadata values, in place, before the recorder hands the
// record to its history and its sinks. It is [Redactor.Record] of
// [New](opts...).
//
// The recorder runs it on its own goroutine, after the call has returned
// to the caller: it costs the call nothing.
func PII(opts ...Option) func(*record.Record) {
	return New(opts...).Record
}

// Record replaces what r finds in rec, in place. What is kept is named in
// [PII]; the ids (call, trace, parent, user), the model, the server and
// the figures are left alone: the user id is how a person's history is
// found and erased, so give the recorder a pseudonymous one.
func (r *Redactor) Record(rec *record.Record) {
	rec.Args = r.Bytes(rec.Args)
	rec.Kwargs = r.Bytes(rec.Kwargs)
	rec.ErrorMessage = r.String(rec.ErrorMessage)
	rec.ProgramSource = r.String(rec.ProgramSource)
	r.output(rec)
	cloned := false
	for i, t := range rec.Tags {
		if s := r.String(t); s != t {
			if !cloned {
				rec.Tags, cloned = slices.Clone(rec.Tags), true // the call's context may share it
			}
			rec.Tags[i] = s
		}
	}
	var meta map[string]string
	for k, v := range rec.Metadata {
		if s := r.String(v); s != v {
			if meta == nil {
				meta = make(map[string]string, len(rec.Metadata))
				for k, v := range rec.Metadata {
					meta[k] = v
				}
			}
			meta[k] = s
		}
	}
	if meta != nil {
		rec.Metadata = meta // a copy: the map may be shared with the call's context
	}
}

// String returns s with what r finds replaced; s itself when it finds
// nothing. JSON in s stays valid JSON (see [Redactor.Bytes]).
func (r *Redactor) String(s string) string {
	if len(s) < minFinding {
		return s
	}
	out := r.Bytes([]byte(s))
	if len(out) == len(s) && string(out) == s {
		return s
	}
	return string(out)
}

// Bytes returns b with what r finds replaced: b itself when it finds
// nothing, else a new slice (b is never changed).
//
// b may be JSON, JSON Lines, a server-sent event stream or plain text.
// Inside JSON strings, escapes are read (an address written
// "jane\u0040example.com" is found) and a span is replaced by its mark
// between whole escapes; a card number written as a JSON number is
// replaced by its mark as a JSON string. So valid JSON in gives valid
// JSON out.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) < minFinding {
		return b
	}
	s := scanners.Get().(*scanner)
	s.reset(r, b)
	s.scan()
	out := b
	if len(s.edits) > 0 {
		out = s.apply()
	}
	s.release()
	scanners.Put(s)
	return out
}

// Find returns the spans r would replace in text, read as plain text (no
// JSON escapes), in order and not overlapping.
func (r *Redactor) Find(text []byte) []Match {
	return r.find(text, nil, false, nil)
}

// Match is a span of text that holds a value of a kind: text[Start:End].
type Match struct {
	Kind       Kind
	Start, End int
}

// mark returns the mark that replaces value, of kind k.
func (r *Redactor) mark(k Kind, value []byte) string {
	if r.macs.New == nil {
		return "[" + k.String() + "]"
	}
	mac := r.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write([]byte(k.String()))
	mac.Write([]byte{0})
	mac.Write(normalize(k, value))
	var sum [sha256.Size]byte
	h := mac.Sum(sum[:0])
	r.macs.Put(mac)
	return "[" + k.String() + ":" + hex.EncodeToString(h[:3]) + "]"
}

// normalize returns the form of a value its hash is taken of, so that
// one value written two ways gets one mark.
func normalize(k Kind, v []byte) []byte {
	switch k {
	case Email:
		return []byte(strings.ToLower(string(v)))
	case Phone, Card:
		out := make([]byte, 0, len(v))
		for _, c := range v {
			if c >= '0' && c <= '9' || c == '+' {
				out = append(out, c)
			}
		}
		return out
	case IBAN:
		out := make([]byte, 0, len(v))
		for _, c := range v {
			if c != ' ' {
				out = append(out, upper(c))
			}
		}
		return out
	case IP:
		if a, ok := parseIP(v); ok {
			return []byte(a.String())
		}
	}
	return v
}
