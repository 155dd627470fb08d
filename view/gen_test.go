package view_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// A generated history, for the pictures and the benchmarks: conversations
// of several providers, interleaved as a busy service writes them, with
// users, tags, tool loops, thinking, errors and retries, streamed calls,
// and times spread over days.

type genOptions struct {
	Records    int
	Turns      int           // calls per conversation; 0: from 1 to 12
	Active     int           // conversations going on at once; default 40
	Users      int           // distinct users; default 8 named ones
	Span       time.Duration // from the first call to the last; default 2 days
	Start      time.Time
	ArgsPrefix bool // write as record.JSONLOptions.ArgsPrefix does
	Seed       uint64
}

var (
	genUsers  = []string{"ana", "bo", "cy", "dmitri", "eve", "farah", "gus", "hana"}
	genTags   = []string{"checkout", "support", "search", "onboarding", "eval", "web", "mobile"}
	genModels = []struct {
		model, method   string
		inPerM, outPerM float64 // $ per million tokens; 0: unpriced
	}{
		{"gpt-4o-mini-2024-07-18", "openai.chat.completions.create", 0.15, 0.6},
		{"gpt-4.1-2025-04-14", "openai.chat.completions.create", 2, 8},
		{"claude-sonnet-4-5-20250929", "anthropic.messages.create", 3, 15},
		{"gemini-2.5-flash", "gemini.models.generateContent", 0.3, 2.5},
		{"llama3.1:70b", "ollama.chat", 0, 0},
	}
	genQuestions = []string{
		"Where is my order %d? It was due yesterday.",
		"Can you compare the two plans for a team of %d people?",
		"Summarise this support ticket in two sentences: the customer cannot log in after resetting the password %d times.",
		"What should I pack for Lisbon in May? We stay %d nights.",
		"Write a SQL query that returns the top %d customers by revenue this quarter.",
		"Translate to Portuguese: the package will arrive in %d days.",
		"Why does the checkout page return a 502 for about %d%% of requests?",
		"Draft a friendly reply to a customer who waited %d minutes on hold.",
		"Explain the difference between p50 and p95 latency with %d calls as an example.",
		"Is there a cheaper model that would handle %d requests a minute?",
	}
	genAnswers = []string{
		"Your order shipped on Monday and is with the carrier; tracking shows delivery by Thursday.",
		"The Team plan costs less per seat once you pass ten people, and it adds single sign-on.",
		"The customer is locked out after several password resets; the reset emails arrive but the new password is refused.",
		"Light layers, a rain jacket for the evenings, and shoes that grip on the cobbles.",
		"SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE placed_at >= date_trunc('quarter', now()) GROUP BY 1 ORDER BY 2 DESC LIMIT 10;",
		"A encomenda chegará dentro de alguns dias.",
		"The 502s line up with the payment provider's timeouts: the gateway gives up after 10 s while the provider answers in 12.",
		"Thank you for your patience, and sorry for the wait: I have looked into your account and everything is sorted now.",
		"Half the calls finish faster than the p50; one in twenty is slower than the p95, which is what users notice.",
		"gpt-4o-mini handles that volume at a tenth of the price, with a slightly longer first chunk.",
	}
	genSystem = "You are the assistant of an online shop. Answer briefly, in the customer's language, and never invent an order status."
)

