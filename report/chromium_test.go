package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
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
	assert.Contains(t, dom, `<th class="n">First chunk p95</th>`, "the fixture's streamed call")
	charts := svgCharts(dom)
	// Latency: the legend's 3 squares and p50, p90, p99 per method (3
	// methods); patterns: one bar per tag (6 generated, x-custom); errors:
	// one bar per type (4 generated, invalid_request and rate_limit among
	// them); spend: the generated records span 09:00 to 09:08 and the
	// fixture's 10:00, one hour in 2-minute buckets, of which 5 and 1 have
	// a cost.
	assert.Equal(t, map[string]int{"chart-latency": 3 + 3*3, "chart-patterns": 7, "chart-errors": 4, "chart-spend": 5 + 1}, charts)
	for _, id := range []string{"chart-latency", "chart-patterns", "chart-errors", "chart-spend"} {
		assert.Contains(t, dom, `<svg id="`+id+`"`)
	}

	if png := os.Getenv("LLMHISTORY_SCREENSHOT"); png != "" {
		abs, err := filepath.Abs(png)
		require.NoError(t, err)
		run("--window-size=900,2600", "--screenshot="+abs)
		t.Logf("screenshot in %s", abs)
	}
}

// The page's layout, measured in a real browser at a phone's width: no
// timestamp is broken across lines, every quantile of the latency chart
// is labelled without labels running into each other or off the chart,
// and a p50 a hundred times smaller than its p99 is still a bar one can
// see; the spend chart draws a column per second with a cost, and its
// dollar scale and times neither run into each other nor off the chart,
// even with a scale as wide as "$1,250.00". The page forbids scripts; the
// measuring script is added to a copy made for this test only.
func TestHTMLLayoutInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed: ", err)
	}
	var recs []record.Record
	for i := range 100 {
		r := call(fmt.Sprintf("w%d", i), i%60)
		r.MethodName = "anthropic.messages.create"
		r.DurationMS = 100
		if i >= 98 {
			r.DurationMS = 10_000
		}
		// A cost every second of the minute, one of them far above the rest.
		r.Cost = &record.Cost{USD: 0.001 * float64(i%7+1), Table: "t"}
		if i == 50 {
			r.Cost.USD = 1234.5
		}
		recs = append(recs, r)
	}
	recs = append(recs, fixture()...)
	r := build(t, report.Options{}, encode(t, recs...))
	var page bytes.Buffer
	require.NoError(t, r.WriteHTML(&page))
	html := page.String()
	require.Contains(t, html, `<meta http-equiv="Content-Security-Policy"`)
	html = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(html, "")
	html = strings.Replace(html, "</body>", measureScript+"</body>", 1)

	dir := t.TempDir()
	path := filepath.Join(dir, "layout.html")
	require.NoError(t, os.WriteFile(path, []byte(html), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=420,3000", "--dump-dom", "file://"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	m := regexp.MustCompile(`(?s)<pre id="layout">(.*?)</pre>`).FindSubmatch(dom)
	require.NotNil(t, m, "the measuring script ran")
	var got struct {
		Timestamps, BrokenTimestamps int
		Labels                       []string
		Overlaps, Outside            []string
		P50, P99                     float64
		SpendBars                    int
		SpendLabels                  []string
		SpendOverlaps, SpendOutside  []string
	}
	require.NoError(t, json.Unmarshal([]byte(htmlUnescape(string(m[1]))), &got), string(m[1]))
	assert.GreaterOrEqual(t, got.Timestamps, 5, "the provenance, summary and span timestamps")
	assert.Zero(t, got.BrokenTimestamps, "a timestamp broken across lines")
	assert.Contains(t, got.Labels, "p50 100 ms")
	assert.Contains(t, got.Labels, "p99 10 s")
	assert.Len(t, got.Labels, 3*3, "p50, p90 and p99 of each of the 3 methods, labelled")
	assert.Empty(t, got.Overlaps, "labels running into each other")
	assert.Empty(t, got.Outside, "labels cut off by the chart's edge")
	assert.Greater(t, got.P50, got.P99/4, "p50 (%v px) visible next to p99 (%v px)", got.P50, got.P99)

	// 10:00:00 to 10:00:59 in one-second buckets, every one with a cost.
	assert.Equal(t, 60, got.SpendBars, "a column per second with a cost")
	assert.Subset(t, got.SpendLabels, []string{"$0", "$500.00", "$1,000.00", "$1,500.00", "10:00:00"}, "the scale and the times")
	assert.Empty(t, got.SpendOverlaps, "spend chart labels running into each other")
	assert.Empty(t, got.SpendOutside, "spend chart labels or columns cut off by the chart's edge")
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&amp;", "&").Replace(s)
}

const measureScript = `<pre id="layout"></pre><script>
(function () {
  var out = {Timestamps: 0, BrokenTimestamps: 0, Labels: [], Overlaps: [], Outside: [], P50: 0, P99: 0};
  document.querySelectorAll('.ts').forEach(function (e) {
    out.Timestamps++;
    if (e.getClientRects().length !== 1) out.BrokenTimestamps++;
  });
  var svg = document.getElementById('chart-latency');
  var width = svg.viewBox.baseVal.width;
  var boxes = [];
  svg.querySelectorAll('text.q').forEach(function (e) {
    var b = e.getBBox();
    out.Labels.push(e.textContent);
    if (b.x < 0 || b.x + b.width > width) out.Outside.push(e.textContent);
    boxes.push({t: e.textContent, b: b});
  });
  for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
    var a = boxes[i].b, c = boxes[j].b;
    if (a.x < c.x + c.width && c.x < a.x + a.width && a.y < c.y + c.height && c.y < a.y + a.height)
      out.Overlaps.push(boxes[i].t + ' / ' + boxes[j].t);
  }
  svg.querySelectorAll('g').forEach(function (g) {
    if (g.querySelector('title').textContent !== 'anthropic.messages.create') return;
    out.P50 = g.querySelector('rect.p50').getBBox().width;
    out.P99 = g.querySelector('rect.p99').getBBox().width;
  });
  var spend = document.getElementById('chart-spend');
  var sw = spend.viewBox.baseVal.width, sh = spend.viewBox.baseVal.height;
  out.SpendBars = 0; out.SpendLabels = []; out.SpendOverlaps = []; out.SpendOutside = [];
  var inside = function (b) { return b.x >= 0 && b.y >= 0 && b.x + b.width <= sw && b.y + b.height <= sh; };
  var sboxes = [];
  spend.querySelectorAll('text').forEach(function (e) {
    var b = e.getBBox();
    out.SpendLabels.push(e.textContent);
    if (!inside(b)) out.SpendOutside.push(e.textContent);
    sboxes.push({t: e.textContent, b: b});
  });
  for (var i = 0; i < sboxes.length; i++) for (var j = i + 1; j < sboxes.length; j++) {
    var a = sboxes[i].b, c = sboxes[j].b;
    if (a.x < c.x + c.width && c.x < a.x + a.width && a.y < c.y + c.height && c.y < a.y + a.height)
      out.SpendOverlaps.push(sboxes[i].t + ' / ' + sboxes[j].t);
  }
  spend.querySelectorAll('rect.bar').forEach(function (r) {
    out.SpendBars++;
    if (!inside(r.getBBox())) out.SpendOutside.push('column ' + r.querySelector('title').textContent);
  });
  document.getElementById('layout').textContent = JSON.stringify(out);
})();
</script>`
