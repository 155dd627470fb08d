package middleware

import (
	"encoding/hex"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// DefaultConversations is how many conversations a recorder remembers for
// finding the one a call continues ([WithConversations]).
const DefaultConversations = 4096

// tailStates is how many of its latest states a conversation keeps: the
// last few turns can be answered again (a regenerated answer, a second
// candidate) and still be found.
const tailStates = 4

// conversations finds the conversation a call without a trace continues.
//
// A conversation's state after a call is a hash of the call's messages
// followed by its answer, messages of the message model (record.Message)
// that the providers read from any wire format, so that an answer and
// the copy of it the next request sends back are one message. Each is
// reduced to its role, text, tool calls and results, not its reasoning
// (SDKs differ in whether they send it back). A later call continues
// that conversation when its messages begin with such a state. The
// hashes chain from the call's user, so that two users' conversations
// are never joined.
//
// A call that failed leaves its messages (their chain), so that the same
// messages sent again, as a record of their own, join its conversation: a
// first turn has no answer for its retry to continue from.
//
// Only hashes are kept, never messages: for each of the most recent
// conversations (at most max), its last tailStates states and response
// ids, in a list ordered by use.
type conversations struct {
	max  int
	seed maphash.Seed

	mu      sync.Mutex
	states  map[uint64]*conversation // a state → the conversation that reached it, the latest
	byResp  map[string]*conversation // an OpenAI Responses response id → its conversation
	failed  map[uint64]*conversation // the messages of a call that failed → its conversation, until sent again
	byTrace map[string]*conversation
	newest  *conversation // the list of conversations, by last use
	oldest  *conversation
	canon   canonCache
}

type conversation struct {
	trace        string
	states       [tailStates]uint64
	responses    [tailStates]string
	failed       uint64 // the messages of its latest failed call, not yet sent again (0: none)
	nextState    int
	nextResponse int
	newer, older *conversation
}

func newConversations(max int, seed maphash.Seed) *conversations {
	return &conversations{
		max:     max,
		seed:    seed,
		states:  make(map[uint64]*conversation),
		byResp:  make(map[string]*conversation),
		byTrace: make(map[string]*conversation),
		failed:  make(map[uint64]*conversation),
	}
}

// turn is what a call tells about its conversation.
type turn struct {
	method   string // the call's method_name
	user     string
	trace    string // given by the caller, or taken from the retried attempt; "" to infer
	args     []byte // the call's messages (record.Args); nil when they were cut
	previous string // OpenAI Responses' previous_response_id
	res      *providers.Result
}

// place returns the call's trace, and whether it was inferred, and
// remembers where the call left its conversation. A call that carries no
// conversation (an embedding, a token count, an endpoint without
// messages) keeps the trace it was given, "" when none.
func (c *conversations) place(t turn) (trace string, inferred bool) {
	// On the stack: a conversation of a few dozen messages is hashed
	// without an allocation.
	var groups [32]messageGroup
	var chain [33]uint64
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.hashTurn(groups[:0], chain[:0], t.user, t.args)
	if !th.talk && t.previous == "" && !startsConversations(t.method) {
		return t.trace, false
	}
	sent := th.chain[len(th.groups)] // the call's messages, all of them
	var conv *conversation
	if t.trace != "" {
		conv = c.byTrace[t.trace]
	} else if conv = c.continued(&th, t.previous); conv == nil && t.args != nil {
		// The same messages as a call that failed: sent again, it
		// belongs where the failure was (a first turn has no answer to
		// continue from).
		conv = c.failed[sent]
	}
	if conv != nil {
		c.touch(conv)
	} else {
		trace = t.trace
		if trace == "" {
			trace = newTraceID()
		}
		conv = c.add(trace)
	}
	if conv.failed != 0 && c.failed[conv.failed] == conv {
		delete(c.failed, conv.failed) // sent again, or the conversation went on
	}
	conv.failed = 0
	if t.args != nil && t.res != nil && !t.res.Outcome.OK {
		conv.failed = sent
		c.failed[sent] = conv
	}
	if t.args != nil && t.res != nil && t.res.Outcome.OK {
		if answer, ok := c.answerHash(t.res); ok {
			c.remember(conv, mix(c.seed, sent, answer))
		}
	}
	if t.res != nil && t.res.Outcome.OK && isResponsesID(t.res.Outcome.ResponseID) {
		c.rememberResponse(conv, t.res.Outcome.ResponseID)
	}
	return conv.trace, t.trace == ""
}

// startsConversations reports whether a method's calls are conversation
// turns even when their input is a bare string: the Responses API's.
func startsConversations(method string) bool {
	return strings.HasSuffix(method, ".responses.create")
}

// find returns the trace of the conversation a request's messages
// continue, without remembering anything: what the history preview of a
// call without a trace shows.
func (c *conversations) find(user string, args []byte, previous string) (string, bool) {
	// On the stack: a conversation of a few dozen messages is hashed
	// without an allocation.
	var groups [32]messageGroup
	var chain [33]uint64
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.hashTurn(groups[:0], chain[:0], user, args)
	if !th.talk && previous == "" {
		return "", false
	}
	if conv := c.continued(&th, previous); conv != nil {
		return conv.trace, true
	}
	return "", false
}

// turnHashes is what a call's messages come to: one hash per message, and
// their chain from the call's user.
type turnHashes struct {
	groups []messageGroup
	chain  []uint64 // chain[i] stands for the first i messages
	talk   bool     // the call carries a conversation (see messageHashes)
}

// hashTurn hashes a call's messages and chains them from its user, in
// groups and chain (appended to). c.mu must be held.
func (c *conversations) hashTurn(groups []messageGroup, chain []uint64, user string, args []byte) turnHashes {
	th := turnHashes{chain: chain}
	th.groups, th.talk = c.messageHashes(groups, args)
	h := maphash.String(c.seed, user)
	th.chain = append(th.chain, h)
	for _, g := range th.groups {
		h = mix(c.seed, h, g.hash)
		th.chain = append(th.chain, h)
	}
	return th
}

// continued returns the conversation a call continues: the one its
// previous_response_id names, else the one whose state is the longest
// beginning of its messages (its own history, however far back it
// repeats others'). c.mu must be held.
func (c *conversations) continued(th *turnHashes, previous string) *conversation {
	if previous != "" {
		if conv := c.byResp[previous]; conv != nil {
			return conv
		}
	}
	for i := len(th.groups); i > 0; i-- {
		if th.groups[i-1].assistant {
			if conv := c.states[th.chain[i]]; conv != nil {
				return conv
			}
		}
	}
	return nil
}

// isResponsesID reports whether id is an OpenAI Responses API id, the only
// kind a later call names as its previous_response_id.
func isResponsesID(id string) bool { return len(id) > 5 && id[:5] == "resp_" }

func (c *conversations) add(trace string) *conversation {
	var conv *conversation
	if len(c.byTrace) >= c.max && c.oldest != nil {
		// Full: the oldest goes, and its room serves the new one.
		conv = c.oldest
		c.evict(conv)
		*conv = conversation{trace: trace}
	} else {
		conv = &conversation{trace: trace}
	}
	c.byTrace[trace] = conv
	conv.older = c.newest
	if c.newest != nil {
		c.newest.newer = conv
	}
	c.newest = conv
	if c.oldest == nil {
		c.oldest = conv
	}
	return conv
}

func (c *conversations) touch(conv *conversation) {
	if c.newest == conv {
		return
	}
	c.unlink(conv)
	conv.older, conv.newer = c.newest, nil
	c.newest.newer = conv
	c.newest = conv
}

func (c *conversations) unlink(conv *conversation) {
	if conv.newer != nil {
		conv.newer.older = conv.older
	} else {
		c.newest = conv.older
	}
	if conv.older != nil {
		conv.older.newer = conv.newer
	} else {
		c.oldest = conv.newer
	}
	conv.newer, conv.older = nil, nil
}

func (c *conversations) evict(conv *conversation) {
	c.unlink(conv)
	delete(c.byTrace, conv.trace)
	for _, s := range conv.states {
		if s != 0 && c.states[s] == conv {
			delete(c.states, s)
		}
	}
	for _, id := range conv.responses {
		if id != "" && c.byResp[id] == conv {
			delete(c.byResp, id)
		}
	}
	if conv.failed != 0 && c.failed[conv.failed] == conv {
		delete(c.failed, conv.failed)
	}
}

// remember records that conv stood at state; the most recent conversation
// to reach a state owns it.
func (c *conversations) remember(conv *conversation, state uint64) {
	if state == 0 {
		state = 1 // 0 marks an empty slot
	}
	if old := conv.states[conv.nextState]; old != 0 && c.states[old] == conv {
		delete(c.states, old)
	}
	conv.states[conv.nextState] = state
	conv.nextState = (conv.nextState + 1) % tailStates
	c.states[state] = conv
}

func (c *conversations) rememberResponse(conv *conversation, id string) {
	if old := conv.responses[conv.nextResponse]; old != "" && c.byResp[old] == conv {
		delete(c.byResp, old)
	}
	conv.responses[conv.nextResponse] = id
	conv.nextResponse = (conv.nextResponse + 1) % tailStates
	c.byResp[id] = conv
}

// newTraceID returns a fresh W3C trace id: 32 lowercase hex digits, not
// all zero.
func newTraceID() string {
	var b [16]byte
	for {
		lo, hi := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
		}
		if lo|hi != 0 {
			return hex.EncodeToString(b[:])
		}
	}
}

