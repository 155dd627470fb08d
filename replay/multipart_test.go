package replay_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/replay"
)

// wav is a short audio file: a RIFF header and samples that are not
// UTF-8, so the cassette keeps the request body as base64.
func wav(tone byte) []byte {
	b := []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x01\x00\x00")
	for i := range 256 {
		b = append(b, byte(i)*tone, 0xff)
	}
	return b
}

func transcribe(language string, audio []byte) func(t *testing.T, base string, hc *http.Client) result {
	return func(t *testing.T, base string, hc *http.Client) result {
		resp, err := goOpenAIClient(base, hc).CreateTranscription(context.Background(), goopenai.AudioRequest{
			Model:    goopenai.Whisper1,
			FilePath: "hello.wav",
			Reader:   bytes.NewReader(audio),
			Language: language,
			Prompt:   "A greeting.",
		})
		require.NoError(t, err)
		return result{values: resp}
	}
}

// go-openai's CreateTranscription draws a new multipart boundary for
// every request, so its body never matched a recording byte for byte.
// Parts are matched one by one, the boundary ignored.
func TestMultipartUploadsReplay(t *testing.T) {
	transcription := []byte(`{"task":"transcribe","language":"english","duration":1.5,"text":"Hello from the recording."}`)
	t.Run("go-openai CreateTranscription", func(t *testing.T) {
		recordAndReplay(t, []reply{{body: transcription}}, nil, transcribe("en", wav(3)))
	})

	t.Run("a changed part is a miss that names it", func(t *testing.T) {
		path := cassettePath(t)
		srv := newFake(t, reply{body: transcription})
		live := newRun(t, path, replay.ModeRecord)
		transcribe("en", wav(3))(t, srv.URL(), live.client)
		live.records(t)
		srv.srv.Close()

		for _, tt := range []struct {
			name     string
			language string
			audio    []byte
			field    string
			recorded string
			got      string
		}{
			{"a form field", "fr", wav(3), "body.parts.3.content", `"en"`, `"fr"`},
			{"the file", "en", wav(5), "body.parts.0.content", "", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				played := newRun(t, path, replay.ModeReplay)
				_, err := goOpenAIClient("http://provider.invalid", played.client).CreateTranscription(context.Background(), goopenai.AudioRequest{
					Model: goopenai.Whisper1, FilePath: "hello.wav", Reader: bytes.NewReader(tt.audio), Language: tt.language, Prompt: "A greeting.",
				})
				var miss *replay.MissError
				require.ErrorAs(t, err, &miss)
				t.Log(err)
				fields := map[string]replay.Difference{}
				for _, d := range miss.Differences {
					fields[d.Field] = d
				}
				require.Contains(t, fields, tt.field, "%v", miss.Differences)
				for f := range fields {
					assert.NotContains(t, f, "boundary")
				}
				if tt.recorded != "" {
					assert.Equal(t, tt.recorded, fields[tt.field].Recorded)
					assert.Equal(t, tt.got, fields[tt.field].Got)
				} else {
					assert.Len(t, fields, 1, "only the file differs: %v", miss.Differences)
					assert.Contains(t, fields[tt.field].Got, `\x`, "bytes that are not text are quoted as Go does")
				}
			})
		}
	})
}

// Part headers are compared (the field name, the file name, the part's
// content type), the boundary and how a client spells its parameters
// are not; WithMatchedHeaders("Content-Type") leaves the boundary out
// too.
func TestMultipartMatchesPartByPart(t *testing.T) {
	form := func(boundary string, parts ...[3]string) (string, []byte) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		require.NoError(t, w.SetBoundary(boundary))
		for _, p := range parts {
			h := map[string][]string{"Content-Disposition": {p[0]}}
			if p[1] != "" {
				h["Content-Type"] = []string{p[1]}
			}
			pw, err := w.CreatePart(h)
			require.NoError(t, err)
			pw.Write([]byte(p[2]))
		}
		require.NoError(t, w.Close())
		return w.FormDataContentType(), b.Bytes()
	}
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"text":"one"}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithMatchedHeaders("Content-Type"))
	ct, body := form("recorded-boundary",
		[3]string{`form-data; name="file"; filename="a.wav"`, "audio/wav", "RIFF...."},
		[3]string{`form-data; name="model"`, "", "whisper-1"})
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/audio/transcriptions", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	readAll(t, mustDo(t, rec, req))
	require.NoError(t, rec.Close())
	srv.srv.Close()

	tests := []struct {
		name  string
		parts [][3]string
		field string // the difference expected; "" for a match
	}{
		{"another boundary, parameters spelt otherwise", [][3]string{
			{`form-data; filename=a.wav; name=file`, "audio/wav", "RIFF...."},
			{`form-data; name=model`, "", "whisper-1"}}, ""},
		{"another file name", [][3]string{
			{`form-data; name="file"; filename="b.wav"`, "audio/wav", "RIFF...."},
			{`form-data; name="model"`, "", "whisper-1"}}, "body.parts.0.header.Content-Disposition"},
		{"another content type", [][3]string{
			{`form-data; name="file"; filename="a.wav"`, "audio/mpeg", "RIFF...."},
			{`form-data; name="model"`, "", "whisper-1"}}, "body.parts.0.header.Content-Type"},
		{"another field name", [][3]string{
			{`form-data; name="file"; filename="a.wav"`, "audio/wav", "RIFF...."},
			{`form-data; name="models"`, "", "whisper-1"}}, "body.parts.1.header.Content-Disposition"},
		{"a part missing", [][3]string{
			{`form-data; name="file"; filename="a.wav"`, "audio/wav", "RIFF...."}}, "body.parts.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := open(t, path, replay.WithMatchedHeaders("Content-Type"))
			ct, body := form(strings.Repeat("b", 20), tt.parts...)
			req, _ := http.NewRequest(http.MethodPost, "http://provider.invalid/v1/audio/transcriptions", bytes.NewReader(body))
			req.Header.Set("Content-Type", ct)
			resp, err := middleware.NewClient(&http.Client{Transport: noNetwork{t}}, c.Middleware()).Do(req)
			if tt.field == "" {
				require.NoError(t, err)
				assert.JSONEq(t, `{"text":"one"}`, readAll(t, resp))
				return
			}
			var miss *replay.MissError
			require.ErrorAs(t, err, &miss)
			require.Len(t, miss.Differences, 1, "%v", miss.Differences)
			assert.Equal(t, tt.field, miss.Differences[0].Field)
		})
	}
}
