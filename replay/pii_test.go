package replay_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/redact"
	"github.com/llmhistory/llmhistory/replay"
)

// With WithRedactor, personal data is in no line of the cassette: not in
// the request (body, URL), nor the response (a body, a stream whose
// events split a value), while the caller and the provider got every
// byte. The same request, made again, replays from the redacted lines.
func TestWithRedactorKeepsPersonalDataOutOfTheCassette(t *testing.T) {
	const (
		email = "jane.doe@example.com"
		phone = "+44 20 7946 0958"
		card  = "4111 1111 1111 1111"
	)
	request := `{"messages":[{"role":"user","content":"I am ` + email + `, call ` + phone + `"}]}`
	answer := `{"choices":[{"message":{"content":"Noted, ` + email + `; card ` + card + `."}}]}`
	split := [][]byte{
		[]byte(`data: {"choices":[{"delta":{"content":"Write to jane.d"}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"delta":{"content":"oe@exam"}}]}` + "\n\n"),
		[]byte(`data: {"choices":[{"delta":{"content":"ple.com."}}]}` + "\n\n"),
		[]byte("data: [DONE]\n\n"),
	}
	srv := newFake(t, reply{body: []byte(answer)}, reply{header: map[string]string{"Content-Type": "text/event-stream"}, frames: split})
	red := redact.New(redact.WithKey([]byte("test key")))
	path := cassettePath(t)

	c := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithRedactor(red))
	got := readAll(t, post(t, c.Client(), srv.URL()+"/v1/chat/completions?user="+strings.ReplaceAll(email, "@", "%40"), request))
	assert.Equal(t, answer, got, "the caller got the answer as it was")
	assert.Equal(t, request, string(<-srv.bodies), "the provider got the request as it was")
	stream := readAll(t, post(t, c.Client(), srv.URL()+"/v1/chat/completions", `{"stream":true}`))
	assert.Contains(t, stream, "jane.d", "the caller got the stream as it was")
	require.NoError(t, c.Close())

	file, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, v := range []string{email, "jane.d", "oe@exam", "7946", "4111", "jane.doe%40example.com"} {
		assert.NotContains(t, string(file), v)
	}
	assert.Contains(t, string(file), red.String(email), "replaced by its mark")

	// Replayed: the live request, personal data and all, finds its line.
	c = open(t, path, replay.WithMode(replay.ModeReplay), replay.WithRedactor(red))
	replayed := readAll(t, post(t, c.Client(), srv.URL()+"/v1/chat/completions?user="+strings.ReplaceAll(email, "@", "%40"), request))
	assert.Equal(t, red.String(answer), replayed)
	replayedStream := readAll(t, post(t, c.Client(), srv.URL()+"/v1/chat/completions", `{"stream":true}`))
	assert.Contains(t, replayedStream, red.String(email))
	require.NoError(t, c.Close())
}

// A cassette recorded before the redactor was set still matches: both
// sides are compared redacted.
func TestWithRedactorMatchesAnOlderCassette(t *testing.T) {
	request := `{"messages":[{"role":"user","content":"I am jane@example.com"}]}`
	srv := newFake(t, reply{body: []byte(`{"ok":true}`)})
	path := cassettePath(t)
	c := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, c.Client(), srv.URL()+"/v1/chat/completions", request))
	require.NoError(t, c.Close())

	c = open(t, path, replay.WithMode(replay.ModeReplay), replay.WithRedactor(redact.New()))
	assert.Equal(t, `{"ok":true}`, readAll(t, post(t, c.Client(), srv.URL()+"/v1/chat/completions", request)))
	require.NoError(t, c.Close())
}
