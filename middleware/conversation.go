package middleware

import (
	"encoding/hex"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

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
// followed by its answer, each message reduced to its role and content
// (text, tool calls and their ids, tool results), not its bytes: an SDK
// sends an answer back in its request format, not as it arrived. A later
// call continues that conversation when its messages begin with such a
// state. The hashes chain from the call's user, so that two users'
// conversations are never joined.
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

// messageGroup is one message of a conversation, as compared: consecutive
// items of the assistant are one message (the Responses API sends an
// answer back as a message item and a function_call item per call).
type messageGroup struct {
	hash      uint64
	assistant bool
}

// messageHashes reduces a call's messages to one hash per message,
// appended to groups. What a message reduces to (its kind and its canonical hash)
// is cached by the hash of its bytes, so that the messages a conversation
// repeats in every call cost a walk over their bytes, a hash and a lookup:
// only a message not seen before is parsed. c.mu must be held.
//
// talk reports whether the call carries a conversation: at least one
// message with a role, or an item of the Responses API.
func (c *conversations) messageHashes(groups []messageGroup, args []byte) (_ []messageGroup, talk bool) {
	if len(args) == 0 {
		return groups, false
	}
	// Consecutive assistant items are one message: their keys, mixed, are
	// the group's, and their bytes are parsed together on a miss.
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
				h := canonicalItems(c.seed, pending)
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

// reduce parses one item of a call's messages: its kind, and its
// canonical hash as a message of its own.
func (c *conversations) reduce(item []byte) canonEntry {
	it := gjson.Parse(unsafe.String(&item[0], len(item))) // a view: item is not changed while it is read
	kind, message := itemKind(it)
	var m canonMessage
	m.start(c.seed)
	m.item(it)
	return canonEntry{hash: m.sum(), kind: uint8(kind), message: message}
}

const (
	kindOther = iota
	kindAssistant
	kindSkip // reasoning: SDKs may or may not send it back
)

// itemKind reads an item's role, else its type, in one pass over its
// members that stops at the role (which comes first in most shapes, before
// a long content). message reports whether the item is a message or an
// input item at all, not a bare value.
func itemKind(item gjson.Result) (kind int, message bool) {
	if !item.IsObject() {
		return kindOther, false
	}
	var role, typ string
	item.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			role, message = v.Str, true
			return false
		case "type":
			typ, message = v.Str, true
		}
		return true
	})
	switch role {
	case "assistant", "model":
		return kindAssistant, true
	case "":
	default:
		return kindOther, true
	}
	switch typ {
	case "reasoning":
		return kindSkip, true
	case "function_call", "custom_tool_call":
		return kindAssistant, true
	}
	return kindOther, message
}

// canonicalItems returns the hash of the role and content of items (one
// message); 0 for a system message with nothing left once the recorder's
// own guidance is taken out (the preview adds one where there was none).
func canonicalItems(seed maphash.Seed, items [][]byte) uint64 {
	var m canonMessage
	m.start(seed)
	for _, it := range items {
		m.item(gjson.Parse(unsafe.String(&it[0], len(it))))
	}
	return m.sum()
}

// answerHash is the canonical hash of a response's answer, as the next
// request will carry it: an assistant message with the text and the tool
// calls.
func (c *conversations) answerHash(res *providers.Result) (uint64, bool) {
	if res.Output == "" && len(res.ToolCalls) == 0 {
		return 0, false
	}
	var m canonMessage
	m.start(c.seed)
	m.role = "assistant"
	m.text.WriteString(res.Output)
	for _, tc := range res.ToolCalls {
		m.call(tc.ID, tc.Name, gjson.Result{Type: gjson.String, Str: tc.Arguments})
	}
	return m.sum(), true
}

// canonMessage hashes a message as compared: its role, then all its text
// run together (a string and a single text part are the same), then its
// tool calls, tool results and other parts in order. Thinking is left
// out: SDKs differ in whether they send it back.
type canonMessage struct {
	role  string
	text  maphash.Hash
	parts maphash.Hash
	empty bool // no text and no part written yet
}

