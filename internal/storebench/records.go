package storebench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Words of the generated conversations.
var vocabulary = strings.Fields(`the order refund shipping invoice customer account password reset
delivery address payment card declined subscription plan upgrade downgrade cancel renewal
warranty return label tracking number package delayed warehouse courier support ticket
escalate manager apology discount coupon code expired balance credit statement monthly
annual billing cycle receipt tax region currency exchange rate limit quota usage report`)

// Text returns n bytes or so of words, drawn from rng.
func Text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}

// ConversationOptions shapes [Conversation].
type ConversationOptions struct {
	Trace         string
	Turns         int
	UserBytes     int // length of a user message; default 200
	AssistantByte int // length of an answer; default 800
	Start         time.Time
	User          string
	Model         string
	Tags          []string
	ErrorEvery    int // every ErrorEvery-th call fails (0: none)
}

// Conversation returns the records of a chat of opts.Turns calls (a nil
// rng is a fixed one): each
// sends the system prompt and every earlier turn again, as a chat API
// does, and adds one user message; its answer is its Output (kept, as a
// recorder keeps it by default) and is in the next call's args. Messages
// are in the message model, as a recorder writes them. It also returns the bytes of its unique text: the system prompt,
// every user message and answer once, as JSON elements.
func Conversation(rng *rand.Rand, o ConversationOptions) (recs []record.Record, unique int) {
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 1))
	}
	if o.UserBytes == 0 {
		o.UserBytes = 200
	}
	if o.AssistantByte == 0 {
		o.AssistantByte = 800
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	}
	if o.Model == "" {
		o.Model = "gpt-4o-mini"
	}
	// Messages as a recorder writes them (the message model), whatever
	// the provider: the store and the viewer read that, not a wire shape.
	msg := func(role, content string) []byte {
		m := record.TextMessage(role, content)
		return m.AppendJSON(nil)
	}
	// The elements so far, comma-separated: each call's args are them in
	// brackets, a copy rather than an encoding.
	system := msg("system", "You are the support assistant of an online shop. Answer briefly, cite the order, and never invent a policy.")
	elems := append([]byte(nil), system...)
	unique += len(system)
	for i := range o.Turns {
		user := msg("user", Text(rng, o.UserBytes))
		elems = append(append(elems, ','), user...)
		unique += len(user)
		args := make([]byte, 0, len(elems)+2)
		args = append(append(append(args, '['), elems...), ']')
		answer := record.TextMessage(record.RoleAssistant, Text(rng, o.AssistantByte))
		a := answer.AppendJSON(nil)
		r := record.Record{
			Output:     &answer, // kept by default, as a recorder does
			CallID:     fmt.Sprintf("%s-%05d", o.Trace, i),
			Timestamp:  record.FormatTime(o.Start.Add(time.Duration(i) * 7 * time.Second)),
			Speaker:    record.SpeakerUser,
			MethodName: "openai.chat.completions.create",
			Args:       args,
			Kwargs:     json.RawMessage(`{"model":"` + o.Model + `","temperature":0.2}`),
			Outcome:    record.Outcome{Status: record.StatusOK, OK: true, ValueClass: "chat.completion", HTTPStatus: 200, FinishReason: "stop"},
			TraceID:    o.Trace,
			UserID:     o.User,
			Tags:       o.Tags,
			DurationMS: 300 + float64(rng.IntN(2000)),
			Model:      o.Model,
			Usage:      &record.Usage{InputTokens: len(args) / 4, OutputTokens: len(a) / 4, TotalTokens: len(args)/4 + len(a)/4},
			Cost:       &record.Cost{USD: float64(len(args)+len(a)) * 1e-7, Table: "litellm-2026-11-20"},
			Attempts:   1,

			HistoryRecordAppended:   true,
			ConversationHistorySize: i,
		}
		if o.ErrorEvery > 0 && i%o.ErrorEvery == o.ErrorEvery-1 {
			r.Outcome = record.Failure(record.ErrorRateLimit)
			r.Outcome.HTTPStatus = 429
			r.ErrorType = record.ErrorRateLimit
			r.ErrorMessage = "Rate limit reached for requests"
			r.Usage, r.Cost, r.Output = nil, nil, nil
		}
		recs = append(recs, r)
		elems = append(append(elems, ','), a...)
		unique += len(a)
	}
	return recs, unique
}
