package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	openai "github.com/sashabaranov/go-openai"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// The demo's script: a small team's morning, four conversations of three
// users through the three SDKs, each attributed to its user and tagged
// with the feature that made it, as an application would
// (middleware.WithUser, WithTags), on a trace of its own. Every call goes
// through the recorder; after each, the demo waits for its record so
// that the screen reads in order.

// conversation is one of the script's conversations: whose, which
// features, and what is said.
type conversation struct {
	user string
	tags []string
	run  func(*demo, context.Context) error
}

// script is the morning, in order. The first conversation is the agent
// that shows what a record holds (a retry, a tool call, a history read, a
// nested call, streams, a redacted key, a failure); the others are what
// fills a viewer's list on an ordinary day.
var script = []conversation{
	{user: "maria", tags: []string{"travel-assistant"}, run: (*demo).travelAgent},
	{user: "tom", tags: []string{"support"}, run: (*demo).supportChat},
	{user: "li", tags: []string{"translate"}, run: (*demo).translation},
	{user: "tom", tags: []string{"support", "escalation"}, run: (*demo).escalation},
}

// traceOf names the trace of the script's i-th conversation.
func (d *demo) traceOf(i int) string { return fmt.Sprintf("%s-%d", d.run, i+1) }

// converse runs the script.
func (d *demo) converse(ctx context.Context) error {
	for i, c := range script {
		trace := d.traceOf(i)
		cctx := middleware.WithTrace(ctx, trace)
		cctx = middleware.WithUser(cctx, c.user)
		cctx = middleware.WithTags(cctx, c.tags...)
		d.con.heading(fmt.Sprintf("%s · %s · trace %s", c.user, strings.Join(c.tags, ", "), trace))
		if err := c.run(d, cctx); err != nil {
			return err
		}
	}
	return nil
}

// chat is a conversation through go-openai: the messages so far, and a
// question asked on them.
type chat struct {
	d    *demo
	ctx  context.Context
	msgs []openai.ChatCompletionMessage
}

func (d *demo) newChat(ctx context.Context, system string) *chat {
	return &chat{d: d, ctx: ctx, msgs: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}}
}

// ask sends q and shows the answer and its record.
func (c *chat) ask(q string) error {
	c.d.con.line("user", q)
	c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: q})
	resp, err := c.d.cl.oa.CreateChatCompletion(c.ctx, openai.ChatCompletionRequest{Model: c.d.cl.oaModel, Messages: c.msgs})
	if err != nil {
		return err
	}
	c.msgs = append(c.msgs, resp.Choices[0].Message)
	c.d.con.line("assistant", resp.Choices[0].Message.Content)
	return c.d.flush()
}

// travelAgent is the agent conversation: turns on one trace, a 429
// retried and folded into one record, a tool call whose generated code
// queries conversation_history, a nested call under it, streamed answers,
// a Claude turn, a pasted API key that is redacted, and a failing call.
func (d *demo) travelAgent(ctx context.Context) error {
	c := d.newChat(ctx, "You are a concise travel assistant.")

	// 1. A turn, and 2. one the fake server first answers with a 429.
	if err := c.ask("I'm going to Lisbon in May. What should I pack?"); err != nil {
		return err
	}
	d.con.note("the next call gets a 429 first; Retry waits and tries again: one record, attempts=2")
	if err := c.ask("And what's the weather like then?"); err != nil {
		return err
	}

	// 3. A tool call whose generated code queries conversation_history.
	q := "Summarise what I've asked so far."
	d.con.line("user", q)
	c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: q})
	toolCallID := middleware.NewCallID()
	resp, err := d.cl.oa.CreateChatCompletion(middleware.WithCallID(ctx, toolCallID), openai.ChatCompletionRequest{
		Model: d.cl.oaModel, Messages: c.msgs, Tools: []openai.Tool{runRubyTool},
		ToolChoice: "required",
	})
	if err != nil {
		return err
	}
	if err := d.flush(); err != nil {
		return err
	}
	msg := resp.Choices[0].Message
	c.msgs = append(c.msgs, msg)
	if len(msg.ToolCalls) == 0 {
		d.con.note("the model answered without calling the tool: " + clip(msg.Content, 100))
	}
	for _, tc := range msg.ToolCalls {
		d.con.lineIn(1, "tool call", tc.Function.Name+" "+tc.Function.Arguments)
		// 4. The tool runs. It reads the recorded history, as the
		// generated code asks, and makes a nested call under the tool call.
		result, err := d.runTool(middleware.WithParent(ctx, toolCallID), middleware.TraceFrom(ctx))
		if err != nil {
			return err
		}
		c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: result})
	}

	// 5. The answer, streamed.
	answer, err := d.streamOpenAI(ctx, c.msgs)
	if err != nil {
		return err
	}

	// 6. A streamed Gemini call on the same trace.
	if err := d.streamGemini(ctx, "Translate this packing advice into Portuguese, in one sentence: light layers, a rain jacket, comfortable shoes."); err != nil {
		return err
	}

	// 7. The agent asks Claude, through Anthropic's SDK, to check the answer.
	if err := d.askClaude(middleware.WithSpeaker(ctx, record.SpeakerAgent), "agent → claude",
		"You review travel advice. Be brief.",
		"Check this packing advice for Lisbon in May; say in one sentence what is missing: ", answer, "(the answer above)"); err != nil {
		return err
	}

	// 8. A pasted key: redacted before the record exists.
	d.con.note("the user pastes an API key; the record keeps [REDACTED] in its place")
	if err := c.ask("Is this key still valid? " + pastedKey); err != nil {
		return err
	}

	// 9. A call that fails: recorded with its error type, and the error
	// reaches the caller untouched.
	d.con.note("a call to a model that does not exist fails with 404: one record, error_type not_found")
	_, err = d.cl.oa.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "gpt-does-not-exist", Messages: c.msgs[len(c.msgs)-1:]})
	if err == nil {
		return errors.New("a call to an unknown model succeeded")
	}
	d.con.line("error", err.Error())
	return d.flush()
}

