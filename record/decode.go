package record

import (
	"fmt"
	"math"
	"strconv"
)

// decodeRecord decodes one record from b. It accepts what encoding/json
// would decode into Record's fields, with one deliberate difference: keys
// match exactly, not case-insensitively, so "Call_ID" is an unknown field
// and ignored. Null leaves a field at its zero value.
func decodeRecord(b []byte, r *Record) error {
	return decodeRecordSeen(b, r, nil)
}

// decodeRecordSeen is decodeRecord that also notes, in seen when it is not
// nil, which members of the record and of its nested objects the input
// held with a value other than null.
func decodeRecordSeen(b []byte, r *Record, seen *presence) error {
	d := decoder{scanner: scanner{b: b}, seen: seen}
	*r = Record{}
	var old legacyOutput
	err := d.object(func(key []byte) error {
		if seen != nil && !d.atNull() {
			seen.top.mark(key)
		}
		var err error
		switch string(key) {
		case "call_id":
			r.CallID, err = d.str("call_id")
		case "timestamp":
			r.Timestamp, err = d.str("timestamp")
		case "speaker":
			r.Speaker, err = d.str("speaker")
		case "method_name":
			r.MethodName, err = d.str("method_name")
		case "args":
			r.Args, err = d.raw()
		case "args_prefix":
			if d.null() {
				r.ArgsPrefix = nil
				return nil
			}
			if r.ArgsPrefix == nil {
				r.ArgsPrefix = new(ArgsPrefix)
			}
			err = d.argsPrefix(r.ArgsPrefix)
		case "kwargs":
			r.Kwargs, err = d.raw()
		case "outcome_summary":
			err = d.outcome(&r.Outcome)
		case "trace_id":
			r.TraceID, err = d.str("trace_id")
		case "trace_inferred":
			r.TraceInferred, err = d.bool("trace_inferred")
		case "parent_call_id":
			r.ParentCallID, err = d.str("parent_call_id")
		case "user_id":
			r.UserID, err = d.str("user_id")
		case "tags":
			r.Tags, err = d.strs("tags")
		case "metadata":
			r.Metadata, err = d.strMap("metadata")
		case "depth":
			if d.null() {
				r.Depth = nil
				return nil
			}
			var v int
			v, err = d.int("depth")
			r.Depth = &v
		case "duration_ms":
			r.DurationMS, err = d.float("duration_ms")
		case "time_to_first_chunk_ms":
			r.TimeToFirstChunkMS, err = d.float("time_to_first_chunk_ms")
		case "error_type":
			r.ErrorType, err = d.str("error_type")
		case "error_message":
			r.ErrorMessage, err = d.str("error_message")
		case "program_source":
			r.ProgramSource, err = d.str("program_source")
		case "output_message":
			if d.null() {
				r.Output = nil
				return nil
			}
			var raw []byte
			if raw, err = d.raw(); err == nil {
				if d.seen != nil && !d.seen.outputMembers(raw) {
					return nil // the reader names what it lacks
				}
				if r.Output == nil {
					r.Output = new(Message)
				}
				if err = r.Output.UnmarshalJSON(raw); err != nil {
					err = fmt.Errorf("field output_message: %w", err)
				}
			}
		case "output":
			old.text, err = d.str("output")
		case "tool_calls":
			old.calls, err = d.toolCalls(old.calls)
		case "reasoning":
			old.reasoning, err = d.str("reasoning")
		case "server_address":
			r.ServerAddress, err = d.str("server_address")
		case "server_port":
			r.ServerPort, err = d.int("server_port")
		case "service_tier":
			r.ServiceTier, err = d.str("service_tier")
		case "system_fingerprint":
			r.SystemFingerprint, err = d.str("system_fingerprint")
		case "artifact_hit":
			r.ArtifactHit, err = d.bool("artifact_hit")
		case "attempts":
			r.Attempts, err = d.int("attempts")
		case "hops":
			r.Hops, err = d.int("hops")
		case "model":
			r.Model, err = d.str("model")
		case "usage":
			if d.null() {
				r.Usage = nil
				return nil
			}
			if r.Usage == nil {
				r.Usage = new(Usage)
			}
			err = d.usage(r.Usage)
		case "cost":
			if d.null() {
				r.Cost = nil
				return nil
			}
			if r.Cost == nil {
				r.Cost = new(Cost)
			}
			err = d.cost(r.Cost)
		case "truncated":
			r.Truncated, err = d.strs("truncated")
		case "history_guidance":
			r.HistoryGuidance, err = d.bool("history_guidance")
		case "history_record_appended":
			r.HistoryRecordAppended, err = d.bool("history_record_appended")
		case "conversation_history_size":
			r.ConversationHistorySize, err = d.int("conversation_history_size")
		case "history_access_detected":
			r.HistoryAccessDetected, err = d.bool("history_access_detected")
		case "history_query_patterns":
			r.HistoryQueryPatterns, err = d.strs("history_query_patterns")
		case "version":
			r.Version, err = d.int("version")
		default:
			err = d.skipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.b) {
		return d.fail("data after the record")
	}
	if r.Output == nil {
		r.Output = old.message()
	}
	return nil
}

// legacyOutput is the answer as records kept it before the message model:
// output, tool_calls and reasoning, three fields of the record, read into
// one message.
type legacyOutput struct {
	text, reasoning string
	calls           []legacyToolCall
}

type legacyToolCall struct{ ID, Name, Arguments string }

func (o *legacyOutput) message() *Message {
	if o.text == "" && o.reasoning == "" && len(o.calls) == 0 {
		return nil
	}
	m := &Message{Role: RoleAssistant, Parts: []Part{}}
	if o.reasoning != "" {
		m.Parts = append(m.Parts, Part{Type: PartReasoning, Content: o.reasoning})
	}
	if o.text != "" {
		m.Parts = append(m.Parts, Part{Type: PartText, Content: o.text})
	}
	for _, c := range o.calls {
		m.Parts = append(m.Parts, Part{Type: PartToolCall, ID: c.ID, Name: c.Name, Arguments: ArgumentsJSON(c.Arguments)})
	}
	return m
}

type decoder struct {
	scanner
	seen *presence // nil: presence is not tracked
}

// atNull reports whether the value at d.i is the literal null.
func (d *decoder) atNull() bool {
	return len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null"
}

// presence notes which members a record's JSON held, by their place in the
// format's field list (see [Fields]): what a strict reader needs to tell a
// record from any JSON object.
type presence struct {
	top, prefix, outcome, usage, cost, output   members
	prefixSeen, usageSeen, costSeen, outputSeen bool // the optional objects were there
}

// outputMembers notes the members of an output_message, raw, and reports
// whether it has the required ones.
func (p *presence) outputMembers(raw []byte) bool {
	p.outputSeen = true
	p.output.bits = 0
	EachMember(raw, func(k, v []byte) bool {
		if string(v) != "null" {
			p.output.mark(k)
		}
		return true
	})
	return len(p.output.missing(nil, "")) == 0
}

func newPresence() presence {
	return presence{
		top:     members{list: fields},
		prefix:  members{list: fieldNamed("args_prefix").Fields},
		outcome: members{list: fieldNamed("outcome_summary").Fields},
		usage:   members{list: fieldNamed("usage").Fields},
		cost:    members{list: fieldNamed("cost").Fields},
		output:  members{list: fieldNamed("output_message").Fields},
	}
}

func fieldNamed(name string) Field {
	for _, f := range fields {
		if f.Name == name {
			return f
		}
	}
	panic("record: no field " + name) // the list and this file disagree: a test catches it
}

// members is a set of the members of one object of the format, one bit per
// entry of list.
type members struct {
	list []Field
	bits uint64
	next int // where the next key is looked for first
}

// mark notes key. The encoder writes members in the list's order, so the
// next key is almost always the one after the last: one comparison.
func (m *members) mark(key []byte) {
	for n := range m.list {
		i := m.next + n
		if i >= len(m.list) {
			i -= len(m.list)
		}
		if string(key) == m.list[i].Name {
			m.bits |= 1 << i
			m.next = i + 1
			return
		}
	}
}

// missing appends the names of the required members not marked, with
// prefix before each.
func (m *members) missing(dst []string, prefix string) []string {
	for i, f := range m.list {
		if f.Required && m.bits&(1<<i) == 0 {
			dst = append(dst, prefix+f.Name)
		}
	}
	return dst
}

// missing lists the required fields the record lacked, in the format's
// order, nested ones as "outcome_summary.status".
func (p *presence) missing() []string {
	out := p.top.missing(nil, "")
	if p.prefixSeen {
		out = p.prefix.missing(out, "args_prefix.")
	}
	if p.top.bits&(1<<p.top.index("outcome_summary")) != 0 {
		out = p.outcome.missing(out, "outcome_summary.")
	}
	if p.usageSeen {
		out = p.usage.missing(out, "usage.")
	}
	if p.costSeen {
		out = p.cost.missing(out, "cost.")
	}
	if p.outputSeen {
		out = p.output.missing(out, "output_message.")
	}
	return out
}

func (m *members) index(name string) int {
	for i, f := range m.list {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// typeError reports a value of the wrong JSON type for a field.
func (d *decoder) typeError(field, want string) error {
	// What is there may not be JSON at all ({"call_id": broken): then that
	// is the truth to tell, not the type it is not.
	probe := scanner{b: d.b, i: d.i}
	if err := probe.skipValue(); err != nil {
		return err
	}
	got := "value"
	if d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			got = "string"
		case c == '{':
			got = "object"
		case c == '[':
			got = "array"
		case c == 't' || c == 'f':
			got = "bool"
		case c == 'n':
			got = "null"
		default:
			got = "number"
		}
	}
	return fmt.Errorf("field %s: cannot use a JSON %s as %s", field, got, want)
}

// object calls field for each key of the object at d.i, positioned on the
// value; field must consume it.
func (d *decoder) object(field func(key []byte) error) error {
	d.ws()
	if d.i >= len(d.b) {
		return d.failEnd()
	}
	if d.b[d.i] != '{' {
		return d.fail("expected an object")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return nil
	}
	for {
		d.ws()
		if d.i >= len(d.b) {
			return d.failEnd()
		}
		if d.b[d.i] != '"' {
			return d.fail("expected a string key")
		}
		start := d.i
		escaped, err := d.stringEnd()
		if err != nil {
			return err
		}
		key := d.b[start+1 : d.i-1]
		if escaped {
			key = []byte(unquote(d.b[start:d.i], true, false))
		}
		if err := d.colon(); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) {
			return d.failEnd()
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.fail("expected ',' or '}'")
		}
	}
}

// arrayNext consumes what follows an array's element: a comma (more
// elements follow) or the closing bracket (more is false).
func (d *decoder) arrayNext() (more bool, err error) {
	d.ws()
	if d.i >= len(d.b) {
		return false, d.failEnd()
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return true, nil
	case ']':
		d.i++
		return false, nil
	}
	return false, d.fail("expected ',' or ']'")
}

func (d *decoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

func (d *decoder) str(field string) (string, error) {
	if d.null() {
		return "", nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", d.typeError(field, "a string")
	}
	start := d.i
	d.badUTF8 = false
	escaped, err := d.stringEnd()
	if err != nil {
		return "", err
	}
	return unquote(d.b[start:d.i], escaped, d.badUTF8), nil
}

func (d *decoder) strs(field string) ([]string, error) {
	if d.null() {
		return nil, nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return nil, d.typeError(field, "an array of strings")
	}
	d.i++
	var out []string
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return []string{}, nil
	}
	for {
		d.ws()
		s, err := d.str(field)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		more, err := d.arrayNext()
		if err != nil {
			return nil, err
		}
		if !more {
			return out, nil
		}
	}
}

// strMap decodes an object of strings; null gives nil, a later duplicate
// key wins, as encoding/json does.
func (d *decoder) strMap(field string) (map[string]string, error) {
	if d.null() {
		return nil, nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return nil, d.typeError(field, "an object of strings")
	}
	out := map[string]string{}
	err := d.object(func(key []byte) error {
		if d.null() {
			return nil
		}
		v, err := d.str(field + "." + string(key))
		out[string(key)] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *decoder) bool(field string) (bool, error) {
	switch {
	case d.null():
		return false, nil
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, nil
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, nil
	}
	return false, d.typeError(field, "a bool")
}

func (d *decoder) number(field, want string) ([]byte, bool, error) {
	if d.i >= len(d.b) || d.b[d.i] != '-' && (d.b[d.i] < '0' || d.b[d.i] > '9') {
		return nil, false, d.typeError(field, want)
	}
	start := d.i
	integer, err := d.skipNumber()
	return d.b[start:d.i], integer, err
}

func (d *decoder) int(field string) (int, error) {
	if d.null() {
		return 0, nil
	}
	tok, integer, err := d.number(field, "an integer")
	if err != nil {
		return 0, err
	}
	if !integer {
		return 0, fmt.Errorf("field %s: %s is not an integer", field, tok)
	}
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // math.MinInt64 has one more
	}
	var n uint64
	for _, c := range tok {
		digit := uint64(c - '0')
		if n > (limit-digit)/10 {
			return 0, fmt.Errorf("field %s: %s overflows an integer", field, tok)
		}
		n = n*10 + digit
	}
	if neg {
		return -int(n), nil
	}
	return int(n), nil
}

func (d *decoder) float(field string) (float64, error) {
	if d.null() {
		return 0, nil
	}
	tok, _, err := d.number(field, "a number")
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, fmt.Errorf("field %s: %s is out of range", field, tok)
	}
	return f, nil
}

// raw returns a copy of the next value's bytes: the input buffer is reused
// by readers, a record must not point into it.
func (d *decoder) raw() ([]byte, error) {
	start := d.i
	if err := d.skipValue(); err != nil {
		return nil, err
	}
	return append([]byte(nil), d.b[start:d.i]...), nil
}

func (d *decoder) outcome(o *Outcome) error {
	if d.null() {
		return nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.typeError("outcome_summary", "an object")
	}
	return d.object(func(key []byte) error {
		if d.seen != nil && !d.atNull() {
			d.seen.outcome.mark(key)
		}
		var err error
		switch string(key) {
		case "status":
			o.Status, err = d.str("outcome_summary.status")
		case "ok":
			o.OK, err = d.bool("outcome_summary.ok")
		case "error_type":
			o.ErrorType, err = d.str("outcome_summary.error_type")
		case "retriable":
			o.Retriable, err = d.bool("outcome_summary.retriable")
		case "value_class":
			o.ValueClass, err = d.str("outcome_summary.value_class")
		case "http_status":
			o.HTTPStatus, err = d.int("outcome_summary.http_status")
		case "finish_reason":
			o.FinishReason, err = d.str("outcome_summary.finish_reason")
		case "response_id":
			o.ResponseID, err = d.str("outcome_summary.response_id")
		default:
			err = d.skipValue()
		}
		return err
	})
}

func (d *decoder) argsPrefix(p *ArgsPrefix) error {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.typeError("args_prefix", "an object")
	}
	if d.seen != nil {
		d.seen.prefixSeen = true
	}
	err := d.object(func(key []byte) error {
		if d.seen != nil && !d.atNull() {
			d.seen.prefix.mark(key)
		}
		var err error
		switch string(key) {
		case "call_id":
			p.CallID, err = d.str("args_prefix.call_id")
		case "count":
			p.Count, err = d.int("args_prefix.count")
		case "crc32c":
			var v int
			v, err = d.int("args_prefix.crc32c")
			if err == nil && (v < 0 || v > math.MaxUint32) {
				err = fmt.Errorf("field args_prefix.crc32c: %d is not a CRC-32", v)
			}
			p.CRC32C = uint32(v)
		default:
			err = d.skipValue()
		}
		return err
	})
	if err == nil && p.Count < 0 {
		err = fmt.Errorf("field args_prefix.count: %d is negative", p.Count)
	}
	return err
}

