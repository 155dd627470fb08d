package middleware_test

import (
	"context"

	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// The conversations of TestConversationsFoundWithoutBeingTold: all begin
// with the same system prompt and the same first question, every answer
// differs, and some turns are tool loops (the model calls a tool, the
// program answers with its result, the model goes on).
const (
	numConversations = 20
	turnsEach        = 10
	systemPrompt     = "You are a terse assistant."
	firstQuestion    = "What is the weather like?"
)

// answerServer answers every request with a new answer whose id says
// which it is; when the last message asks for a tool, the answer is a
// tool call. It speaks OpenAI chat, Gemini and Anthropic.
type answerServer struct {
	*httptest.Server
	n atomic.Int64
}

func newAnswerServer(t *testing.T) *answerServer {
	s := &answerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := s.n.Add(1)
		tool := strings.Contains(lastText(body), "use the tool")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			msg := fmt.Sprintf(`{"role":"assistant","content":"answer %d"}`, n)
			finish := "stop"
			if tool {
				msg = fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"lookup","arguments":"{\"q\":%d}"}}]}`, n, n)
				finish = "tool_calls"
			}
			fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, n, msg, finish)
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			part := fmt.Sprintf(`{"text":"answer %d"}`, n)
			if tool {
				part = fmt.Sprintf(`{"functionCall":{"name":"lookup","args":{"q":%d}}}`, n)
			}
			fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":[%s]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2},"modelVersion":"gemini-2.0-flash","responseId":"g-%d"}`, part, n)
		case strings.HasSuffix(r.URL.Path, "/v1/messages"):
			content := fmt.Sprintf(`[{"type":"text","text":"answer %d"}]`, n)
			stop := "end_turn"
			if tool {
				content = fmt.Sprintf(`[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_%d","name":"lookup","input":{"q": %d}}]`, n, n)
				stop = "tool_use"
			}
			fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":%s,"stop_reason":%q,"usage":{"input_tokens":5,"output_tokens":2}}`, n, content, stop)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// lastText is the text of a request's last message, in any of the three
// shapes, as far as the test server needs it.
func lastText(body []byte) string {
	for _, path := range []string{"messages.@reverse.0", "contents.@reverse.0"} {
		if m := gjson.GetBytes(body, path); m.Exists() {
			return m.Raw
		}
	}
	return ""
}

// chatter is one SDK holding its conversations as a program does: a
// message list per conversation, the answer appended to it, and a tool's
// result when the model called one. turn makes one call of conversation
// c and returns the id of the response it got.
type chatter interface {
	turn(ctx context.Context, t *testing.T, c, turn int) string
}

func question(c, turn int) string {
	if turn == 0 {
		return firstQuestion
	}
	if turn%4 == 1 {
		return fmt.Sprintf("conversation %d turn %d: use the tool", c, turn)
	}
	return fmt.Sprintf("and then? (%d)", turn%3) // the same follow-ups in every conversation
}

type openaiChatter struct {
	client *goopenai.Client
	convs  [][]goopenai.ChatCompletionMessage
	tool   []bool // the last answer called a tool: the next call carries its result
}

func (o *openaiChatter) turn(ctx context.Context, t *testing.T, c, turn int) string {
	if o.tool[c] {
		last := o.convs[c][len(o.convs[c])-1]
		o.convs[c] = append(o.convs[c], goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleTool, ToolCallID: last.ToolCalls[0].ID, Content: "sunny"})
	} else {
		if turn == 0 {
			o.convs[c] = append(o.convs[c], goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: systemPrompt})
		}
		o.convs[c] = append(o.convs[c], goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: question(c, turn)})
	}
	resp, err := o.client.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: o.convs[c]})
	require.NoError(t, err)
	msg := resp.Choices[0].Message
	o.convs[c] = append(o.convs[c], msg)
	o.tool[c] = len(msg.ToolCalls) > 0
	return resp.ID
}

type genaiChatter struct {
	client *genai.Client
	convs  [][]*genai.Content
	tool   []bool
}