func mix(seed maphash.Seed, a, b uint64) uint64 {
	var buf [16]byte
	for i := range 8 {
		buf[i], buf[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
	}
	return maphash.Bytes(seed, buf[:])
}

// messageGroup is one message of a conversation, as compared:
// consecutive messages of the assistant are one (an SDK may send an
// answer back in pieces: genai's chat keeps a stream's chunks apart).
type messageGroup struct {
	hash      uint64
	assistant bool
}

// messageHashes reduces a call's messages (its Args, messages of the
// message model) to one hash per message, appended to groups. What a
// message reduces to (its kind and its hash) is cached by the hash of its
// bytes, so that the messages a conversation repeats in every call cost a
// walk over their bytes, a hash and a lookup: only a message not seen
// before is read. c.mu must be held.
//
// talk reports whether the call carries a conversation: at least one
// message.
func (c *conversations) messageHashes(groups []messageGroup, args []byte) (_ []messageGroup, talk bool) {
	if len(args) == 0 {
		return groups, false
	}
	// Consecutive assistant messages are one (genai's chat keeps a
	// stream's chunks apart): their keys, mixed, are the group's, and
	// they are read together on a miss.
	var pendingBuf [4][]byte
	pending := pendingBuf[:0]
	var pendingKey uint64
	flush := func() {
		switch len(pending) {
		case 0:
			return
		case 1:
			// A single item's entry was made when it was looked up.
		default:
			if e, ok := c.canon.get(pendingKey); ok {
				groups = append(groups, messageGroup{hash: e.hash, assistant: true})
			} else {
				h := c.groupHash(pending)
				c.canon.put(pendingKey, canonEntry{hash: h, kind: kindAssistant})
				groups = append(groups, messageGroup{hash: h, assistant: true})
			}
		}
		pending = pending[:0]
	}
	// Args are valid JSON, built by a provider: walked without checking.
	record.EachValidElement(args, func(item []byte) bool {
		key := maphash.Bytes(c.seed, item)
		e, ok := c.canon.get(key)
		if !ok {
			e = c.reduce(item)
			c.canon.put(key, e)
		}
		talk = talk || e.message
		switch e.kind {
		case kindSkip:
		case kindAssistant:
			if len(pending) == 0 {
				pendingKey = key
				// Alone, the group is this item.
				groups = append(groups, messageGroup{hash: e.hash, assistant: true})
			} else {
				if len(pending) == 1 {
					groups = groups[:len(groups)-1] // not alone after all
				}
				pendingKey = mix(c.seed, pendingKey, key)
			}
			pending = append(pending, item)
		default:
			flush()
			if e.hash != 0 {
				groups = append(groups, messageGroup{hash: e.hash})
			}
		}
		return true
	})
	flush()
	return groups, talk
}

// reduce reads one element of a call's messages as a message of the
// model: its kind, and its hash as compared (messageHash).
func (c *conversations) reduce(el []byte) canonEntry {
	m := record.MessageOf(el)
	h, skip := c.messageHash(&m)
	e := canonEntry{hash: h, message: m.Role != ""}
	switch {
	case skip:
		e.kind = kindSkip
	case m.Role == record.RoleAssistant:
		e.kind = kindAssistant
	}
	return e
}

const (
	kindOther = iota
	kindAssistant
	kindSkip // reasoning alone: SDKs may or may not send it back
)

// groupHash is the hash of consecutive assistant messages, read as the
// one message they are.
func (c *conversations) groupHash(items [][]byte) uint64 {
	var m record.Message
	for _, el := range items {
		one := record.MessageOf(el)
		m.Role, m.Parts = one.Role, append(m.Parts, one.Parts...)
	}
	h, _ := c.messageHash(&m)
	return h
}

// messageHash hashes a message as compared: its role, all its text run
// together (the recorder's own history guidance taken out), then its
// other parts as the model encodes them. Reasoning is left out: SDKs
// differ in whether they send it back. It returns 0 for a system message
// with nothing left once the guidance is out (the preview adds one where
// there was none), and skip for a message of reasoning alone.
func (c *conversations) messageHash(m *record.Message) (hash uint64, skip bool) {
	var text, parts maphash.Hash
	text.SetSeed(c.seed)
	parts.SetSeed(c.seed)
	empty, reasoning := true, false
	var enc []byte
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case record.PartReasoning:
			reasoning = true
		case record.PartText:
			s := p.Content
			if i := indexGuidance(s); i >= 0 {
				s = strings.TrimRight(s[:i], "\n")
			}
			if s != "" {
				empty = false
			}
			text.WriteString(s)
		default:
			empty = false
			one := record.Message{Parts: m.Parts[i : i+1]}
			enc = one.AppendJSON(enc[:0])
			parts.Write(enc)
		}
	}
	switch {
	case empty && reasoning && m.Role == record.RoleAssistant:
		return 0, true
	case empty && m.Role == record.RoleSystem:
		return 0, false
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(m.Role)
	h.WriteByte(0)
	writeUint(&h, text.Sum64())
	writeUint(&h, parts.Sum64())
	return h.Sum64(), false
}