// supportChat is a customer's two questions to a support assistant.
func (d *demo) supportChat(ctx context.Context) error {
	c := d.newChat(ctx, "You are the support assistant of an online shop. Be brief and kind.")
	if err := c.ask("My order 1042 arrived damaged. Can I get a refund?"); err != nil {
		return err
	}
	return c.ask("How long will the refund take?")
}

// translation is one Gemini call from a translation feature.
func (d *demo) translation(ctx context.Context) error {
	q := "Translate into European Portuguese: Where is the train station?"
	d.con.line("user → gemini", q)
	resp, err := d.cl.gm.Models.GenerateContent(ctx, d.cl.gmModel, genai.Text(q), nil)
	if err != nil {
		return err
	}
	d.con.line("gemini", resp.Text())
	return d.flush()
}

// escalation has Claude sum up the support conversation for a person.
func (d *demo) escalation(ctx context.Context) error {
	return d.askClaude(ctx, "user → claude", "You write one-line handover notes for a support team.",
		"Summarise this complaint for the team in one line: ", "order 1042 arrived damaged; the customer asked for a refund and how long it takes.", "")
}

var runRubyTool = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name:        "run_ruby",
	Description: "Run Ruby code. The conversation so far is available as conversation_history, an array of hashes with :speaker, :method_name, :args and :outcome_summary.",
	Parameters:  []byte(`{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}`),
}}

// runTool stands in for the sandbox that would run the generated Ruby:
// it does what the code asks (the last three things the user said) on the
// recorder's history of the trace, then asks Gemini, as the tool, to
// condense them.
func (d *demo) runTool(ctx context.Context, trace string) (string, error) {
	asked := 0
	for _, r := range d.rec.History().Trace(trace) {
		if r.Speaker == record.SpeakerUser {
			asked++
		}
	}
	asked = min(asked, 3)
	ctx = middleware.WithSpeaker(ctx, record.SpeakerTool)
	prompt := fmt.Sprintf("Condense into one line the %d questions a traveller asked about Lisbon in May: what to pack, and the weather.", asked)
	d.con.line("tool → gemini", prompt)
	resp, err := d.cl.gm.Models.GenerateContent(ctx, d.cl.gmModel, genai.Text(prompt), nil)
	if err != nil {
		return "", err
	}
	d.con.line("gemini", resp.Text())
	if err := d.flush(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d questions: %s", asked, resp.Text()), nil
}

func (d *demo) streamOpenAI(ctx context.Context, msgs []openai.ChatCompletionMessage) (string, error) {
	stream, err := d.cl.oa.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: d.cl.oaModel, Messages: msgs, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return "", err
	}
	defer stream.Close()
	w := d.con.turn("assistant")
	var answer strings.Builder
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		for _, c := range chunk.Choices {
			w.WriteString(c.Delta.Content)
			answer.WriteString(c.Delta.Content)
		}
	}
	w.end("  (streamed)")
	stream.Close()
	return answer.String(), d.flush()
}

func (d *demo) streamGemini(ctx context.Context, q string) error {
	d.con.line("user → gemini", q)
	w := d.con.turn("gemini")
	for chunk, err := range d.cl.gm.Models.GenerateContentStream(ctx, d.cl.gmModel, genai.Text(q), nil) {
		if err != nil {
			return err
		}
		w.WriteString(chunk.Text())
	}
	w.end("  (streamed)")
	return d.flush()
}

// askClaude asks Claude, through Anthropic's SDK, the question q followed
// by about, showing shown in about's place when it is not empty.
func (d *demo) askClaude(ctx context.Context, who, system, q, about, shown string) error {
	if shown == "" {
		shown = about
	}
	d.con.line(who, q+shown)
	msg, err := d.cl.an.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     d.cl.anModel,
		MaxTokens: 300,
		System:    []anthropic.TextBlockParam{{Text: system}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(q + about))},
	})
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	d.con.line("claude", text.String())
	return d.flush()
}

// flush waits for the records of the calls made so far and shows them,
// after the conversation lines they belong to rather than in the middle of
// a streamed answer.
func (d *demo) flush() error {
	err := d.rec.Flush()
	d.mu.Lock()
	shown := d.pending
	d.pending = nil
	d.mu.Unlock()
	for _, r := range shown {
		d.con.print(r)
	}
	return err
}
