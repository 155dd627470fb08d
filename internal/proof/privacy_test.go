package proof

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"google.golang.org/genai"
	"google.golang.org/protobuf/proto"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
	"github.com/llmhistory/llmhistory/replay"
	"github.com/llmhistory/llmhistory/store"
	_ "github.com/llmhistory/llmhistory/store/postgres"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
)

// Personal data planted in what a person types and in what the model
// answers, sent through each SDK, with redact.PII on, is in no sink: the
// JSONL file, a SQLite store (its file, its -wal, and the spill file of a
// store whose database is locked), a PostgreSQL store (every file of the
// server's data directory, its WAL included, and the rows read back), the
// OTLP export (the spans' bytes, content captured), and a cassette
// (replay.WithRedactor). The same run without the redactor finds every
// planted value in every sink: the greps can see what they look for.

// planted are the values, and what a grep looks for of each.
type plantedValue struct{ name, value string }

var plantedValues = []plantedValue{
	{"email", "jane.roe@example.org"},
	{"phone", "+44 20 7946 0321"},
	{"card", "4111 1111 1111 1111"},
	{"iban", "GB82 WEST 1234 5698 7654 32"},
	{"ip", "203.0.113.77"},
	// A GitHub token, made at run time so that no scanner of secrets
	// takes this file for a leak.
	{"token", "ghp_" + strings.Repeat("Zq7Lm", 7) + "X"},
}

// needles are what is grepped for: each value, and for the ones a grep
// could miss by their spaces, their digits run together too.
func needles() []string {
	var out []string
	for _, p := range plantedValues {
		out = append(out, p.value)
	}
	return append(out, "jane.roe", "7946 0321", "4111111111111111", "GB82WEST", "GB82 WEST")
}

// plantedPrompt is what the user types.
func plantedPrompt() string {
	var b strings.Builder
	b.WriteString("Hi, I am Jane Roe. ")
	for _, p := range plantedValues {
		fmt.Fprintf(&b, "My %s is %s. ", p.name, p.value)
	}
	return b.String()
}

// plantedAnswer is what the model says back; streamed, it comes in pieces of a
// few characters, the planted values split across events.
func plantedAnswer() string {
	return "Noted: I will write to " + plantedValues[0].value + ", call " + plantedValues[1].value +
		" and refund card " + plantedValues[2].value + " from " + plantedValues[4].value + "."
}

