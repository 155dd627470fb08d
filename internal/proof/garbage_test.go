package proof

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// A 200 whose body is not JSON is something no SDK can use: go-openai,
// genai and openai-go all fail with a decode error. The record must say
// so (error_type "decode", ok false), not that the call produced a
// chat.completion.
//
// The soak found this: it was recorded as a success until the providers
// learnt to tell.
func TestGarbageBodyIsRecordedAsDecodeError(t *testing.T) {
	for _, tc := range []struct{ name, path, contentType, body string }{
		{"openai", "/v1/chat/completions", "application/json", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`},
		{"openai stream", "/v1/chat/completions", "text/event-stream", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`},
		{"gemini", "/v1beta/models/gemini-2.0-flash:generateContent", "application/json", `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				fmt.Fprint(w, "<html>\x00\xff garbage {{{")
			}))
			defer srv.Close()
			rec := middleware.NewRecorder(middleware.WithDedupWindow(0))
			defer rec.Close()
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			resp, err := rec.Client(nil).Do(req)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			rs := rec.History().Records()
			require.Len(t, rs, 1)
			assert.False(t, rs[0].Outcome.OK, "%+v", rs[0].Outcome)
			assert.Equal(t, record.ErrorDecode, rs[0].ErrorType)
		})
	}
}
