package middleware_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lmittmann/tint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// The canaries: each one is a secret that must appear nowhere.
const (
	canaryHeader   = "sk-proj-CANARYheader0123456789abcdefghij"
	canaryAzure    = "CANARY-azure-key-not-key-shaped"
	canaryQuery    = "CANARY-query-param-plain"
	canaryBodyKey  = "sk-CANARYbody0123456789abcdefghijklmn"
	canaryGoogle   = "AIzaSyCANARYgoogle0123456789abcdefghijk"
	canaryBearer   = "CANARYbearerTokenValue.abc"
	canaryInOutput = "sk-ant-CANARYoutput0123456789abcdefghij"
)

var canaries = []string{"CANARY"}

func TestCanarySecretsReachNoSinkAndNoLog(t *testing.T) {
	var jsonl, slogJSON, slogTint, recorderLog lockedBuffer
	failing := record.SinkFunc(func(_ context.Context, r record.Record) error {
		return errors.New("sink failed on a request to /v1?key=" + canaryQuery + " with " + canaryBodyKey)
	})
	rec := middleware.NewRecorder(
		middleware.WithSink(record.NewJSONLWith(&jsonl, record.JSONLOptions{FlushInterval: -1})),
		middleware.WithSink(record.NewSlog(slog.New(slog.NewJSONHandler(&slogJSON, &slog.HandlerOptions{Level: slog.LevelDebug})))),
		middleware.WithSink(record.NewSlog(slog.New(tint.NewTextHandler(&slogTint, &tint.Options{Level: slog.LevelDebug, NoColor: true})))),
		middleware.WithSink(failing),
		middleware.WithLogger(slog.New(slog.NewJSONHandler(&recorderLog, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		middleware.WithDedupWindow(0),
		middleware.WithProviders(careless{}),
	)
	client := rec.Client(nil)

	// The server echoes secrets back, as an error message might.
	s := (&scripted{}).
		add(200, `{"id":"x","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"your key is `+canaryInOutput+`"}}]}`, nil).
		add(401, `{"error":{"message":"Incorrect API key provided: `+canaryBodyKey+` and Bearer `+canaryBearer+`","code":"invalid_api_key"}}`, nil)
	srv := s.start(t)

	body := `{"model":"m","messages":[{"role":"user","content":"my keys are ` + canaryBodyKey + ` and ` + canaryGoogle + ` and Bearer ` + canaryBearer + `"}]}`
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions?key="+canaryQuery+"&api-version=2024", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+canaryHeader)
		req.Header.Set("Api-Key", canaryAzure)
		req.Header.Set("X-Goog-Api-Key", canaryGoogle)
		req.Header.Set("Cookie", "session="+canaryAzure)
		resp, err := client.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(got), "CANARY", "the caller still gets what the server sent")
		assert.Contains(t, <-s.bodies, canaryBodyKey, "the server still gets what the caller sent")
	}

	// A transport error whose message carries the URL.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1beta/models/g:generateContent?key="+canaryQuery, strings.NewReader(body))
	_, err := client.Do(req)
	require.Error(t, err)
	require.NoError(t, rec.Close())

	records := rec.History().Records()
	require.Len(t, records, 3)
	var all bytes.Buffer
	for _, r := range records {
		all.Write(r.AppendJSON(nil))
		all.WriteString(r.ErrorMessage)
	}
	places := map[string]string{
		"history":         all.String(),
		"jsonl sink":      jsonl.String(),
		"slog json sink":  slogJSON.String(),
		"slog tint sink":  slogTint.String(),
		"recorder logger": recorderLog.String(),
	}
	for where, text := range places {
		require.NotEmpty(t, text, where)
		for _, c := range canaries {
			assert.NotContains(t, text, c, "a secret reached the %s:\n%s", where, text)
		}
	}
	assert.Contains(t, jsonl.String(), redact.Redacted, "secrets were replaced, not the records dropped")
	assert.Contains(t, recorderLog.String(), "a sink failed", "the failing sink was logged")
}

// panicking is a provider that panics on everything.
type panicking struct{ onRequest bool }

func (panicking) Name() string { return "panicking" }
func (p panicking) ParseRequest(*providers.Request) (providers.Call, bool) {
	if p.onRequest {
		panic("parser bug")
	}
	return providers.Call{MethodName: "panicking.call"}, true
}
func (panicking) ParseResponse(*providers.Call, *providers.Response) providers.Result {
	panic("parser bug")
}

func TestRecordingFailuresNeverBreakTheCall(t *testing.T) {
	srv := serve(t, 200, "application/json", chatResponse)
	tests := []struct {
		name       string
		opts       []middleware.Option
		wantPanics uint64
		wantErrs   uint64
		wantLog    string
	}{
		{"panicking request parser", []middleware.Option{middleware.WithProviders(panicking{onRequest: true})}, 1, 0, "panic in a provider parsing a request"},
		{"panicking response parser", []middleware.Option{middleware.WithProviders(panicking{})}, 1, 0, "panic in a provider parsing a response"},
		{"panicking redactor", []middleware.Option{middleware.WithRedactor(func(*record.Record) { panic("hook bug") })}, 1, 0, "panic in a redactor"},
		{"panicking sink", []middleware.Option{middleware.WithSink(record.SinkFunc(func(context.Context, record.Record) error { panic("sink bug") })), middleware.WithSyncSinks()}, 1, 1, "a sink failed"},
		{"failing sink, async", []middleware.Option{middleware.WithSink(record.SinkFunc(func(context.Context, record.Record) error { return errSinkDown }))}, 0, 1, "a sink failed"},
		{"full disk", []middleware.Option{middleware.WithSink(record.NewJSONLWith(diskFull{}, record.JSONLOptions{BufferSize: 1, MaxBacklog: 1})), middleware.WithSyncSinks()}, 0, 1, "no space left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs lockedBuffer
			rec := middleware.NewRecorder(append(tt.opts, middleware.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))...)
			client := rec.Client(nil)
			for range 3 {
				resp, err := post(t, client, context.Background(), srv.URL, chatBody)
				require.NoError(t, err)
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				assert.Equal(t, chatResponse, string(b))
			}
			require.NoError(t, rec.Flush())
			rec.Close()
			st := rec.Stats()
			assert.Equal(t, 3*tt.wantPanics, st.Panics)
			assert.Equal(t, 3*tt.wantErrs, st.SinkErrors)
			assert.Equal(t, 1, strings.Count(logs.String(), "\n"), "logged once:\n%s", logs.String())
			assert.Contains(t, logs.String(), tt.wantLog)
			assert.Equal(t, 3, rec.History().Len(), "the history still has every call")
		})
	}
}