func (m *canonMessage) start(seed maphash.Seed) {
	m.text.SetSeed(seed)
	m.parts.SetSeed(seed)
	m.empty = true
}

func (m *canonMessage) sum() uint64 {
	if m.empty && (m.role == "system" || m.role == "developer") {
		return 0
	}
	var h maphash.Hash
	h.SetSeed(m.text.Seed())
	h.WriteString(m.role)
	h.WriteByte(0)
	writeUint(&h, m.text.Sum64())
	writeUint(&h, m.parts.Sum64())
	return h.Sum64()
}

func writeUint(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}

// item reads one message or input item, in any provider's request shape.
func (m *canonMessage) item(it gjson.Result) {
	if !it.IsObject() {
		m.role = "user" // a bare string input
		m.content(it)
		return
	}
	role := it.Get("role").String()
	switch it.Get("type").String() {
	case "function_call", "custom_tool_call": // OpenAI Responses: a call the model made
		role = "assistant"
		args := it.Get("arguments")
		if !args.Exists() {
			args = it.Get("input")
		}
		m.call(it.Get("call_id").String(), it.Get("name").String(), args)
	case "function_call_output", "custom_tool_call_output":
		role = "tool"
		m.result(it.Get("call_id").String(), it.Get("output"))
	}
	if role == "model" {
		role = "assistant" // Gemini
	}
	if role != "" {
		m.role = role
	}
	it.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "content":
			m.content(v)
		case "parts": // Gemini
			v.ForEach(func(_, p gjson.Result) bool {
				m.part(p)
				return true
			})
		case "tool_calls": // OpenAI chat
			v.ForEach(func(_, tc gjson.Result) bool {
				f := tc.Get("function")
				m.call(tc.Get("id").String(), f.Get("name").String(), f.Get("arguments"))
				return true
			})
		case "function_call": // OpenAI chat, the legacy form
			m.call("", v.Get("name").String(), v.Get("arguments"))
		case "tool_call_id": // OpenAI chat: the tool's answer is the content
			m.empty = false
			m.parts.WriteString("tool_call_id\x00")
			m.parts.WriteString(v.String())
		}
		return true
	})
}

// content reads a message's content: a string, null, or a list of parts.
func (m *canonMessage) content(v gjson.Result) {
	switch {
	case v.Type == gjson.String:
		m.writeText(v.Str)
	case v.IsArray():
		v.ForEach(func(_, p gjson.Result) bool {
			m.part(p)
			return true
		})
	case v.Type == gjson.Null || !v.Exists():
	default:
		m.other(v)
	}
}

// part reads one content part of any provider.
func (m *canonMessage) part(p gjson.Result) {
	if p.Type == gjson.String {
		m.writeText(p.Str)
		return
	}
	if !p.IsObject() {
		m.other(p)
		return
	}
	switch p.Get("type").String() {
	case "text", "input_text", "output_text":
		m.writeText(p.Get("text").String())
		return
	case "thinking", "redacted_thinking", "reasoning":
		return
	case "tool_use", "server_tool_use": // Anthropic
		m.call(p.Get("id").String(), p.Get("name").String(), p.Get("input"))
		return
	case "tool_result": // Anthropic
		m.result(p.Get("tool_use_id").String(), p.Get("content"))
		return
	case "":
	default:
		m.other(p)
		return
	}
	// Gemini parts, which have no type.
	switch {
	case p.Get("thought").Bool():
	case p.Get("text").Exists():
		m.writeText(p.Get("text").String())
	case p.Get("functionCall").Exists():
		fc := p.Get("functionCall")
		m.call(fc.Get("id").String(), fc.Get("name").String(), fc.Get("args"))
	case p.Get("functionResponse").Exists():
		fr := p.Get("functionResponse")
		m.result(fr.Get("id").String()+"\x00"+fr.Get("name").String(), fr.Get("response"))
	default:
		m.other(p)
	}
}

