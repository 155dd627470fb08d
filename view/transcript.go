package view

import (
	"hash/maphash"
	"slices"

	"github.com/llmhistory/llmhistory/record"
)

// A chat API is stateless: each call sends the whole conversation so far.
// A transcript shows each message once: for each call, the messages it
// adds to the call it continues, then the call itself, then its answer.
//
// The call a call continues is the earlier one whose messages (system
// messages aside, which a program may rewrite on every call) begin its
// own, the longest such; the answer of a call is the assistant messages
// that follow its messages in the call that continues it (the model's
// answer as the program sent it back), or else the answer the record
// kept (its Output). Messages are compared by their bytes as recorded:
// the providers read every message into one model, with one encoding.

// turnCall is one call of a transcript.
type turnCall struct {
	Call  *Call
	Index int // among the conversation's calls, from 0

	elems  [][]byte
	hashes []uint64
	system []bool
	roles  []string // quick role of each element, for answers

	base   int // index in the thread of the call it continues; -1: none
	shared int // non-system elements shared with base's messages and answer

	answer       []int // indices into the continuing call's elems
	answerFrom   *turnCall
	answerHashes []uint64

	// What is shown.
	System        []*message // its system messages, when new or changed
	SystemChanged bool       // they replace the ones of the call it continues
	New           []*message // the messages it adds
	Answer        []*message // its answer
	AnswerKnown   bool       // Answer came from a later call or the record
	Shown         bool       // inside the page (not context read around it)
}

var elemSeed = maphash.MakeSeed()

// contextCalls is how many earlier calls a call's base is looked for in.
const contextCalls = 32

// buildTranscript lays out calls (in start order). Those before
// shownFrom and from shownTo on are read for context only: what their
// neighbours continue and answer.
func buildTranscript(calls []Call, firstIndex, shownFrom, shownTo int) []*turnCall {
	tcs := make([]*turnCall, len(calls))
	for i := range calls {
		tc := &turnCall{Call: &calls[i], Index: firstIndex + i, base: -1, Shown: i >= shownFrom && i < shownTo}
		record.EachValidElement(calls[i].Record.Args, func(el []byte) bool {
			tc.elems = append(tc.elems, el)
			tc.hashes = append(tc.hashes, maphash.Bytes(elemSeed, el))
			role := quickRole(el)
			tc.roles = append(tc.roles, role)
			tc.system = append(tc.system, role == roleSystem)
			return true
		})
		tcs[i] = tc
	}
	for i, tc := range tcs {
		mine := nonSystem(tc)
		best, bestShared := -1, 0
		for j := i - 1; j >= 0 && j >= i-contextCalls; j-- {
			prev := tcs[j]
			seq := append(nonSystemHashes(prev), prev.answerHashes...)
			n := 0
			for n < len(seq) && n < len(mine) && seq[n] == tc.hashes[mine[n]] {
				n++
			}
			// A call continues one whose messages it holds whole; the
			// longest such wins, the latest among equals.
			if n > 0 && n >= len(nonSystem(prev)) && n > bestShared {
				best, bestShared = j, n
			}
		}
		tc.base, tc.shared = best, bestShared
		newFrom := bestShared
		if best >= 0 {
			prev := tcs[best]
			if prev.answerFrom == nil && bestShared == len(nonSystem(prev)) {
				// The assistant messages right after prev's own are its answer.
				k := newFrom
				for k < len(mine) && tc.roles[mine[k]] == roleAssistant {
					prev.answer = append(prev.answer, mine[k])
					prev.answerHashes = append(prev.answerHashes, tc.hashes[mine[k]])
					k++
				}
				if k > newFrom {
					prev.answerFrom = tc
					newFrom = k
				}
			}
		}
		for _, e := range mine[newFrom:] {
			tc.New = append(tc.New, parseMessage(tc.elems[e]))
		}
		// System messages: those that differ from the system messages of
		// the call it continues, or, when it continues none, of the call
		// before it (a program that starts over keeps its prompt).
		var baseSys []uint64
		switch {
		case best >= 0:
			baseSys = systemHashes(tcs[best])
		case i > 0:
			baseSys = systemHashes(tcs[i-1])
		}
		if mineSys := systemHashes(tc); !equalHashes(mineSys, baseSys) {
			tc.SystemChanged = len(baseSys) > 0
			for k, el := range tc.elems {
				if tc.system[k] && !slices.Contains(baseSys, tc.hashes[k]) {
					tc.System = append(tc.System, parseMessage(el))
				}
			}
		}
	}
	for _, tc := range tcs {
		if tc.answerFrom != nil {
			for _, k := range tc.answer {
				tc.Answer = append(tc.Answer, parseMessage(tc.answerFrom.elems[k]))
			}
			tc.AnswerKnown = true
		}
		if rec := recordedAnswer(tc.Call); rec != nil {
			if !tc.AnswerKnown {
				tc.Answer, tc.AnswerKnown = []*message{rec}, true
			} else if th := thinkingOf(rec); th != nil && !hasKind(tc.Answer, partThinking) {
				tc.Answer[0].Parts = append([]*part{th}, tc.Answer[0].Parts...)
			}
		}
	}
	pairTools(tcs)
	return tcs
}

