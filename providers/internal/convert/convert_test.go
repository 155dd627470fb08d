package convert_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/convert"
	"github.com/llmhistory/llmhistory/record"
)

// A stream's fragments run together into parts, in order; a run goes on
// after Message when nothing came between (an SDK that keeps a turn in
// several contents), and not after another part.
func TestBuilderRuns(t *testing.T) {
	var b convert.Builder
	b.Reasoning("Look ")
	b.Reasoning("it up.")
	b.Text("It is ")
	b.Text("")
	b.Text("18 °C")
	b.Add(convert.Call("c1", "weather", `{"city":"Paris"}`))
	b.Text("Anything else?")
	m := b.Message(nil)
	assert.Equal(t, `{"role":"assistant","parts":[{"type":"reasoning","content":"Look it up."},{"type":"text","content":"It is 18 °C"},`+
		`{"type":"tool_call","id":"c1","name":"weather","arguments":{"city":"Paris"}},{"type":"text","content":"Anything else?"}]}`, string(m.AppendJSON(nil)))

	b.Text(" Bye.") // the same turn, continued
	m = b.Message(nil)
	assert.Equal(t, "Anything else? Bye.", m.Parts[len(m.Parts)-1].Content)
	assert.Equal(t, "It is 18 °C", m.Parts[1].Content, "an earlier run is left as it was")

	b.Reset()
	assert.Equal(t, record.Message{}, b.Message(nil), "nothing added: no message")
	b.Add(convert.Other("cachePoint", `{"type": "default"}`))
	b.Text("x")
	m = b.Message(nil)
	assert.Equal(t, json.RawMessage(`{"type":"default"}`), m.Parts[0].Data, "kept canonical")
}

// A lent buffer holds the runs and comes back grown; the parts point into
// it until the provider's Detach copies them.
func TestBuilderLend(t *testing.T) {
	scratch := make([]byte, 0, 2)
	var b convert.Builder
	b.Lend(&scratch)
	long := strings.Repeat("word ", 100)
	b.Text(long)
	m := b.Message(&scratch)
	assert.Equal(t, long, m.Text())
	assert.GreaterOrEqual(t, cap(scratch), len(long))
}

// Args built in the buffer a request lends are what they are without it,
// the grown buffer left for the lender, and used again when large enough;
// Args that do not fit are cut as without it.
func TestArgsLend(t *testing.T) {
	msg := func(text string) *record.Message {
		return &record.Message{Role: record.RoleUser, Parts: []record.Part{{Type: record.PartText, Content: text}}}
	}
	for _, texts := range [][]string{{"aaaa", "bbbb"}, {strings.Repeat("a", 78), strings.Repeat("b", 78), strings.Repeat("c", 78)}} {
		req := &providers.Request{MaxArgs: 200}
		var plain convert.Args
		for _, text := range texts {
			plain.Add(msg(text))
		}
		want, wantCut := plain.JSON(req)

		small := make([]byte, 0, 4)
		req.Scratch = &small
		build := func() (json.RawMessage, bool) {
			var a convert.Args
			a.Lend(req)
			for _, text := range texts {
				a.Add(msg(text))
			}
			return a.JSON(req)
		}
		got, cut := build()
		assert.Equal(t, string(want), string(got))
		assert.Equal(t, wantCut, cut)
		if cut {
			continue // cut into a buffer of its own: the messages are in the lent one
		}
		assert.GreaterOrEqual(t, cap(*req.Scratch), len(got), "the grown buffer is left for the lender")
		again, _ := build()
		assert.Equal(t, string(want), string(again))
		assert.Same(t, &(*req.Scratch)[:1][0], &again[:1][0], "a large enough buffer is used, not replaced")
	}
}