func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fakeProviders answers OpenAI's chat completions, Gemini's
// generateContent and Anthropic's messages, each plain and streamed, with
// the planted values in the answer, a tool call's arguments and, for a
// request that asks for it, an error message.
func fakeProviders(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		stream := bytes.Contains(body, []byte(`"stream":true`)) || strings.Contains(r.URL.Path, "stream")
		text := plantedAnswer()
		switch {
		case bytes.Contains(body, []byte("please fail")):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error","param":null,"code":null}}`, jsonString("Invalid recipient "+plantedValues[0].value+" for card "+plantedValues[2].value))
		case strings.HasPrefix(r.URL.Path, "/v1/chat/completions") && !stream:
			w.Header().Set("Content-Type", "application/json")
			args := jsonString(`{"card":"` + plantedValues[2].value + `","iban":"` + plantedValues[3].value + `"}`)
			fmt.Fprintf(w, `{"id":"chatcmpl-p1","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%s,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"refund","arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":20,"total_tokens":40}}`, jsonString(text), args)
		case strings.HasPrefix(r.URL.Path, "/v1/chat/completions"):
			w.Header().Set("Content-Type", "text/event-stream")
			for _, p := range pieces(text, 5) {
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-p2\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", jsonString(p))
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: {\"id\":\"chatcmpl-p2\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		case strings.Contains(r.URL.Path, ":streamGenerateContent"):
			w.Header().Set("Content-Type", "text/event-stream")
			for _, p := range pieces(text, 5) {
				fmt.Fprintf(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":%s}]},\"index\":0}],\"modelVersion\":\"gemini-2.0-flash\"}\r\n\r\n", jsonString(p))
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":20,\"candidatesTokenCount\":20,\"totalTokenCount\":40},\"modelVersion\":\"gemini-2.0-flash\"}\r\n\r\n")
		case strings.Contains(r.URL.Path, ":generateContent"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":%s}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":20,"totalTokenCount":40},"modelVersion":"gemini-2.0-flash"}`, jsonString(text))
		case r.URL.Path == "/v1/messages" && !stream:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"msg_p1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":20}}`, jsonString(text))
		case r.URL.Path == "/v1/messages":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_p2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n")
			io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
			for _, p := range pieces(text, 5) {
				fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}\n\n", jsonString(p))
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
			io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":20}}\n\n")
			io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// calls makes every call: each SDK plain and streamed, and one call that
// fails with the planted values in its error.
func calls(t *testing.T, ctx context.Context, base string, hc *http.Client) {
	// go-openai
	cfg := goopenai.DefaultConfig("sk-test-goopenai-0123456789abcdef")
	cfg.BaseURL, cfg.HTTPClient = base+"/v1", hc
	goc := goopenai.NewClientWithConfig(cfg)
	req := goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: plantedPrompt()}}}
	_, err := goc.CreateChatCompletion(ctx, req)
	require.NoError(t, err)
	req.Stream = true
	s, err := goc.CreateChatCompletionStream(ctx, req)
	require.NoError(t, err)
	var got strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(chunk.Choices) > 0 {
			got.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	s.Close()
	assert.Equal(t, plantedAnswer(), got.String(), "the caller got the answer whole")
	req.Stream = false
	req.Messages[0].Content = plantedPrompt() + " please fail"
	_, err = goc.CreateChatCompletion(ctx, req)
	require.Error(t, err)

	// openai-go
	oc := openaisdk.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("sk-test-openaigo-0123456789abcdef"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	params := openaisdk.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage(plantedPrompt())}}
	_, err = oc.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	ostream := oc.Chat.Completions.NewStreaming(ctx, params)
	for ostream.Next() {
	}
	require.NoError(t, ostream.Err())
	ostream.Close()

	// genai
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "AIzaSyTEST-genai-0123456789abcdefghijklmnop", Backend: genai.BackendGeminiAPI, HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: base}})
	require.NoError(t, err)
	_, err = gc.Models.GenerateContent(ctx, "gemini-2.0-flash", genai.Text(plantedPrompt()), nil)
	require.NoError(t, err)
	for _, err := range gc.Models.GenerateContentStream(ctx, "gemini-2.0-flash", genai.Text(plantedPrompt()), nil) {
		require.NoError(t, err)
	}

	// Anthropic
	ac := anthropic.NewClient(anthropicoption.WithAPIKey("sk-ant-test-0123456789abcdefghij"), anthropicoption.WithBaseURL(base), anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0))
	ap := anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(plantedPrompt()))}}
	_, err = ac.Messages.New(ctx, ap)
	require.NoError(t, err)
	as := ac.Messages.NewStreaming(ctx, ap)
	for as.Next() {
	}
	require.NoError(t, as.Err())
	as.Close()
}

// privacyRun makes every call through a recorder feeding every sink,
// with or without redaction, and returns the bytes each sink wrote, by
// sink.
func privacyRun(t *testing.T, pg *pgtest.Server, redacted bool) map[string][]byte {
	ctx := context.Background()
	dir := t.TempDir()
	var (
		jsonlPath    = filepath.Join(dir, "history.jsonl")
		sqlitePath   = filepath.Join(dir, "history.db")
		lockedPath   = filepath.Join(dir, "locked.db")
		cassettePath = filepath.Join(dir, "cassette.jsonl")
		receiver     = otlpfake.Start(t)
		key          = []byte("the team's redaction key")
	)

	f, err := os.Create(jsonlPath)
	require.NoError(t, err)
	defer f.Close()
	jsonl := record.NewJSONL(f)

	lite, err := store.Open(ctx, "sqlite:"+sqlitePath)
	require.NoError(t, err)
	// A store whose database another process holds locked: every batch
	// goes to its spill file.
	locked, err := store.OpenWith(ctx, "sqlite:"+lockedPath, store.Options{BusyTimeout: 20 * time.Millisecond})
	require.NoError(t, err)
	holder, err := sql.Open("sqlite", sqlitedsn.DSN(lockedPath, 0, false))
	require.NoError(t, err)
	defer holder.Close()
	tx, err := holder.Begin()
	require.NoError(t, err)
	defer tx.Rollback()

	opts := []middleware.Option{middleware.WithOutput(), middleware.WithHistoryPreview(3), middleware.WithSink(jsonl), middleware.WithSink(lite), middleware.WithSink(locked)}
	var pgURL string
	if pg != nil {
		pgURL = pg.NewDatabase(t)
		ps, err := store.Open(ctx, pgURL)
		require.NoError(t, err)
		opts = append(opts, middleware.WithSink(ps))
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(receiver.HTTP), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	otel, err := otelsink.New(otelsink.Options{SpanExporter: exp, Content: otelsink.ContentOn})
	require.NoError(t, err)
	opts = append(opts, middleware.WithSink(otel))
	casOpts := []replay.Option{replay.WithMode(replay.ModeRecord)}
	if redacted {
		opts = append(opts, middleware.WithRedactor(redact.PII(redact.WithKey(key))))
		casOpts = append(casOpts, replay.WithRedactor(redact.New(redact.WithKey(key))))
	}
	rec := middleware.NewRecorder(opts...)
	cas, err := replay.New(cassettePath, casOpts...)
	require.NoError(t, err)

	srv := fakeProviders(t)
	hc := middleware.NewClient(nil, rec.Middleware(), cas.Middleware())
	ctx = middleware.WithTags(middleware.WithMetadata(ctx, "customer", plantedValues[0].value), "support", "from "+plantedValues[4].value)
	calls(t, ctx, srv.URL, hc)

	out := map[string][]byte{}
	// SQLite while the store is open, its WAL holding what it took, and
	// again once it is closed and the WAL is checkpointed into the file.
	require.NoError(t, rec.Flush())
	out["SQLite file, -wal and -shm"] = concat(t, sqlitePath, sqlitePath+"-wal", sqlitePath+"-shm")
	require.NoError(t, cas.Close())
	require.NoError(t, rec.Close()) // flushes and closes every sink
	assert.Equal(t, 9, len(rec.History().Records()), "one record a call")

	out["SQLite file, -wal and -shm"] = append(out["SQLite file, -wal and -shm"], concat(t, sqlitePath, sqlitePath+"-wal")...)
	out["JSONL file"] = concat(t, jsonlPath)
	out["SQLite spill file"] = concat(t, lockedPath+".spill.jsonl")
	out["cassette"] = concat(t, cassettePath)
	var spans bytes.Buffer
	for _, e := range receiver.Exports() {
		if e.Traces != nil {
			b, err := proto.Marshal(e.Traces)
			require.NoError(t, err)
			spans.Write(b)
		}
	}
	out["OTLP export"] = spans.Bytes()
	if pg != nil {
		out["PostgreSQL rows"], out["PostgreSQL data directory"] = postgresBytes(t, pg, pgURL)
	}
	for name, b := range out {
		require.NotEmpty(t, b, "%s was written", name)
	}
	return out
}

// concat returns the bytes of the files that exist among names.
func concat(t *testing.T, names ...string) []byte {
	var out []byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		out = append(out, b...)
	}
	return out
}

