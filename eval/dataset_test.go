package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// toolLoopServer answers as OpenAI's chat completions do: a greeting, a
// tool call to a request that offers tools, and an answer to the tool's
// result.
func toolLoopServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		var msg string
		switch {
		case bytes.Contains(body, []byte(`"role":"tool"`)):
			msg = `{"role":"assistant","content":"It is 18 °C and sunny in Paris."}`
		case bytes.Contains(body, []byte(`"tools"`)):
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`
		default:
			msg = `{"role":"assistant","content":"Hi."}`
		}
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":`+msg+`,"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recordToolLoop records, through the recorder with its history preview
// on, a greeting (trace "hello") and a tool loop of two calls (trace
// "weather"), and returns the three records.
func recordToolLoop(t *testing.T) []record.Record {
	t.Helper()
	srv := toolLoopServer(t)
	mem := record.NewMemory(100)
	rec := middleware.NewRecorder(middleware.WithSink(mem), middleware.WithHistoryPreview(3))
	client := rec.Client(nil)
	post := func(trace, body string) {
		ctx := middleware.WithTrace(context.Background(), trace)
		ctx = middleware.WithUser(middleware.WithTags(ctx, "weather-bot"), "ana")
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
		resp, err := client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	post("hello", `{"model":"gpt-4o-mini","temperature":0.2,"messages":[{"role":"user","content":"Hello"}]}`)
	system := `{"role":"system","content":"You answer about the weather."},{"role":"user","content":"Weather in Paris?"}`
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`
	post("weather", `{"model":"gpt-4o-mini","stream":false,`+tools+`,"messages":[`+system+`]}`)
	post("weather", `{"model":"gpt-4o-mini","stream":false,`+tools+`,"messages":[`+system+
		`,{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},`+
		`{"role":"tool","tool_call_id":"call_1","content":"18 C, sunny"}]}`)
	require.NoError(t, rec.Close())
	recs := mem.Records()
	require.Len(t, recs, 3)
	for _, r := range recs {
		require.True(t, r.HistoryGuidance, "the preview was added")
	}
	return recs
}

func TestItemFromRecord(t *testing.T) {
	recs := recordToolLoop(t)
	it, ok := eval.ItemFromRecord(&recs[1])
	require.True(t, ok)
	assert.Equal(t, []record.Message{
		record.TextMessage(record.RoleSystem, "You answer about the weather."),
		record.TextMessage(record.RoleUser, "Weather in Paris?"),
	}, it.Input, "the recorder's guidance is left out, the application's system prompt kept")
	assert.Equal(t, []string{"get_weather"}, it.Tools)
	assert.Equal(t, map[string]json.RawMessage{"model": json.RawMessage(`"gpt-4o-mini"`)}, it.Params, "stream is no parameter")
	require.NotNil(t, it.Reference)
	assert.True(t, it.Reference.Has(record.PartToolCall))
	assert.Equal(t, "ana", it.User)
	assert.Equal(t, []string{"weather-bot"}, it.Tags)
	assert.Equal(t, []string{recs[1].CallID}, it.Sources)
	assert.Len(t, it.ID, 16)
	assert.Equal(t, it.ContentID(), it.ID)

	failed := recs[0]
	failed.Outcome = record.Failure(record.ErrorServer)
	_, ok = eval.ItemFromRecord(&failed)
	assert.False(t, ok, "a failed call has no reference")
	noOutput := recs[0]
	noOutput.Output = nil
	_, ok = eval.ItemFromRecord(&noOutput)
	assert.False(t, ok, "nor a call whose answer was not kept")
}

// The same exchange from two calls is one item with both sources; the
// ID does not depend on sources or metadata.
func TestDatasetDeduplicates(t *testing.T) {
	recs := recordToolLoop(t)
	again := recs[0]
	again.CallID, again.UserID, again.Tags = "01AGAIN", "bo", []string{"other"}
	again.Metadata = map[string]string{"tenant": "b"}
	items, res := eval.ItemsFromRecords(append(recs, again), eval.BuildOptions{})
	assert.Equal(t, eval.BuildResult{Calls: 4, Items: 4}, res)
	d := &eval.Dataset{Name: "w"}
	assert.Equal(t, 3, d.Add(items...))
	require.Len(t, d.Items, 3)
	hello := d.Items[0]
	assert.Equal(t, []string{recs[0].CallID, "01AGAIN"}, hello.Sources)
	assert.Equal(t, "ana", hello.User, "the first user stays")
	assert.Equal(t, []string{"weather-bot", "other"}, hello.Tags)
	assert.Equal(t, map[string]string{"tenant": "b"}, hello.Metadata)
	v := d.Version()
	assert.Equal(t, 0, d.Add(items...), "adding again adds nothing")
	assert.Equal(t, v, d.Version())
}

func TestItemsOfConversations(t *testing.T) {
	recs := recordToolLoop(t)
	items, res := eval.ItemsFromRecords(recs, eval.BuildOptions{Conversations: true})
	assert.Equal(t, eval.BuildResult{Calls: 3, Items: 2}, res)
	require.Len(t, items, 2)
	weather := items[1]
	assert.Equal(t, []string{recs[2].CallID}, weather.Sources, "the conversation's last call")
	assert.Len(t, weather.Input, 4, "system, user, the tool call, its result")
	assert.Equal(t, "It is 18 °C and sunny in Paris.", weather.Reference.Text())
	assert.Equal(t, "weather", weather.Metadata["trace_id"])
}