// guidanceAnchor is the part of HistoryGuidance that indexGuidance looks
// for first, at guidanceAnchorAt in it: it begins with a byte that prose
// seldom has. strings.Index looks for the guidance's first two bytes,
// "Th", which English prose has every few dozen bytes, and compared the
// guidance at each: a third of the hash of a 4 KiB answer.
const guidanceAnchor = "_history: a list of JSON objects"

var guidanceAnchorAt = strings.Index(HistoryGuidance, guidanceAnchor)

// indexGuidance is strings.Index(s, HistoryGuidance).
func indexGuidance(s string) int {
	for i := guidanceAnchorAt; i < len(s); {
		j := strings.Index(s[i:], guidanceAnchor)
		if j < 0 {
			return -1
		}
		if start := i + j - guidanceAnchorAt; strings.HasPrefix(s[start:], HistoryGuidance) {
			return start
		}
		i += j + 1
	}
	return -1
}

// answerHash is the hash of a response's answer, as the next request
// will carry it.
func (c *conversations) answerHash(res *providers.Result) (uint64, bool) {
	if len(res.Output.Parts) == 0 {
		return 0, false
	}
	h, skip := c.messageHash(&res.Output)
	return h, !skip && h != 0
}

func writeUint(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}

// canonCache maps the hash of a message's bytes to what comparing needs
// of it, so that the messages a conversation repeats in every call are
// read once. Two generations bound it: when the newer fills, the older
// is dropped.
type canonCache struct {
	cur, old map[uint64]canonEntry
}