type diskFull struct{}

func (diskFull) Write([]byte) (int, error) {
	return 0, errors.New("write history.jsonl: no space left on device")
}

// careless is a provider that records everything it is shown, headers and
// URL included: what it is shown must already be clean.
type careless struct{}

func (careless) Name() string { return "careless" }
func (careless) ParseRequest(req *providers.Request) (providers.Call, bool) {
	if !strings.Contains(req.URL.Path, "chat") {
		return providers.Call{}, false
	}
	return providers.Call{
		MethodName: "careless.call",
		Args:       record.ArgsJSON(string(req.Body)),
		Kwargs:     record.KwargsJSON(map[string]any{"header": req.Header, "url": req.URL.String()}),
	}, true
}
func (careless) ParseResponse(_ *providers.Call, resp *providers.Response) providers.Result {
	return providers.Result{
		Outcome:      record.Success("echo"),
		ErrorMessage: string(resp.Body) + string(resp.Tail),
		Model:        resp.Header.Get("Set-Cookie"),
	}
}

// AWS's credentials: a SigV4 Authorization (its access key ID and
// signature), a session token header, and a presigned URL's query. A
// provider that reads every header and the URL, and a server that echoes
// them all back (AWS's signature-mismatch error quotes the canonical
// request, token and all), leak none of them.
func TestAWSCredentialsReachNoRecord(t *testing.T) {
	const (
		keyID = "ASIACANARYKEYID0EXAM"
		token = "IQoJb3JpZ2luX2VjCANARYsessionTOKEN/abc+def=="
		sig   = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
	)
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "canonical request: "+r.URL.RequestURI()+"\nx-amz-security-token:"+r.Header.Get("X-Amz-Security-Token")+
			"\nauthorization:"+r.Header.Get("Authorization"))
	})
	server := httptest.NewServer(echo)
	defer server.Close()
	srv := server.URL
	rec := middleware.NewRecorder(middleware.WithDedupWindow(0), middleware.WithProviders(careless{}), middleware.WithSyncSinks())
	defer rec.Close()
	q := "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + keyID + "%2F20260303%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Security-Token=" +
		strings.NewReplacer("/", "%2F", "+", "%2B", "=", "%3D").Replace(token) + "&X-Amz-Signature=" + sig
	req, _ := http.NewRequest(http.MethodPost, srv+"/model/m/chat?"+q, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+keyID+"/20260303/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="+sig)
	req.Header.Set("X-Amz-Security-Token", token)
	resp, err := rec.Client(nil).Do(req)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(got), token, "the server echoed the token")

	require.NoError(t, rec.Flush())
	records := rec.History().Records()
	require.Len(t, records, 1)
	all := string(records[0].AppendJSON(nil)) + records[0].ErrorMessage
	assert.Contains(t, all, "X-Amz-Algorithm=AWS4-HMAC-SHA256", "the URL is kept, less its secrets")
	for _, secret := range []string{keyID, token, strings.TrimRight(token, "="), sig, "CANARY"} {
		assert.NotContains(t, all, secret)
	}
}
