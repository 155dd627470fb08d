package proof

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
)

// crowdedSize is the size of each crowded body: just under the
// recorder's default capture cap (1 MiB), so that the whole of it is
// parsed.
const crowdedSize = 1<<20 - 4<<10

// crowded is text of about crowdedSize bytes made of unit again and again.
func crowded(unit string) string { return strings.Repeat(unit, crowdedSize/len(unit)) }

// Bodies crowded with what the recorder's parsers look for, through a real
// client and a loopback server: every one is recorded, and in time linear
// in its size. Each of these once cost the square of the body, holding the
// recorder's goroutine for seconds to minutes on a 1 MiB body (and, its
// queue full, the calls behind it):
//   - redaction scanned a candidate's token before looking at the byte
//     before its prefix, so "xsk-xsk-…" (never a key: it follows a letter)
//     walked the rest of the body from each candidate;
//   - ScanSSE looked for the next '\n' from every line, and a stream whose
//     lines end in a bare '\r' has none.
//
// The deadline is not a speed test: these bodies take milliseconds now,
// and took from 14 s (bare '\r', without -race) to many minutes then.
func TestCrowdedBodiesAreRecordedPromptly(t *testing.T) {
	const deadline = 10 * time.Second
	chunk := `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"x"}}]}`
	cases := []struct {
		name, request, contentType, response string
	}{
		{"sk- after a letter, in the request", crowded("xsk-"), "application/json", chatResponse("ok")},
		{"AIza after a letter, in the request", crowded("xAIza"), "application/json", chatResponse("ok")},
		{"ya29. after a letter, in the answer", "Hi", "application/json", chatResponse(crowded("xya29."))},
		{"key= after a letter, in the answer", "Hi", "application/json", chatResponse(crowded("xkey="))},
		{"bearer with short tokens", crowded("Bearer x"), "application/json", chatResponse(crowded("bearer x"))},
		{"history names in the answer", "Hi", "application/json", chatResponse(crowded("conversation_history["))},
		{"code fences in the answer", "Hi", "application/json", chatResponse(crowded("```python\\n"))},
		{"escapes in the answer", "Hi", "application/json", chatResponse(crowded(`\u00e9\"`))},
		{"a stream whose lines end in a bare CR", "Hi", "text/event-stream", crowded(chunk+"\r\r") + "data: [DONE]\r\r"},
		{"a stream of bare CRs", "Hi", "text/event-stream", crowded("\r")},
		{"a stream of blank lines", "Hi", "text/event-stream", crowded("\n")},
		{"a stream of one line with no end", "Hi", "text/event-stream", "data: " + crowded("a")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.response)
			}))
			defer srv.Close()
			rec := middleware.NewRecorder(middleware.WithDedupWindow(0))
			defer rec.Close()
			stream := ""
			if tc.contentType == "text/event-stream" {
				stream = `"stream":true,`
			}
			body := fmt.Sprintf(`{"model":"gpt-4o-mini",%s"messages":[{"role":"user","content":%q}]}`, stream, tc.request)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
			require.NoError(t, err)
			resp, err := rec.Client(nil).Do(req)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, len(tc.response), len(got), "the caller got the whole answer")

			flushed := make(chan error, 1)
			go func() { flushed <- rec.Flush() }()
			select {
			case err := <-flushed:
				require.NoError(t, err)
			case <-time.After(deadline):
				t.Fatalf("the record was still being built %v after the call ended", deadline)
			}
			assert.Equal(t, 1, rec.History().Len(), "one record")
		})
	}
}

// chatResponse is a chat completion whose answer is content.
func chatResponse(content string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, content)
}