// writeText adds text to the message's, without the recorder's own
// history guidance and preview (WithHistoryPreview), which differ from
// call to call and are not the conversation's.
func (m *canonMessage) writeText(s string) {
	if i := strings.Index(s, HistoryGuidance); i >= 0 {
		s = strings.TrimRight(s[:i], "\n")
	}
	if s != "" {
		m.empty = false
	}
	m.text.WriteString(s)
}

func (m *canonMessage) call(id, name string, args gjson.Result) {
	m.empty = false
	m.parts.WriteString("call\x00")
	m.parts.WriteString(id)
	m.parts.WriteByte(0)
	m.parts.WriteString(name)
	m.parts.WriteByte(0)
	canonJSON(&m.parts, args, 0)
}

func (m *canonMessage) result(id string, content gjson.Result) {
	m.empty = false
	m.parts.WriteString("result\x00")
	m.parts.WriteString(id)
	m.parts.WriteByte(0)
	var inner canonMessage
	inner.start(m.parts.Seed())
	inner.content(content)
	writeUint(&m.parts, inner.sum())
}

func (m *canonMessage) other(v gjson.Result) {
	m.empty = false
	m.parts.WriteString("other\x00")
	canonJSON(&m.parts, v, 0)
}

// canonJSON hashes a JSON value so that two encodings of the same value
// agree: object keys sorted, numbers by value, strings unescaped. A string
// that holds JSON (OpenAI's tool arguments) is hashed as that JSON, so
// arguments sent as a string and as an object agree. Deep nesting is cut
// at a bound, hashed as its bytes.
func canonJSON(h *maphash.Hash, v gjson.Result, depth int) {
	if depth > 64 {
		h.WriteString(v.Raw)
		return
	}
	switch v.Type {
	case gjson.String:
		if depth == 0 && gjson.Valid(v.Str) {
			if inner := gjson.Parse(v.Str); inner.IsObject() || inner.IsArray() {
				canonJSON(h, inner, depth+1)
				return
			}
		}
		h.WriteByte('s')
		h.WriteString(v.Str)
		h.WriteByte(0)
	case gjson.Number:
		h.WriteByte('n')
		h.WriteString(strconv.FormatFloat(v.Num, 'g', -1, 64))
		h.WriteByte(0)
	case gjson.True:
		h.WriteByte('t')
	case gjson.False:
		h.WriteByte('f')
	case gjson.Null:
		h.WriteByte('z')
	case gjson.JSON:
		if v.IsArray() {
			h.WriteByte('[')
			v.ForEach(func(_, e gjson.Result) bool {
				canonJSON(h, e, depth+1)
				return true
			})
			h.WriteByte(']')
			return
		}
		type member struct {
			key string
			val gjson.Result
		}
		var members []member
		v.ForEach(func(k, e gjson.Result) bool {
			members = append(members, member{k.String(), e})
			return true
		})
		slices.SortStableFunc(members, func(a, b member) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			}
			return 0
		})
		h.WriteByte('{')
		for i, mb := range members {
			if i+1 < len(members) && members[i+1].key == mb.key {
				continue // a later duplicate wins, as in encoding/json
			}
			h.WriteString(mb.key)
			h.WriteByte(0)
			canonJSON(h, mb.val, depth+1)
		}
		h.WriteByte('}')
	default: // absent
		h.WriteByte('-')
	}
}

// canonCache maps the hash of a message's bytes to what it reduces to,
// so that the messages a conversation repeats in every call are parsed
// once. Two generations bound it: when the newer fills, the older is
// dropped.
type canonCache struct {
	cur, old map[uint64]canonEntry
}

// canonEntry is what one message reduces to.
type canonEntry struct {
	hash    uint64 // canonical (canonicalItems)
	kind    uint8  // kindOther, kindAssistant, kindSkip
	message bool   // a message or an input item, not a bare value
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
