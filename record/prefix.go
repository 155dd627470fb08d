package record

import (
	"errors"
	"hash/crc32"
	"hash/maphash"
	"slices"
)

// A chat API is stateless: every call sends the whole conversation again,
// so the Args of a trace's calls repeat each other and a history that kept
// every record whole would grow with the square of the conversation. This
// file lets a record's Args be stored as the elements it adds to the Args
// of the trace's previous record.
//
// The history (Memory) finds the shared elements when a record is added:
// it keeps, for the newest record of each trace, where each element of its
// Args ends and a keyed hash of each, and compares the new Args with them
// without decoding or encoding anything. What it finds rides on the record
// to the sinks (argsLink): the JSONL sink, told to, writes only the new
// elements and an args_prefix naming the record they follow, and its
// readers put the Args back together (prefixResolver).

// ArgsPrefix says that a record's Args, as written in a file, leave out
// their first Count elements: they are the first Count elements of the
// Args of the earlier record CallID of the same trace. CRC32C is the
// CRC-32C (Castagnoli) of those elements as that record's Args hold them,
// separated by their commas, without the brackets: a reader checks it
// before it trusts the earlier record it found.
//
// Readers of this package put the Args back together, so a record read
// back has ArgsPrefix nil and its Args whole. ArgsPrefix is set only on a
// record whose earlier record could not be found or did not match (a line
// lost, a file cut or edited): its Args then hold only the elements it
// adds, and its Truncated names "args".
type ArgsPrefix struct {
	CallID string `json:"call_id"`
	Count  int    `json:"count"`
	CRC32C uint32 `json:"crc32c"`
}

// ErrUnresolvedPrefix is in the error of [ReadJSONL] when records named an
// earlier record for the start of their Args that was missing or did not
// match; each such record is returned marked (see [ArgsPrefix]).
var ErrUnresolvedPrefix = errors.New("record: the earlier record some args begin with is missing or damaged")

// minSharedBytes is the least shared prefix worth naming: args_prefix
// itself costs about 80 bytes.
const minSharedBytes = 128

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// argsLink is what the history found when it added a record: its Args
// begin with the first count elements of the Args of prev, the trace's
// previous record, which take the first size bytes after the bracket.
type argsLink struct {
	prev  string // call ID of the earlier record
	count int    // elements shared
	size  int    // their bytes in Args: Args[1 : 1+size]
	total int    // len(Args) then, to notice Args replaced since
}

// ArgsShaped reports whether r's Args are known to be as [Record.AppendJSON]
// writes them: a history ([Memory.Add]) checked them when it added r, and
// they are still those it checked. A sink may then take them as they are,
// without checking them again (the store does); false says nothing either
// way.
func (r *Record) ArgsShaped() bool { return r.link != nil && r.link.valid(r.Args) }

// valid reports whether args are still those the link was found in.
func (l *argsLink) valid(args []byte) bool {
	return l.total == len(args) && l.size+1 < len(args) && (args[1+l.size] == ',' || args[1+l.size] == ']')
}

// argsShape is what the history keeps of the newest record of a trace to
// compare the next one with: where each element of its Args ends, and a
// hash of each, keyed by a seed of this process so that no input can be
// made to collide.
type argsShape struct {
	callID string
	ends   []int32 // offset just past each element of Args
	sums   []uint64
}

var shapeSeed = maphash.MakeSeed()