// writeHistory writes o.Records records to w.
func writeHistory(w io.Writer, o genOptions) error {
	if o.Active <= 0 {
		o.Active = 40
	}
	if o.Span <= 0 {
		o.Span = 48 * time.Hour
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 42))
	bw := bufio.NewWriterSize(w, 1<<20)
	sink := record.NewJSONLWith(bw, record.JSONLOptions{ArgsPrefix: o.ArgsPrefix, FlushInterval: -1, BufferSize: 1 << 20})
	// Records pass through a history, as a recorder's do: it sets their
	// telemetry, and finds what args_prefix writes.
	mem := record.NewMemory(4 * o.Active * 16)
	convs := make([]*genConv, o.Active)
	next := 0
	newConv := func() *genConv {
		next++
		c := &genConv{id: fmt.Sprintf("conv-%07d", next), model: rng.IntN(len(genModels)), turns: o.Turns}
		if c.turns <= 0 {
			c.turns = 1 + rng.IntN(12)
		}
		if o.Users > 0 {
			c.user = fmt.Sprintf("user-%d", rng.IntN(o.Users))
		} else {
			c.user = genUsers[rng.IntN(len(genUsers))]
		}
		c.tags = []string{genTags[rng.IntN(len(genTags))]}
		if rng.IntN(3) == 0 {
			c.tags = append(c.tags, genTags[rng.IntN(len(genTags))])
			if c.tags[0] == c.tags[1] {
				c.tags = c.tags[:1]
			}
		}
		c.tools = rng.IntN(4) == 0
		return c
	}
	for i := range convs {
		convs[i] = newConv()
	}
	step := o.Span / time.Duration(max(o.Records, 1))
	at := o.Start
	for i := range o.Records {
		k := rng.IntN(len(convs))
		c := convs[k]
		r := c.next(rng, at)
		r = mem.Add(r)
		if err := sink.Append(context.Background(), r); err != nil {
			return err
		}
		if c.done() {
			convs[k] = newConv()
		}
		at = at.Add(step + time.Duration(rng.Int64N(int64(step)/2+1)) - step/4)
		_ = i
	}
	if err := sink.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

type genConv struct {
	id    string
	user  string
	tags  []string
	model int
	turns int
	calls int
	tools bool
	msgs  []json.RawMessage
	sys   json.RawMessage
}