// Written and read back, a dataset is the same; written twice, the same
// bytes; the header names it and its version.
func TestDatasetRoundTrip(t *testing.T) {
	items, _ := eval.ItemsFromRecords(recordToolLoop(t), eval.BuildOptions{})
	d := &eval.Dataset{Name: "weather"}
	d.Add(items...)
	path := filepath.Join(t.TempDir(), "weather.jsonl")
	require.NoError(t, d.WriteFile(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, `{"llmhistory_dataset":1,"name":"weather","version":"`+d.Version()+`","items":3}`, lines[0])
	assert.True(t, strings.HasPrefix(lines[1], `{"id":"`+d.Items[0].ID+`","input":[`), "id first, then input: %s", lines[1])

	back, err := eval.ReadDatasetFile(path)
	require.NoError(t, err)
	assert.Equal(t, d.Name, back.Name)
	assert.Equal(t, d.Version(), back.Version())
	var again bytes.Buffer
	_, err = back.WriteTo(&again)
	require.NoError(t, err)
	assert.Equal(t, string(data), again.String(), "stable bytes")

	added, err := eval.AppendToDatasetFile(path, "ignored", items[0])
	require.NoError(t, err)
	assert.Equal(t, 0, added)
	n, err := eval.AppendToDatasetFile(filepath.Join(t.TempDir(), "new.jsonl"), "fresh", items...)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

// A line that is not an item is an error naming its line; nothing is
// read in part.
func TestReadDatasetBadLines(t *testing.T) {
	good := `{"input":[{"role":"user","parts":[{"type":"text","content":"Hi"}]}],"reference":{"role":"assistant","parts":[{"type":"text","content":"Hello."}]}}`
	d, err := eval.ReadDataset(strings.NewReader(good + "\n\n"))
	require.NoError(t, err, "no header and no id: both are optional")
	require.Len(t, d.Items, 1)
	id := d.Items[0].ID
	for name, tc := range map[string]struct {
		in   string
		line int
		want string
	}{
		"not JSON":      {good + "\n{\"input\":", 2, "not JSON"},
		"not an object": {"[1]", 1, "object"},
		"no input":      {good + "\n" + good + "\n{\"id\":\"x\"}", 3, "no input"},
		"edited":        {strings.Replace(good, `{"input"`, `{"id":"`+id+`","input"`, 1) + "\n" + strings.Replace(strings.Replace(good, "Hello.", "Bye.", 1), `{"input"`, `{"id":"`+id+`","input"`, 1), 2, "not its content's"},
		"newer format":  {`{"llmhistory_dataset":9,"name":"x"}` + "\n" + good, 1, "newer"},
		"bad role":      {`{"input":[{"role":7,"parts":[]}]}`, 1, "role"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := eval.ReadDataset(strings.NewReader(tc.in))
			var le *eval.LineError
			require.True(t, errors.As(err, &le), "%v", err)
			assert.Equal(t, tc.line, le.Line)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// A dataset built from a store's filter.
func TestItemsFromStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "h.db"))
	require.NoError(t, err)
	defer st.Close()
	recs := recordToolLoop(t)
	_, err = st.Write(ctx, recs)
	require.NoError(t, err)

	items, res, err := eval.ItemsFromStore(ctx, st, store.Filter{TraceID: "weather"}, eval.BuildOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Items)
	want, _ := eval.ItemsFromRecords(recs[1:], eval.BuildOptions{})
	assert.Equal(t, want, items, "the store gives the items the records give")

	items, _, err = eval.ItemsFromStore(ctx, st, store.Filter{Text: "Paris"}, eval.BuildOptions{Conversations: true})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, []string{recs[2].CallID}, items[0].Sources)
}

func FuzzReadDataset(f *testing.F) {
	f.Add([]byte(`{"llmhistory_dataset":1,"name":"seed","version":"x","items":1}` + "\n" +
		`{"input":[{"role":"user","parts":[{"type":"text","content":"Weather?"}]}],"tools":["get_weather"],"params":{"model":"gpt-4o-mini","temperature":0.2},` +
		`"reference":{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris"}}]},"user":"ana","tags":["t"],"metadata":{"k":"v"},"sources":["01A"]}`))
	f.Add([]byte(`{"input":[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]}`))
	f.Add([]byte("{\"llmhistory_dataset\":1}\n[]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := eval.ReadDataset(bytes.NewReader(data))
		if err != nil {
			return
		}
		// What was read writes, and reads back to the same dataset.
		var out bytes.Buffer
		if _, err := d.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		back, err := eval.ReadDataset(&out)
		if err != nil {
			t.Fatalf("a dataset written does not read back: %v\n%s", err, out.String())
		}
		if back.Version() != d.Version() || len(back.Items) != len(d.Items) {
			t.Fatalf("read back differs: %d items %s, was %d %s", len(back.Items), back.Version(), len(d.Items), d.Version())
		}
	})
}