func (g *genaiChatter) turn(ctx context.Context, t *testing.T, c, turn int) string {
	if g.tool[c] {
		call := g.convs[c][len(g.convs[c])-1].Parts[0].FunctionCall
		g.convs[c] = append(g.convs[c], genai.NewContentFromFunctionResponse(call.Name, map[string]any{"weather": "sunny"}, genai.RoleUser))
	} else {
		g.convs[c] = append(g.convs[c], genai.NewContentFromText(question(c, turn), genai.RoleUser))
	}
	resp, err := g.client.Models.GenerateContent(ctx, "gemini-2.0-flash", g.convs[c], &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(systemPrompt, genai.RoleUser),
	})
	require.NoError(t, err)
	answer := resp.Candidates[0].Content
	g.convs[c] = append(g.convs[c], answer)
	g.tool[c] = answer.Parts[0].FunctionCall != nil
	return resp.ResponseID
}

type anthropicChatter struct {
	client anthropic.Client
	convs  [][]anthropic.MessageParam
	tool   []bool
}

func (a *anthropicChatter) turn(ctx context.Context, t *testing.T, c, turn int) string {
	if a.tool[c] {
		last := a.convs[c][len(a.convs[c])-1]
		id := last.Content[1].OfToolUse.ID
		a.convs[c] = append(a.convs[c], anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "sunny", false)))
	} else {
		a.convs[c] = append(a.convs[c], anthropic.NewUserMessage(anthropic.NewTextBlock(question(c, turn))))
	}
	resp, err := a.client.Messages.New(ctx, anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 100, Messages: a.convs[c],
		System: []anthropic.TextBlockParam{{Text: systemPrompt}},
	})
	require.NoError(t, err)
	a.convs[c] = append(a.convs[c], resp.ToParam())
	a.tool[c] = resp.StopReason == anthropic.StopReasonToolUse
	return resp.ID
}

// TestConversationsFoundWithoutBeingTold: 20 conversations of 10 turns,
// made through each SDK in a random interleaving with no WithTrace, all
// starting alike, come out as 20 traces of 10 calls each, in order, tool
// loops included.
func TestConversationsFoundWithoutBeingTold(t *testing.T) {
	sdks := map[string]func(url string, hc *http.Client) chatter{
		"go-openai": func(url string, hc *http.Client) chatter {
			cfg := goopenai.DefaultConfig("sk-test-0123456789abcdefghij")
			cfg.BaseURL, cfg.HTTPClient = url+"/v1", hc
			return &openaiChatter{client: goopenai.NewClientWithConfig(cfg), convs: make([][]goopenai.ChatCompletionMessage, numConversations), tool: make([]bool, numConversations)}
		},
		"genai": func(url string, hc *http.Client) chatter {
			client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "AIzaTest", Backend: genai.BackendGeminiAPI, HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
			if err != nil {
				panic(err)
			}
			return &genaiChatter{client: client, convs: make([][]*genai.Content, numConversations), tool: make([]bool, numConversations)}
		},
		"anthropic": func(url string, hc *http.Client) chatter {
			return &anthropicChatter{
				client: anthropic.NewClient(anthropicoption.WithBaseURL(url), anthropicoption.WithAPIKey("sk-ant-test"), anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0)),
				convs:  make([][]anthropic.MessageParam, numConversations), tool: make([]bool, numConversations),
			}
		},
	}
	for name, newChatter := range sdks {
		t.Run(name, func(t *testing.T) {
			srv := newAnswerServer(t)
			rec := middleware.NewRecorder()
			defer rec.Close()
			ch := newChatter(srv.URL, rec.Client(nil))

			// Which call was which: the response id names it.
			type place struct{ conv, turn int }
			truth := map[string]place{}
			next := make([]int, numConversations)
			rng := rand.New(rand.NewPCG(7, 11))
			for left := numConversations * turnsEach; left > 0; left-- {
				c := rng.IntN(numConversations)
				for next[c] == turnsEach {
					c = (c + 1) % numConversations
				}
				id := ch.turn(context.Background(), t, c, next[c])
				truth[id] = place{c, next[c]}
				next[c]++
			}

			recs := rec.History().Records()
			require.Len(t, recs, numConversations*turnsEach)
			byTrace := map[string][]place{}
			for _, r := range recs {
				require.True(t, r.TraceInferred, "no trace was given")
				p, ok := truth[r.Outcome.ResponseID]
				require.True(t, ok, "record of response %q", r.Outcome.ResponseID)
				byTrace[r.TraceID] = append(byTrace[r.TraceID], p)
			}
			assert.Len(t, byTrace, numConversations, "one trace per conversation")
			for trace, calls := range byTrace {
				require.Len(t, calls, turnsEach, "trace %s", trace)
				for i, p := range calls {
					assert.Equal(t, place{calls[0].conv, i}, p, "trace %s holds one conversation's turns, in order", trace)
				}
			}
		})
	}
}