func (c *genConv) done() bool { return c.calls >= c.turns }

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// next is the conversation's next call, started at.
func (c *genConv) next(rng *rand.Rand, at time.Time) record.Record {
	m := genModels[c.model]
	provider, _, _ := strings.Cut(m.method, ".")
	q := fmt.Sprintf(genQuestions[rng.IntN(len(genQuestions))], 2+rng.IntN(40))
	a := genAnswers[rng.IntN(len(genAnswers))]
	toolTurn := c.tools && c.calls == 1

	// The question, and the answer of the call before, in the provider's shape.
	switch provider {
	case "anthropic":
		if c.calls == 0 {
			c.sys = raw(map[string]any{"system": true, "role": "system", "content": genSystem})
		}
		c.msgs = append(c.msgs, raw(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": q}}}))
	case "gemini":
		if c.calls == 0 {
			c.sys = raw(map[string]any{"systemInstruction": true, "role": "system", "parts": []any{map[string]any{"text": genSystem}}})
		}
		c.msgs = append(c.msgs, raw(map[string]any{"role": "user", "parts": []any{map[string]any{"text": q}}}))
	default:
		if c.calls == 0 {
			c.sys = raw(map[string]any{"role": "system", "content": genSystem})
		}
		c.msgs = append(c.msgs, raw(map[string]any{"role": "user", "content": q}))
	}
	args := append([]json.RawMessage{c.sys}, c.msgs...)
	for i, a := range args {
		args[i] = toModel(provider, a) // as the provider records it
	}

	in := 0
	for _, a := range args {
		in += len(a) / 4
	}
	out := 20 + rng.IntN(300)
	dur := 250 + float64(out)*(8+rng.Float64()*20) + rng.ExpFloat64()*300
	r := record.Record{
		CallID:     fmt.Sprintf("%s-%02d", c.id, c.calls),
		Timestamp:  record.FormatTime(at),
		Speaker:    record.SpeakerUser,
		MethodName: m.method,
		Args:       raw(args),
		Kwargs:     raw(map[string]any{"model": strings.SplitN(m.model, "-20", 2)[0], "temperature": 0.2}),
		Outcome:    record.Success("chat.completion"),
		TraceID:    c.id,
		Depth:      record.Int(0),
		UserID:     c.user,
		Tags:       c.tags,
		DurationMS: math.Round(dur*10) / 10,
		Attempts:   1,
		Model:      m.model,
		Usage:      &record.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out},
		Version:    record.Version,
	}
	if rng.IntN(3) == 0 {
		r.TimeToFirstChunkMS = math.Round((180+rng.Float64()*700)*10) / 10
		r.Kwargs = raw(map[string]any{"model": strings.SplitN(m.model, "-20", 2)[0], "temperature": 0.2, "stream": true})
	}
	if m.inPerM > 0 {
		r.Cost = &record.Cost{USD: (float64(in)*m.inPerM + float64(out)*m.outPerM) / 1e6, Table: "litellm-2026-07-24"}
	}
	switch roll := rng.IntN(100); {
	case roll < 3:
		r.Outcome = record.Failure(record.ErrorRateLimit)
		r.Outcome.HTTPStatus = 429
		r.ErrorType, r.ErrorMessage = record.ErrorRateLimit, "Rate limit reached for requests per minute. Please try again in 20s."
		r.Attempts, r.Usage, r.Cost = 3, nil, nil
	case roll < 5:
		r.Outcome = record.Failure(record.ErrorServer)
		r.Outcome.HTTPStatus = 500
		r.ErrorType, r.ErrorMessage = record.ErrorServer, "The server had an error while processing your request."
		r.Usage, r.Cost = nil, nil
	case roll < 12:
		r.Attempts = 2 // retried, then fine
		r.DurationMS += 800
	}
	c.calls++
	if !r.Outcome.OK {
		c.msgs = c.msgs[:len(c.msgs)-1] // the program asks again
		return r
	}
	// The answer, as the program will send it back.
	answerAt := len(c.msgs)
	switch {
	case toolTurn && provider == "openai":
		r.Outcome.FinishReason = "tool_calls"
		id := fmt.Sprintf("call_%s_%d", c.id, c.calls)
		c.msgs = append(c.msgs,
			raw(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "lookup_order", "arguments": `{"order_id":"1042","include":"tracking"}`}}}}),
			raw(map[string]any{"role": "tool", "tool_call_id": id, "content": `{"order":1042,"status":"shipped","carrier":"CTT","eta":"Thursday"}`}))
		c.turns++ // the tool's result goes back in one more call
	case toolTurn && provider == "anthropic":
		id := fmt.Sprintf("toolu_%s", c.id)
		c.msgs = append(c.msgs,
			raw(map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "thinking", "thinking": "The customer asks about an order: look it up before answering rather than guess.", "signature": "[base64 elided: 812 bytes]"},
				map[string]any{"type": "tool_use", "id": id, "name": "lookup_order", "input": map[string]any{"order_id": "1042"}}}}),
			raw(map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "shipped, arrives Thursday"}}}))
		c.turns++
	case provider == "anthropic":
		c.msgs = append(c.msgs, raw(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": a}}}))
	case provider == "gemini":
		c.msgs = append(c.msgs, raw(map[string]any{"role": "model", "parts": []any{map[string]any{"text": a}}}))
	default:
		c.msgs = append(c.msgs, raw(map[string]any{"role": "assistant", "content": a}))
	}
	// The answer, as the recorder keeps it: the first message the program
	// sends back.
	var answer record.Message
	if err := json.Unmarshal(toModel(provider, c.msgs[answerAt]), &answer); err == nil {
		r.Output = &answer
	}
	return r
}

// toModel reads a message of a provider's shape into the message model,
// as the provider does when it records a call.
func toModel(provider string, raw json.RawMessage) json.RawMessage {
	var m record.Message
	switch {
	case bytes.Contains(raw, []byte(`"system":true`)), bytes.Contains(raw, []byte(`"systemInstruction":true`)):
		m = record.TextMessage(record.RoleSystem, genSystem)
	case provider == "anthropic":
		m = anthropic.Message(raw)
	case provider == "gemini":
		m = gemini.Content(raw)
	default:
		m = openai.ChatMessage(raw)
	}
	return m.AppendJSON(nil)
}
