package report_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/report"
)

// The HTML report renders in a real browser, offline, with its three
// charts and their bars. Set LLMHISTORY_SCREENSHOT=file.png to keep a
// picture of the page.
func TestHTMLInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed: ", err)
	}
	var data bytes.Buffer
	require.NoError(t, writeRecords(&data, 2000))
	data.Write(encode(t, fixture()...))
	r := build(t, report.Options{}, data.Bytes())

	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	require.NoError(t, err)
	require.NoError(t, r.WriteHTML(f))
	require.NoError(t, f.Close())

	run := func(extra ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		args := append([]string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage", // containers often have a tiny /dev/shm
			"--user-data-dir=" + filepath.Join(dir, "profile"),
		}, extra...)
		args = append(args, "file://"+page)
		cmd := exec.CommandContext(ctx, chromium, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "chromium: %s", stderr.String())
		return out
	}

	dom := string(run("--dump-dom"))
	require.Contains(t, dom, "LLM call history: evidence report")
	charts := svgCharts(dom)
	// Latency: the legend's 3 squares and p50, p90, p99 per method (3
	// methods); patterns: one bar per tag (6 generated, x-custom); errors:
	// one bar per type (4 generated, invalid_request and rate_limit among them).
	assert.Equal(t, map[string]int{"chart-latency": 3 + 3*3, "chart-patterns": 7, "chart-errors": 4}, charts)
	for _, id := range []string{"chart-latency", "chart-patterns", "chart-errors"} {
		assert.Contains(t, dom, `<svg id="`+id+`"`)
	}

	if png := os.Getenv("LLMHISTORY_SCREENSHOT"); png != "" {
		abs, err := filepath.Abs(png)
		require.NoError(t, err)
		run("--window-size=900,2600", "--screenshot="+abs)
		t.Logf("screenshot in %s", abs)
	}
}