// postgresBytes returns the rows of every table of the store's database,
// as text, and the bytes of every file of the server's data directory
// (its tables, its WAL) after a checkpoint.
func postgresBytes(t *testing.T, pg *pgtest.Server, url string) (rows, files []byte) {
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	var tables []string
	rs, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	for rs.Next() {
		var n string
		require.NoError(t, rs.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rs.Close())
	require.NotEmpty(t, tables)
	var dump bytes.Buffer
	for _, tb := range tables {
		rs, err := db.Query(`SELECT t::text FROM "` + tb + `" t`)
		require.NoError(t, err)
		for rs.Next() {
			var s string
			require.NoError(t, rs.Scan(&s))
			dump.WriteString(s + "\n")
		}
		require.NoError(t, rs.Close())
	}
	_, err = db.Exec("CHECKPOINT")
	require.NoError(t, err)
	var data bytes.Buffer
	require.NoError(t, filepath.WalkDir(pg.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			data.Write(b)
		}
		return nil
	}))
	return dump.Bytes(), data.Bytes()
}

func TestPlantedPersonalDataReachesNoSink(t *testing.T) {
	// Each run has a PostgreSQL server of its own: the files of one
	// server would hold the other run's text.
	t.Run("without redaction every sink holds it", func(t *testing.T) {
		pg := pgtest.Start(t, pgtest.Options{})
		out := privacyRun(t, pg, false)
		require.Len(t, out, sinkCount(pg))
		for name, b := range out {
			for _, p := range plantedValues {
				assert.True(t, bytes.Contains(b, []byte(p.value)), "the %s holds the %s", name, p.name)
			}
		}
	})

	t.Run("with redact.PII no sink holds any of it", func(t *testing.T) {
		pg := pgtest.Start(t, pgtest.Options{})
		out := privacyRun(t, pg, true)
		require.Len(t, out, sinkCount(pg))
		for name, b := range out {
			for _, n := range needles() {
				if i := bytes.Index(b, []byte(n)); i >= 0 {
					t.Errorf("the %s holds %q: …%q…", name, n, b[max(0, i-80):min(len(b), i+len(n)+80)])
				}
			}
			if name != "PostgreSQL data directory" {
				assert.True(t, bytes.Contains(b, []byte("[EMAIL:")), "the %s holds the marks", name)
			}
		}
	})
}

// sinkCount is how many sinks a run writes: PostgreSQL's two views only
// when there is a server.
func sinkCount(pg *pgtest.Server) int {
	if pg == nil {
		return 5
	}
	return 7
}
