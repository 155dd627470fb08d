package replay_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/replay"
)

// writeCassette writes a cassette of one interaction per body, each a POST
// to /v1/chat/completions answered with a small JSON body, and returns
// its path and size.
func writeCassette(tb testing.TB, bodies []string) (string, int64) {
	tb.Helper()
	u, err := http.NewRequest(http.MethodPost, "https://api.example.com/v1/chat/completions", nil)
	if err != nil {
		tb.Fatal(err)
	}
	its := make([]replay.Interaction, len(bodies))
	for i, b := range bodies {
		its[i] = replay.Interaction{
			Request:  replay.Request{Method: http.MethodPost, URL: u.URL, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(b)},
			Response: &replay.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: 8, Body: []byte(`{"n":1}` + "\n")},
		}
	}
	path := filepath.Join(tb.TempDir(), "scale.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := replay.Write(f, its); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, st.Size()
}

// manyIdentical returns n copies of the ~1 KiB chat request.
func manyIdentical(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = benchRequest
	}
	return out
}

// forSize is how many ~1 KiB interactions make a cassette of about size
// bytes.
func forSize(size int) int { return size / 1070 }

// send posts body through c and reads the answer.
func send(c *http.Client, body string) error {
	return postAndDrain(c, "http://x/v1/chat/completions", body)
}

// deep returns depth nested arrays around leaves copies of leaf:
// [[…[leaf,leaf,…]…]].
func deep(depth, leaves int, leaf string) string {
	var b strings.Builder
	b.WriteString(strings.Repeat("[", depth))
	for i := range leaves {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(leaf)
	}
	b.WriteString(strings.Repeat("]", depth))
	return b.String()
}

// replayAll opens path and sends every body in turn, failing as soon as
// the deadline passes.
func replayAll(tb testing.TB, path string, bodies []string, deadline time.Time) {
	tb.Helper()
	c, err := replay.New(path, replay.WithMode(replay.ModeReplay))
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	client := c.Client()
	for i, b := range bodies {
		if err := send(client, b); err != nil {
			tb.Fatalf("request %d: %v", i, err)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("only %d of %d requests replayed before the deadline: matching is not linear", i+1, len(bodies))
		}
	}
	if u := c.Unused(); len(u) != 0 {
		tb.Fatalf("%d interactions unused", len(u))
	}
}

// TestReplayCostDoesNotGrowWithTheCassette counts the allocations of a
// replayed call in a cassette of 10 identical requests and in one of 1000:
// the same. Each call used to be compared with every recorded request, a
// walk of both bodies that allocates (sorted keys), so 100 times the
// cassette was about 100 times the allocations.
func TestReplayCostDoesNotGrowWithTheCassette(t *testing.T) {
	allocs := func(n int) float64 {
		path, _ := writeCassette(t, manyIdentical(n))
		c, err := replay.New(path, replay.WithMode(replay.ModeReplay), replay.WithRepeatLast())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return testing.AllocsPerRun(2*n, func() {
			req, err := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(benchRequest))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	small, large := allocs(10), allocs(1000)
	t.Logf("allocations per call: %v in a cassette of 10, %v in one of 1000", small, large)
	if large > small+10 {
		t.Fatalf("a call allocates %v times in a cassette of 1000 identical requests, %v in one of 10: matching is not linear", large, small)
	}
}

// TestMatchDeepAmongManyInLinearTime replays a cassette of deeply nested
// bodies that differ only in their last leaf (30 of them, 9000 arrays
// deep). Each request used to build an O(depth²) difference against every
// other recorded request: 1.3 s a request. The bound is a hang bound.
func TestMatchDeepAmongManyInLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("deep bodies")
	}
	const n, depth = 30, 9000
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = deep(depth, 1, fmt.Sprint(i))
	}
	path, _ := writeCassette(t, bodies)
	start := time.Now()
	// The last ones first: each is compared with all the others.
	for i, j := 0, len(bodies)-1; i < j; i, j = i+1, j-1 {
		bodies[i], bodies[j] = bodies[j], bodies[i]
	}
	replayAll(t, path, bodies, start.Add(10*time.Second))
}

// TestMissDeepInLinearTime misses on a body 8192 arrays deep whose 1000
// leaves all differ from the recorded ones: the miss lists 1000
// differences, each with its path, once; it took 21.5 s.
func TestMissDeepInLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("deep bodies")
	}
	const depth = 8192
	path, _ := writeCassette(t, []string{deep(depth, 1000, "1")})
	c, err := replay.New(path, replay.WithMode(replay.ModeReplay))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	err = send(c.Client(), deep(depth, 1000, "2"))
	elapsed := time.Since(start)
	var miss *replay.MissError
	if !errors.As(err, &miss) {
		t.Fatalf("not a miss: %v", err)
	}
	if len(miss.Differences) != 1000 {
		t.Fatalf("%d differences, want 1000", len(miss.Differences))
	}
	want := "body" + strings.Repeat(".0", depth-1) + ".999"
	if d := miss.Differences[999]; d.Field != want || d.Recorded != "1" || d.Got != "2" {
		t.Fatalf("last difference %.80s…: recorded %s, got %s", d.Field, d.Recorded, d.Got)
	}
	if elapsed > 10*time.Second {
		t.Fatalf("the miss took %v: not linear in the body", elapsed)
	}
}

// BenchmarkReplayMany replays, each iteration, a cassette of identical
// ~1 KiB chat requests from its opening to its last request.
//
//	go test ./replay -run '^$' -bench ReplayMany -benchtime 3x
func BenchmarkReplayMany(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
		bodies := manyIdentical(forSize(size))
		path, _ := writeCassette(b, bodies)
		b.Run(fmt.Sprintf("cassette=%dKiB/calls=%d", size>>10, len(bodies)), func(b *testing.B) {
			for b.Loop() {
				replayAll(b, path, bodies, time.Now().Add(time.Hour))
			}
		})
	}
}

// BenchmarkMissDeep misses on a body of depth nested arrays whose 1000
// leaves all differ from the recorded request's.
//
//	go test ./replay -run '^$' -bench MissDeep -benchtime 3x
func BenchmarkMissDeep(b *testing.B) {
	for _, depth := range []int{500, 2000, 8192} {
		path, _ := writeCassette(b, []string{deep(depth, 1000, "1")})
		got := deep(depth, 1000, "2")
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			c, err := replay.New(path, replay.WithMode(replay.ModeReplay))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			client := c.Client()
			for b.Loop() {
				if err := send(client, got); !errors.Is(err, replay.ErrMiss) {
					b.Fatalf("not a miss: %v", err)
				}
			}
		})
	}
}