func (d *decoder) cost(c *Cost) error {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.typeError("cost", "an object")
	}
	if d.seen != nil {
		d.seen.costSeen = true
	}
	return d.object(func(key []byte) error {
		if d.seen != nil && !d.atNull() {
			d.seen.cost.mark(key)
		}
		var err error
		switch string(key) {
		case "usd":
			c.USD, err = d.float("cost.usd")
		case "table":
			c.Table, err = d.str("cost.table")
		default:
			err = d.skipValue()
		}
		return err
	})
}

// toolCalls decodes the tool_calls of a record written before the
// message model: an array of tool call objects, into prev's place as
// encoding/json would: null gives nil and [] an empty list; otherwise the
// elements are decoded over those already in prev's array (a key given
// twice merges, as it does for an object), a null element leaving its
// call as it was.
func (d *decoder) toolCalls(prev []legacyToolCall) ([]legacyToolCall, error) {
	if d.null() {
		return nil, nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return nil, d.typeError("tool_calls", "an array of objects")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return []legacyToolCall{}, nil
	}
	held := prev[:cap(prev)]
	out := prev[:0]
	for i := 0; ; i++ {
		d.ws()
		var c legacyToolCall
		if i < len(held) {
			c = held[i]
		}
		if !d.null() {
			if d.i >= len(d.b) || d.b[d.i] != '{' {
				return nil, d.typeError("tool_calls", "an array of objects")
			}
			err := d.object(func(key []byte) error {
				if d.null() {
					return nil // leaves the member as it was, as encoding/json does
				}
				var err error
				switch string(key) {
				case "id":
					c.ID, err = d.str("tool_calls.id")
				case "name":
					c.Name, err = d.str("tool_calls.name")
				case "arguments":
					c.Arguments, err = d.str("tool_calls.arguments")
				default:
					err = d.skipValue()
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		out = append(out, c)
		more, err := d.arrayNext()
		if err != nil {
			return nil, err
		}
		if !more {
			return out, nil
		}
	}
}

func (d *decoder) usage(u *Usage) error {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.typeError("usage", "an object")
	}
	if d.seen != nil {
		d.seen.usageSeen = true
	}
	return d.object(func(key []byte) error {
		if d.seen != nil && !d.atNull() {
			d.seen.usage.mark(key)
		}
		var err error
		switch string(key) {
		case "input_tokens":
			u.InputTokens, err = d.int("usage.input_tokens")
		case "output_tokens":
			u.OutputTokens, err = d.int("usage.output_tokens")
		case "total_tokens":
			u.TotalTokens, err = d.int("usage.total_tokens")
		case "cached_tokens":
			u.CachedTokens, err = d.int("usage.cached_tokens")
		case "cache_write_tokens":
			u.CacheWriteTokens, err = d.int("usage.cache_write_tokens")
		case "cache_write_1h_tokens":
			u.CacheWrite1hTokens, err = d.int("usage.cache_write_1h_tokens")
		case "reasoning_tokens":
			u.ReasoningTokens, err = d.int("usage.reasoning_tokens")
		default:
			err = d.skipValue()
		}
		return err
	})
}