func nonSystem(tc *turnCall) []int {
	out := make([]int, 0, len(tc.elems))
	for k := range tc.elems {
		if !tc.system[k] {
			out = append(out, k)
		}
	}
	return out
}

func nonSystemHashes(tc *turnCall) []uint64 {
	out := make([]uint64, 0, len(tc.elems))
	for k, h := range tc.hashes {
		if !tc.system[k] {
			out = append(out, h)
		}
	}
	return out
}

func systemHashes(tc *turnCall) []uint64 {
	var out []uint64
	for k, h := range tc.hashes {
		if tc.system[k] {
			out = append(out, h)
		}
	}
	return out
}

func equalHashes(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// quickRole reads an element's role as shown, without decoding the rest
// of it.
func quickRole(el []byte) string {
	switch r := roleOf(el); r {
	case record.RoleSystem, record.RoleUser, record.RoleAssistant, record.RoleTool:
		return r
	}
	return roleOther
}

// recordedAnswer is the answer a record kept (its Output, which the
// recorder keeps unless told not to); nil when none.
func recordedAnswer(c *Call) *message {
	if c.Record.Output == nil || len(c.Record.Output.Parts) == 0 {
		return nil
	}
	m := viewOf(*c.Record.Output)
	m.Role = roleAssistant
	return m
}

func thinkingOf(m *message) *part {
	for _, p := range m.Parts {
		if p.Kind == partThinking {
			return p
		}
	}
	return nil
}

func hasKind(ms []*message, kind string) bool {
	for _, m := range ms {
		for _, p := range m.Parts {
			if p.Kind == kind {
				return true
			}
		}
	}
	return false
}

// pairTools shows each tool result with the call that asked for it: by
// id, or, for results that name no id (Gemini's), by name, the earliest
// call of that name still unanswered.
func pairTools(tcs []*turnCall) {
	byID := map[string]*part{}
	byName := map[string][]*part{}
	visit := func(ms []*message) {
		for _, m := range ms {
			for _, p := range m.Parts {
				switch p.Kind {
				case partToolCall:
					if p.ID != "" {
						byID[p.ID] = p
					} else if p.Name != "" {
						byName[p.Name] = append(byName[p.Name], p)
					}
				case partToolResult:
					var call *part
					if p.ID != "" {
						call = byID[p.ID]
					} else if q := byName[p.Name]; len(q) > 0 {
						call, byName[p.Name] = q[0], q[1:]
					}
					if call != nil && call.Result == nil {
						call.Result, p.Paired = p, true
					}
				}
			}
		}
	}
	for _, tc := range tcs {
		visit(tc.New)
		visit(tc.Answer)
	}
}

// callMessages is every message of one call's Args, with its tool results
// shown next to their calls: the conversation as that call sent it.
func callMessages(args []byte) []*message {
	var out []*message
	record.EachValidElement(args, func(el []byte) bool {
		out = append(out, parseMessage(el))
		return true
	})
	pairTools([]*turnCall{{New: out}})
	return out
}