// A conversation is a user's: the same messages under two users are two
// conversations, and each goes on as its own.
func TestConversationsOfDifferentUsersAreNeverJoined(t *testing.T) {
	srv := newAnswerServer(t)
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	send := func(ctx context.Context, messages string) {
		resp, err := post(t, client, ctx, srv.URL+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":`+messages+`}`)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	alice := middleware.WithUser(context.Background(), "alice")
	bob := middleware.WithUser(context.Background(), "bob")
	send(alice, `[{"role":"user","content":"hi"}]`)
	answer := `{"role":"assistant","content":"answer 1"}`
	// Bob sends Alice's conversation on: it is not his.
	send(bob, `[{"role":"user","content":"hi"},`+answer+`,{"role":"user","content":"go on"}]`)
	send(alice, `[{"role":"user","content":"hi"},`+answer+`,{"role":"user","content":"go on"}]`)
	recs := rec.History().Records()
	require.Len(t, recs, 3)
	assert.NotEqual(t, recs[0].TraceID, recs[1].TraceID, "bob does not join alice")
	assert.Equal(t, recs[0].TraceID, recs[2].TraceID, "alice goes on")
	assert.Equal(t, "bob", recs[1].UserID)
}

// Messages are compared by role and content, not bytes: an absent content
// and null are the same, and so are a string and a single text part; the
// tool call's arguments compare as JSON.
func TestConversationsCompareContentNotBytes(t *testing.T) {
	srv := newAnswerServer(t)
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	send := func(messages string) record.Record {
		resp, err := post(t, client, context.Background(), srv.URL+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":`+messages+`}`)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		recs := rec.History().Records()
		return recs[len(recs)-1]
	}
	first := send(`[{"role":"user","content":"please use the tool"}]`) // answered with call_1, arguments {"q":1}
	// The answer sent back with no content key, the arguments spaced
	// differently, and the question as a text part.
	second := send(`[{"role":"user","content":[{"type":"text","text":"please use the tool"}]},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{ \"q\": 1 }"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"sunny"}]`)
	assert.Equal(t, first.TraceID, second.TraceID)
	// A different tool call id is a different answer: a new conversation.
	third := send(`[{"role":"user","content":"please use the tool"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]},` +
		`{"role":"tool","tool_call_id":"call_9","content":"sunny"}]`)
	assert.NotEqual(t, first.TraceID, third.TraceID)
}

// When two earlier calls fit equally (the same answer twice), the most
// recent wins.
func TestConversationsMostRecentWins(t *testing.T) {
	fixed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatResponse) // always "Hi!"
	}))
	defer fixed.Close()
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	for range 2 {
		resp, err := post(t, client, context.Background(), fixed.URL+"/v1/chat/completions", chatBody)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := post(t, client, context.Background(), fixed.URL+"/v1/chat/completions",
		`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi!"},{"role":"user","content":"More"}]}`)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	recs := rec.History().Records()
	require.Len(t, recs, 3)
	assert.NotEqual(t, recs[0].TraceID, recs[1].TraceID, "two conversations that began alike")
	assert.Equal(t, recs[1].TraceID, recs[2].TraceID, "the later one is continued")
}