// shapeArgs fills next with the shape of args and returns how many of its
// first elements are prev's first elements. Args are shaped only when
// they are a JSON array as AppendJSON writes it unchanged: valid, on one
// line, valid UTF-8, with nothing between its elements but commas; when
// not, ok is false. The shared elements are compared by position and hash
// only: they were validated when prev was shaped.
func shapeArgs(args []byte, prev, next *argsShape) (shared int, ok bool) {
	n := len(args)
	next.ends, next.sums = next.ends[:0], next.sums[:0]
	if n < 2 || args[0] != '[' || args[n-1] != ']' || n > 1<<31-1 {
		return 0, false
	}
	if prev != nil {
		start := 1
		for i, end := range prev.ends {
			e := int(end)
			if e >= n || (args[e] != ',' && args[e] != ']') || (args[e] == ']' && e != n-1) ||
				maphash.Bytes(shapeSeed, args[start:e]) != prev.sums[i] {
				break
			}
			next.ends = append(next.ends, end)
			next.sums = append(next.sums, prev.sums[i])
			shared++
			start = e + 1
		}
	}
	i := 1
	if shared > 0 {
		e := int(next.ends[shared-1])
		if args[e] == ']' {
			return shared, true
		}
		i = e + 1
	} else if n == 2 {
		return 0, true // []
	}
	s := scanner{b: args, i: i}
	for {
		if s.i >= n || isSpace(args[s.i]) {
			return 0, false
		}
		v0 := s.i
		if s.skipValue() != nil || s.i >= n {
			return 0, false
		}
		next.ends = append(next.ends, int32(s.i))
		next.sums = append(next.sums, maphash.Bytes(shapeSeed, args[v0:s.i]))
		switch args[s.i] {
		case ']':
			if s.i != n-1 || s.newline || s.badUTF8 {
				return 0, false
			}
			return shared, true
		case ',':
			s.i++
		default:
			return 0, false
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// link returns what r's Args share with the previous record of its trace,
// whose shape is prev, and leaves r's own shape in next. Args that are
// not in the form AppendJSON leaves unchanged are normalized first, so
// that what is shared is what a JSONL line will hold.
func link(r *Record, prev, next *argsShape) *argsLink {
	next.callID = r.CallID
	shared, ok := shapeArgs(r.Args, prev, next)
	if !ok {
		r.Args = appendRawContainer(nil, r.Args, '[')
		if shared, ok = shapeArgs(r.Args, prev, next); !ok {
			next.ends, next.sums = next.ends[:0], next.sums[:0]
			next.callID = ""
			return nil
		}
	}
	if shared == 0 || prev == nil {
		return nil
	}
	size := int(next.ends[shared-1]) - 1
	if size < minSharedBytes {
		return nil
	}
	return &argsLink{prev: prev.callID, count: shared, size: size, total: len(r.Args)}
}

// Bounds of what a JSONL writer and its readers remember to write and
// read args_prefix: the latest record of each of that many traces. A
// reader's bounds must be at least the writer's.
const (
	prefixTraces = 4096
	prefixBytes  = 64 << 20
)

// prefixResolver puts back together the Args of records read in the order
// they were written: it remembers the latest record of each trace, within
// the bounds a writer remembers them in.
type prefixResolver struct {
	latest *lru[resolved]
	// skipArgs checks each args_prefix against the record it names, as
	// ever, but puts no Args together: records come out with Args nil
	// (Reader.SkipArgs). A trace's latest record is then remembered by
	// where its elements end and the CRC-32C up to each end, and the sums
	// of a record that extends it are those of its prefix, carried on with
	// its own bytes: reading costs the file's length, not the square of a
	// conversation's.
	skipArgs bool
	// splitArgs checks each args_prefix as skipArgs does, and gives a
	// record's Args as their elements (elems) instead of one array: the
	// elements a record shares with the one it continues are that
	// record's, not copies (Reader.SplitArgs). A trace's latest record is
	// remembered by its elements too.
	splitArgs bool
	elems     [][]byte // with splitArgs, the elements of the record resolved last
}

// resolved is a trace's latest record as read: its whole Args, and where
// each element of them ends once it is known. With skipArgs or
// splitArgs, args is nil once a record named this one, and sums[k] is
// the CRC-32C of args[1:ends[k]]; with splitArgs, elems are its Args'
// elements.
type resolved struct {
	callID string
	args   []byte
	ends   []int32 // nil until a record named this one
	sums   []uint32
	elems  [][]byte
}

func newPrefixResolver() *prefixResolver {
	return &prefixResolver{latest: newLRU[resolved](prefixTraces, prefixBytes)}
}

// sumsOf sets x's ends and sums from its Args, which it then lets go.
func sumsOf(x *resolved) {
	x.ends = elementEnds(x.args, nil, 0)
	x.sums = make([]uint32, len(x.ends))
	crc, from := uint32(0), 1
	for k, e := range x.ends {
		crc = crc32.Update(crc, castagnoli, x.args[from:e])
		x.sums[k], from = crc, int(e)
	}
	x.args = nil
}

// resolve puts r's Args back together when it has an ArgsPrefix, and
// remembers r as its trace's latest record. It reports false when r named
// a record that is not the trace's latest, or whose elements do not match:
// then r keeps its ArgsPrefix and partial Args, "args" is added to its
// Truncated, and the records that follow it in its trace cannot be
// completed either.
func (p *prefixResolver) resolve(r *Record) bool {
	if r.ArgsPrefix == nil {
		x := resolved{callID: r.CallID, args: r.Args}
		if p.splitArgs {
			x.elems = elementsOf(r.Args)
			p.elems = x.elems
		}
		p.latest.put(r.TraceID, x, len(r.Args))
		if p.skipArgs || p.splitArgs {
			r.Args = nil
		}
		return true
	}
	ap := r.ArgsPrefix
	prev, ok := p.latest.get(r.TraceID)
	if !ok || prev.callID != ap.CallID || ap.Count < 1 {
		return p.unresolved(r)
	}
	if p.skipArgs || p.splitArgs {
		return p.check(r, prev)
	}
	if prev.ends == nil {
		prev.ends = elementEnds(prev.args, nil, 0)
	}
	if ap.Count > len(prev.ends) {
		return p.unresolved(r)
	}
	end := int(prev.ends[ap.Count-1])
	if crc32.Checksum(prev.args[1:end], castagnoli) != ap.CRC32C {
		return p.unresolved(r)
	}
	tail := r.Args // normalized by decoding: a compact JSON array
	full := make([]byte, 0, end+len(tail))
	full = append(full, prev.args[:end]...)
	ends := append(make([]int32, 0, ap.Count+4), prev.ends[:ap.Count]...)
	if len(tail) > 2 {
		full = append(full, ',')
		full = append(full, tail[1:]...)
		ends = elementEnds(tail, ends, end)
	} else {
		full = append(full, ']')
	}
	r.Args, r.ArgsPrefix = full, nil
	p.latest.put(r.TraceID, resolved{callID: r.CallID, args: full, ends: ends}, len(full))
	return true
}

// ArgsJoiner puts back together the Args of records read one line at a
// time, as [Reader] does, for programs that read lines themselves (to
// follow a file being written, say). Give it every record of the file,
// in order. It is not safe for concurrent use.
type ArgsJoiner struct{ p *prefixResolver }

// NewArgsJoiner returns a joiner that has seen no record.
func NewArgsJoiner() *ArgsJoiner { return &ArgsJoiner{p: newPrefixResolver()} }

// Join completes r's Args when r has an [ArgsPrefix], and remembers r for
// the records after it. It reports false when the earlier record r names
// was not seen or does not match: r then keeps its ArgsPrefix and only
// the Args it adds, and its Truncated names "args".
func (j *ArgsJoiner) Join(r *Record) bool { return j.p.resolve(r) }

// check is resolve for skipArgs and splitArgs: it checks r's args_prefix
// against prev, the latest record of r's trace, which it names, and
// remembers r in its place by sums alone (and its elements, with
// splitArgs).
func (p *prefixResolver) check(r *Record, prev resolved) bool {
	ap := r.ArgsPrefix
	if prev.sums == nil {
		sumsOf(&prev)
	}
	if ap.Count > len(prev.ends) || prev.sums[ap.Count-1] != ap.CRC32C {
		return p.unresolved(r)
	}
	end := prev.ends[ap.Count-1]
	// Every element the two share: prev's slices serve r when r takes
	// them all (a conversation going on), as prev is forgotten now and
	// what was handed out of its elements was clipped to its length.
	ends, sums := prev.ends[:ap.Count], prev.sums[:ap.Count]
	var elems [][]byte
	if p.splitArgs {
		elems = prev.elems[:ap.Count]
	}
	if ap.Count < len(prev.ends) {
		ends, sums, elems = slices.Clone(ends), slices.Clone(sums), slices.Clone(elems)
	}
	tail := r.Args // normalized by decoding: a compact JSON array
	size := int(end) + 1
	if len(tail) > 2 {
		// r's Args are prev's first elements, then "," and tail's: tail's
		// bytes from its "[" on, the "[" read as ",".
		size = int(end) + len(tail)
		crc := crc32.Update(sums[len(sums)-1], castagnoli, []byte{','})
		from := 1
		for k, e := range elementEnds(tail, nil, 0) {
			crc = crc32.Update(crc, castagnoli, tail[from:e])
			ends, sums = append(ends, end+e), append(sums, crc)
			if p.splitArgs {
				start := from
				if k > 0 {
					start++ // past the "," before it
				}
				elems = append(elems, tail[start:e])
			}
			from = int(e)
		}
	}
	r.Args, r.ArgsPrefix = nil, nil
	p.elems = slices.Clip(elems)
	p.latest.put(r.TraceID, resolved{callID: r.CallID, ends: ends, sums: sums, elems: elems}, size)
	return true
}

func (p *prefixResolver) unresolved(r *Record) bool {
	p.latest.forget(r.TraceID)
	if !hasString(r.Truncated, "args") {
		r.Truncated = append(r.Truncated, "args")
	}
	if p.splitArgs {
		p.elems = elementsOf(r.Args)
	}
	if p.skipArgs || p.splitArgs {
		r.Args = nil
	}
	return false
}

// elementsOf returns the elements of the JSON array args, views into it.
func elementsOf(args []byte) [][]byte {
	var elems [][]byte
	EachValidElement(args, func(v []byte) bool {
		elems = append(elems, v)
		return true
	})
	return slices.Clip(elems)
}

// elementEnds appends to ends the offset just past each element of the
// JSON array args, plus shift.
func elementEnds(args []byte, ends []int32, shift int) []int32 {
	if ends == nil {
		ends = make([]int32, 0, 8)
	}
	EachValidElement(args, func(v []byte) bool {
		// v is a view into args: its end is its offset there.
		ends = append(ends, int32(cap(args)-cap(v[len(v):])+shift))
		return true
	})
	return ends
}

func hasString(ss []string, s string) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}
