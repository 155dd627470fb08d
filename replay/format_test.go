package replay_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/llmhistory/llmhistory/replay"
)

// twoLines records a cassette of a JSON answer and a streamed one and
// returns its two lines.
func twoLines(t *testing.T) (plain, stream string) {
	t.Helper()
	path := cassettePath(t)
	srv := newFake(t,
		reply{body: testdata(t, "gemini/gemini_generate_response.json")},
		reply{frames: events(testdata(t, "gemini/gemini_stream.sse"))})
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, c.Client(), srv.URL()+"/v1beta/models/gemini-2.0-flash:generateContent", `{"contents":[{"parts":[{"text":"Hi"}]}]}`))
	readAll(t, post(t, c.Client(), srv.URL()+"/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"Hi"}]}]}`))
	require.NoError(t, c.Close())
	ls := lines(t, path)
	require.Len(t, ls, 2)
	return ls[0], ls[1]
}

func set(t *testing.T, line, path string, v any) string {
	t.Helper()
	out, err := sjson.Set(line, path, v)
	require.NoError(t, err)
	return out
}

func TestBadCassettesNameTheLine(t *testing.T) {
	plain, stream := twoLines(t)
	tests := []struct {
		name    string
		file    string
		line    int
		want    string
		version bool
	}{
		{"truncated last line", plain + "\n" + stream[:len(stream)/2], 2, "truncated: the file ends in the middle of this line", false},
		{"malformed line", plain + "\n{\"version\":1,\n" + stream + "\n", 2, "malformed JSON", false},
		{"not a cassette", "hello\n", 1, "malformed JSON", false},
		{"no version", set(t, plain, "version", nil) + "\n", 1, "no version", false},
		{"a newer version", plain + "\n\n" + set(t, stream, "version", 2) + "\n", 3, "version 2 is newer than this package reads (1)", true},
		{"a response body edited", set(t, plain, "response.body.candidates.0.content.parts.0.text", "edited") + "\n", 1, "response body do not match their sha256", false},
		{"a frame edited", plain + "\n" + set(t, stream, "response.frames.1.text", "data: {}\r\n\r\n") + "\n", 2, "response frames do not match their sha256", false},
		{"frames moved", plain + "\n" + moveByte(t, stream) + "\n", 2, "do not match their sha256", false},
		{"no sha256", set(t, plain, "response.sha256", "") + "\n", 1, "no sha256", false},
		{"two forms of a body", set(t, plain, "request.body_base64", "AAAA") + "\n", 1, "body given in more than one form", false},
		{"bad base64", set(t, del(t, plain, "request.body"), "request.body_base64", "@@@") + "\n", 1, "request body_base64: illegal base64", false},
		{"bad time", set(t, stream, "response.frames.0.at_ms", -5) + "\n", 1, "response frame 0 at_ms: -5", false},
		{"neither response nor error", set(t, plain, "response", nil) + "\n", 1, "neither a response nor an error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := replay.Read(strings.NewReader(tt.file))
			var le *replay.LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, tt.version, errors.Is(err, replay.ErrUnsupportedVersion))

			path := cassettePath(t)
			require.NoError(t, writeFile(path, tt.file))
			_, err = replay.New(path)
			require.ErrorAs(t, err, &le)
			assert.Contains(t, err.Error(), path+":"+strconv.Itoa(tt.line)+": ", "New names the file and the line")
		})
	}
}

func del(t *testing.T, line, path string) string {
	t.Helper()
	out, err := sjson.Delete(line, path)
	require.NoError(t, err)
	return out
}

// moveByte moves the last byte of frame 0 to the start of frame 1: the
// same bytes in all, other frame boundaries.
func moveByte(t *testing.T, line string) string {
	f0 := gjson.Get(line, "response.frames.0.text").String()
	f1 := gjson.Get(line, "response.frames.1.text").String()
	line = set(t, line, "response.frames.0.text", f0[:len(f0)-1])
	return set(t, line, "response.frames.1.text", f0[len(f0)-1:]+f1)
}

func TestReadToleratesWhatItCan(t *testing.T) {
	plain, stream := twoLines(t)
	file := "\n" + set(t, plain, "future_field", map[string]any{"x": 1}) + "\n\n" + stream // no final newline
	its, err := replay.Read(strings.NewReader(file))
	require.NoError(t, err)
	require.Len(t, its, 2)
	assert.False(t, its[0].Response.Stream)
	assert.True(t, its[1].Response.Stream)
	assert.Equal(t, "/v1beta/models/gemini-2.0-flash:streamGenerateContent", its[1].Request.URL.Path)
	assert.Equal(t, string(testdata(t, "gemini/gemini_stream.sse")), string(bytes.Join(frameData(its[1].Response.Frames), nil)))
	assert.Equal(t, string(testdata(t, "gemini/gemini_generate_response.json")), string(its[0].Response.Body))
}

func frameData(fs []replay.Frame) [][]byte {
	out := make([][]byte, len(fs))
	for i, f := range fs {
		out[i] = f.Data
	}
	return out
}

func TestReadThenWriteGivesTheSameFile(t *testing.T) {
	plain, stream := twoLines(t)
	file := plain + "\n" + stream + "\n"
	its, err := replay.Read(strings.NewReader(file))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, replay.Write(&buf, its))
	assert.Equal(t, file, buf.String())
}