// OpenAI Responses' previous_response_id joins that response's
// conversation outright.
func TestConversationsPreviousResponseID(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"resp_%d","object":"response","status":"completed","model":"gpt-4o","output":[{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"answer %d","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}`, n.Add(1), n.Load())
	}))
	defer srv.Close()
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := rec.Client(nil)
	for _, body := range []string{
		`{"model":"gpt-4o","input":"hi"}`,
		`{"model":"gpt-4o","input":"hi"}`,
		`{"model":"gpt-4o","input":"and then?","previous_response_id":"resp_1"}`,
	} {
		resp, err := post(t, client, context.Background(), srv.URL+"/v1/responses", body)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recs := rec.History().Records()
	require.Len(t, recs, 3)
	assert.NotEqual(t, recs[0].TraceID, recs[1].TraceID)
	assert.Equal(t, recs[0].TraceID, recs[2].TraceID, "previous_response_id resp_1")
}

// The recorder remembers a bounded number of conversations: one pushed
// out is not found again, and a trace given by the caller is never
// marked inferred. With WithConversations(0) nothing is inferred.
func TestConversationsBounded(t *testing.T) {
	srv := newAnswerServer(t)
	rec := middleware.NewRecorder(middleware.WithConversations(2))
	defer rec.Close()
	client := rec.Client(nil)
	send := func(ctx context.Context, messages string) record.Record {
		resp, err := post(t, client, ctx, srv.URL+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":`+messages+`}`)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		recs := rec.History().Records()
		return recs[len(recs)-1]
	}
	a := send(context.Background(), `[{"role":"user","content":"a"}]`)                                   // answer 1
	given := send(middleware.WithTrace(context.Background(), "mine"), `[{"role":"user","content":"b"}]`) // answer 2
	assert.False(t, given.TraceInferred)
	assert.Equal(t, "mine", given.TraceID)
	b := send(context.Background(), `[{"role":"user","content":"b"},{"role":"assistant","content":"answer 2"},{"role":"user","content":"c"}]`)
	assert.Equal(t, "mine", b.TraceID, "a given trace is found again")
	assert.True(t, b.TraceInferred)
	send(context.Background(), `[{"role":"user","content":"d"}]`) // a third conversation pushes out the first
	again := send(context.Background(), `[{"role":"user","content":"a"},{"role":"assistant","content":"answer 1"},{"role":"user","content":"more"}]`)
	assert.NotEqual(t, a.TraceID, again.TraceID, "forgotten")

	off := middleware.NewRecorder(middleware.WithConversations(0))
	defer off.Close()
	resp, err := post(t, off.Client(nil), context.Background(), srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	resp.Body.Close()
	r := off.History().Records()[0]
	assert.Empty(t, r.TraceID)
	assert.False(t, r.TraceInferred)
}

// Calls made at once from many goroutines are placed without a race, and
// every conversation still comes out whole.
func TestConversationsConcurrent(t *testing.T) {
	srv := newAnswerServer(t)
	rec := middleware.NewRecorder()
	defer rec.Close()
	cfg := goopenai.DefaultConfig("sk-test-0123456789abcdefghij")
	cfg.BaseURL, cfg.HTTPClient = srv.URL+"/v1", rec.Client(nil)
	ch := &openaiChatter{client: goopenai.NewClientWithConfig(cfg), convs: make([][]goopenai.ChatCompletionMessage, numConversations), tool: make([]bool, numConversations)}
	var mu sync.Mutex
	conv := map[string]int{}
	var wg sync.WaitGroup
	for c := range numConversations {
		wg.Go(func() {
			for turn := range turnsEach {
				id := ch.turn(context.Background(), t, c, turn)
				mu.Lock()
				conv[id] = c
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	traces := map[string]map[int]bool{}
	for _, r := range rec.History().Records() {
		if traces[r.TraceID] == nil {
			traces[r.TraceID] = map[int]bool{}
		}
		traces[r.TraceID][conv[r.Outcome.ResponseID]] = true
	}
	assert.Len(t, traces, numConversations)
	for trace, cs := range traces {
		assert.Len(t, cs, 1, "trace %s holds one conversation", trace)
	}
}