func TestMedia(t *testing.T) {
	for _, tt := range []struct {
		got  record.Part
		want record.Part
	}{
		{convert.Media("image", "https://example.com/cat.png"), record.Part{Type: record.PartMedia, MIMEType: "image", URI: "https://example.com/cat.png"}},
		{convert.Media("image", "data:image/png;base64,[elided 2200 bytes]"), record.Part{Type: record.PartMedia, MIMEType: "image/png", Size: 2200}},
		{convert.Media("image", "data:image/jpeg;base64,AAAA"), record.Part{Type: record.PartMedia, MIMEType: "image/jpeg", Size: 4}},
		{convert.Inline("application/pdf", "[base64 elided: 123456 bytes]"), record.Part{Type: record.PartMedia, MIMEType: "application/pdf", Size: 123456}},
		{convert.Inline("audio/wav", "UklGRg=="), record.Part{Type: record.PartMedia, MIMEType: "audio/wav", Size: 8}},
		{convert.Media("file", "file-abc"), record.Part{Type: record.PartMedia, MIMEType: "file", URI: "file-abc"}},
	} {
		assert.Equal(t, tt.want, tt.got)
	}
}

func TestRolesAndResults(t *testing.T) {
	for in, want := range map[string]string{"system": "system", "developer": "system", "user": "user", "": "user",
		"assistant": "assistant", "model": "assistant", "tool": "tool", "function": "tool", "ipython": "tool", "critic": "user"} {
		assert.Equal(t, want, convert.Role(in), in)
	}
	result := record.Part{Type: record.PartToolResult, ID: "t1", Content: "42"}
	m := record.Message{Role: record.RoleUser, Parts: []record.Part{result}}
	convert.Results(&m)
	assert.Equal(t, record.RoleTool, m.Role, "a user turn of tool results is the tool's")
	m = record.Message{Role: record.RoleUser, Parts: []record.Part{result, {Type: record.PartText, Content: "and now?"}}}
	convert.Results(&m)
	assert.Equal(t, record.RoleUser, m.Role, "words of the user's: the user's")
}

// Args keeps the latest messages within the request's bound, behind a
// marker, and says who spoke last.
func TestArgs(t *testing.T) {
	var a convert.Args
	assert.Empty(t, a.Speaker())
	for i := range 50 {
		m := record.TextMessage(record.RoleUser, fmt.Sprintf("turn %d %s", i, strings.Repeat("x", 100)))
		a.Add(&m)
	}
	last := record.TextMessage(record.RoleTool, "the last")
	a.Add(&last)
	req := &providers.Request{URL: &url.URL{}, MaxArgs: 2000}
	args, cut := a.JSON(req)
	require.True(t, cut)
	assert.LessOrEqual(t, len(args), 2000)
	msgs := record.Messages(args)
	assert.Equal(t, record.PartOther, msgs[0].Parts[0].Type, "the marker of what was cut")
	assert.Equal(t, "the last", msgs[len(msgs)-1].Text())
	assert.Equal(t, record.SpeakerTool, a.Speaker())
	assert.Equal(t, 51, a.Len())
}

func TestResultText(t *testing.T) {
	for raw, want := range map[string]string{
		`"done"`: "done",
		`[{"type":"text","text":"a"},{"type":"input_text","text":"b"}]`: "ab",
		`[{"text":"bedrock"}]`: "bedrock",
		`{"temp": 18, "a": 1}`: `{"a":1,"temp":18}`,
		`[{"type":"image"}]`:   `[{"type":"image"}]`,
		`null`:                 "",
	} {
		assert.Equal(t, want, convert.ResultText(parse(raw)), raw)
	}
}

func parse(raw string) gjson.Result { return gjson.Parse(raw) }

// A provider reads each message of its request into the model and hands
// it to Args, which encodes it at once; the answer of a stream is put
// together by a Builder.
func Example() {
	var args convert.Args
	for _, m := range []record.Message{
		record.TextMessage(convert.Role("developer"), "Be brief."),
		record.TextMessage(convert.Role("user"), "Weather in Paris?"),
	} {
		args.Add(&m)
	}
	json, _ := args.JSON(&providers.Request{})
	fmt.Println(string(json), args.Speaker())

	var answer convert.Builder
	for _, fragment := range []string{"It is ", "18 °C."} {
		answer.Text(fragment)
	}
	m := answer.Message(nil)
	fmt.Println(string(m.AppendJSON(nil)))
	// Output:
	// [{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}] user
	// {"role":"assistant","parts":[{"type":"text","content":"It is 18 °C."}]}
}
