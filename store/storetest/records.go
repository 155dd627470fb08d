// Package storetest is the conformance suite every backend of package
// store passes ([Run]), and the records the store's tests and benchmarks
// are made of.
package storetest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// FullRecord returns a record with every field of record.Fields() set to
// a value of its own, found by reflection, so that a field added to the
// record later is set too, and must round-trip through a store without a
// change to its schema. unset names the fields it could not set (a kind
// it does not know): a test fails on them.
func FullRecord(callID string) (r record.Record, unset []string) {
	r = record.Record{
		CallID:     callID,
		Timestamp:  record.FormatTime(time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)),
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       json.RawMessage(`[{"role":"system","content":"Be brief."},{"role":"user","content":"Summarize our last three turns."}]`),
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini","stream":true,"temperature":0.2}`),
		Version:    record.Version,
	}
	v := reflect.ValueOf(&r).Elem()
	for _, f := range record.Fields() {
		fv := v.FieldByName(f.GoName)
		if !fv.IsValid() {
			unset = append(unset, f.Name+" (no Go field "+f.GoName+")")
			continue
		}
		if !fv.IsZero() {
			continue
		}
		if !fill(fv, f.Name) {
			unset = append(unset, f.Name)
		}
	}
	return r, unset
}

// fill sets v to a non-zero value derived from name; false when it
// cannot.
func fill(v reflect.Value, name string) bool {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte(`{"filled":"` + name + `"}`))
		return true
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(7 + len(name)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(11 + len(name)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.25 + float64(len(name)))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if !fill(p.Elem(), name) {
			return false
		}
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			if !fill(s.Index(i), fmt.Sprint(name, i)) {
				return false
			}
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		if !fill(k, name+"-key") || !fill(e, name+"-value") {
			return false
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if !fill(v.Field(i), name+"."+v.Type().Field(i).Name) {
					return false
				}
			}
		}
	default:
		return false
	}
	return true
}

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
// does, and adds one user message; its answer is in the next call's
// args. It also returns the bytes of its unique text: the system prompt,
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
	msg := func(role, content string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"role": role, "content": content})
		return b
	}
	msgs := []json.RawMessage{msg("system", "You are the support assistant of an online shop. Answer briefly, cite the order, and never invent a policy.")}
	unique += len(msgs[0])
	for i := range o.Turns {
		user := msg("user", Text(rng, o.UserBytes))
		msgs = append(msgs, user)
		unique += len(user)
		args, _ := json.Marshal(msgs)
		answer := Text(rng, o.AssistantByte)
		r := record.Record{
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
			Usage:      &record.Usage{InputTokens: len(args) / 4, OutputTokens: len(answer) / 4, TotalTokens: len(args)/4 + len(answer)/4},
			Cost:       &record.Cost{USD: float64(len(args)+len(answer)) * 1e-7, Table: "litellm-2026-11-20"},
			Attempts:   1,

			HistoryRecordAppended:   true,
			ConversationHistorySize: i,
		}
		if o.ErrorEvery > 0 && i%o.ErrorEvery == o.ErrorEvery-1 {
			r.Outcome = record.Failure(record.ErrorRateLimit)
			r.Outcome.HTTPStatus = 429
			r.ErrorType = record.ErrorRateLimit
			r.ErrorMessage = "Rate limit reached for requests"
			r.Usage, r.Cost = nil, nil
		}
		recs = append(recs, r)
		a := msg("assistant", answer)
		msgs = append(msgs, a)
		unique += len(a)
	}
	return recs, unique
}