// canonEntry is what comparing conversations needs of one message.
type canonEntry struct {
	hash    uint64 // messageHash's; 0: a system message with nothing of the conversation's
	kind    uint8  // kindOther, kindAssistant, kindSkip
	message bool   // a message, not an element of another kind
}

const canonCacheSize = 1 << 13

func (c *canonCache) get(k uint64) (canonEntry, bool) {
	if v, ok := c.cur[k]; ok {
		return v, true
	}
	if v, ok := c.old[k]; ok {
		c.put(k, v)
		return v, true
	}
	return canonEntry{}, false
}

func (c *canonCache) put(k uint64, v canonEntry) {
	if c.cur == nil {
		c.cur = make(map[uint64]canonEntry)
	}
	if len(c.cur) >= canonCacheSize {
		c.old, c.cur = c.cur, make(map[uint64]canonEntry)
	}
	c.cur[k] = v
}

// argsForInference returns a call's messages when they can be compared:
// not when they were cut to fit, since a cut conversation does not begin
// as it did.
func argsForInference(call *providers.Call) []byte {
	if slices.Contains(call.Truncated, "args") {
		return nil
	}
	return call.Args
}

// previousResponse reads OpenAI Responses' previous_response_id from a
// call's kwargs.
func previousResponse(call *providers.Call) string {
	if len(call.Kwargs) == 0 {
		return ""
	}
	return gjson.GetBytes(call.Kwargs, "previous_response_id").String()
}
