package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test vectors of aws-sdk-go-v2's eventstream package (copied in
// testdata/eventstream): every positive one reads as the decoded file
// says, every negative one is damage, said as such.
func TestEventstreamVectors(t *testing.T) {
	dir := filepath.Join("testdata", "eventstream")
	positive, err := os.ReadDir(filepath.Join(dir, "encoded", "positive"))
	require.NoError(t, err)
	require.NotEmpty(t, positive)
	for _, e := range positive {
		t.Run("positive/"+e.Name(), func(t *testing.T) {
			enc, err := os.ReadFile(filepath.Join(dir, "encoded", "positive", e.Name()))
			require.NoError(t, err)
			dec, err := os.ReadFile(filepath.Join(dir, "decoded", "positive", e.Name()))
			require.NoError(t, err)
			var want struct {
				TotalLength int    `json:"total_length"`
				Payload     []byte `json:"payload"`
				Headers     []struct {
					Name  string          `json:"name"`
					Type  int             `json:"type"`
					Value json.RawMessage `json:"value"`
				} `json:"headers"`
			}
			require.NoError(t, json.Unmarshal(dec, &want))
			f, n, err := readFrame(enc)
			require.NoError(t, err)
			assert.Equal(t, want.TotalLength, n)
			assert.Equal(t, string(want.Payload), string(f.payload))
			for _, h := range want.Headers {
				if h.Name == ":event-type" && h.Type == 7 {
					var v []byte
					require.NoError(t, json.Unmarshal(h.Value, &v))
					assert.Equal(t, string(v), string(f.eventType))
				}
			}
		})
	}
	negative, err := os.ReadDir(filepath.Join(dir, "encoded", "negative"))
	require.NoError(t, err)
	require.NotEmpty(t, negative)
	for _, e := range negative {
		t.Run("negative/"+e.Name(), func(t *testing.T) {
			enc, err := os.ReadFile(filepath.Join(dir, "encoded", "negative", e.Name()))
			require.NoError(t, err)
			_, _, err = readFrame(enc)
			var fe *frameError
			require.ErrorAs(t, err, &fe, "%s is damage", e.Name())
		})
	}
}

func TestReadFrameBounds(t *testing.T) {
	enc, err := os.ReadFile(filepath.Join("testdata", "eventstream", "encoded", "positive", "all_headers"))
	require.NoError(t, err)
	for i := range len(enc) {
		_, _, err := readFrame(enc[:i])
		assert.ErrorIs(t, err, errShort, "a frame cut at %d is short, not damaged", i)
	}
	// A length past the bounds is damage at once, not a frame to wait for.
	huge := bytes.Clone(enc[:12])
	huge[0] = 0x7f
	putCRC(huge)
	_, _, err = readFrame(huge)
	var fe *frameError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, fe.Error(), "out of bounds")
}

func putCRC(prelude []byte) {
	sum := crcIEEE(prelude[:8])
	prelude[8], prelude[9], prelude[10], prelude[11] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
}

// resync finds the first whole frame of a tail that starts anywhere.
func TestResync(t *testing.T) {
	one, err := os.ReadFile(filepath.Join("testdata", "eventstream", "encoded", "positive", "payload_one_str_header"))
	require.NoError(t, err)
	stream := bytes.Repeat(one, 4)
	for start := range len(one) + 1 {
		i := resync(stream[start:])
		want := (len(one) - start) % len(one)
		assert.Equal(t, want, i, "tail from %d", start)
	}
	assert.Equal(t, -1, resync(one[1:]))
}

// FuzzEventstream: the frame reader never panics, never reads past its
// input, and says short only of a prefix of something longer.
func FuzzEventstream(f *testing.F) {
	for _, dir := range []string{"positive", "negative"} {
		entries, _ := os.ReadDir(filepath.Join("testdata", "eventstream", "encoded", dir))
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join("testdata", "eventstream", "encoded", dir, e.Name()))
			f.Add(b)
			f.Add(append(bytes.Clone(b), b...))
		}
	}
	f.Add(base64Chunk("chunk", `{"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdG9wIn0="}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		frames := 0
		off, err := scanFrames(b, func(fr frame) bool {
			frames++
			if len(fr.payload) > len(b) {
				t.Fatalf("payload of %d bytes from %d", len(fr.payload), len(b))
			}
			return true
		})
		if off < 0 || off > len(b) {
			t.Fatalf("stopped at %d of %d", off, len(b))
		}
		var fe *frameError
		switch {
		case err == nil:
			if off != len(b) {
				t.Fatalf("no error, stopped at %d of %d", off, len(b))
			}
		case errors.Is(err, errShort), errors.As(err, &fe):
		default:
			t.Fatalf("unexpected error %v", err)
		}
		if i := resync(b); i >= 0 {
			if _, _, err := readFrame(b[i:]); err != nil {
				t.Fatalf("resync to %d, which is no frame: %v", i, err)
			}
		}
	})
}

// base64Chunk encodes one frame by hand (for seeds).
func base64Chunk(event, payload string) []byte {
	var h []byte
	for _, kv := range [][2]string{{":event-type", event}, {":message-type", "event"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7, byte(len(kv[1])>>8), byte(len(kv[1])))
		h = append(h, kv[1]...)
	}
	total := 12 + len(h) + len(payload) + 4
	b := []byte{byte(total >> 24), byte(total >> 16), byte(total >> 8), byte(total), 0, 0, byte(len(h) >> 8), byte(len(h)), 0, 0, 0, 0}
	putCRC(b)
	b = append(b, h...)
	b = append(b, payload...)
	sum := crcIEEE(b)
	return append(b, byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum))
}

func crcIEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
