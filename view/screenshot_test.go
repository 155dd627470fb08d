package view_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/view"
)

// TestScreenshots draws the viewer's pages in Chromium, at a laptop's
// width and a phone's, light and dark, into the directory
// LLMHISTORY_SCREENSHOTS names:
//
//	LLMHISTORY_SCREENSHOTS=$PWD/docs/img go test ./view -run TestScreenshots
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("LLMHISTORY_SCREENSHOTS")
	if dir == "" {
		t.Skip("set LLMHISTORY_SCREENSHOTS to a directory to draw the viewer's pages")
	}
	b := newBrowser(t)
	tmp := t.TempDir()
	generated := filepath.Join(tmp, "service.jsonl")
	f, err := os.Create(generated)
	require.NoError(t, err)
	require.NoError(t, writeHistory(f, genOptions{Records: 900, Seed: 7, Start: time.Now().UTC().Add(-50 * time.Hour).Truncate(time.Hour), Span: 49 * time.Hour}))
	require.NoError(t, f.Close())
	recorded := filepath.Join(tmp, "history.jsonl")
	recordHistorySlowly(t, recorded, 400*time.Millisecond)

	src, err := view.OpenJSONL([]string{generated, recorded}, view.JSONLOptions{})
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, src.Wait(context.Background()))
	srv := httptest.NewServer(view.NewHandler(src, view.Options{}))
	defer srv.Close()
	think, err := src.Trace(context.Background(), view.TraceQuery{ID: "think"})
	require.NoError(t, err)
	thinkCall := think.Calls[0].Record.CallID

	pages := []struct{ name, path, ready string }{
		{"conversations", "/", "#conversations tbody tr"},
		{"transcript", "/c/trip", "#transcript .call"},
		{"call", "/call/" + thinkCall, "#raw"},
		{"overview", "/overview", "#chart-calls"},
		{"spend", "/overview#spend-model", "#spend-model"},
	}
	for _, theme := range []string{"light", "dark"} {
		for _, size := range []struct{ w, h int64 }{{1280, 1000}, {390, 844}} {
			for _, p := range pages {
				_, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: theme}},
				})
				require.NoError(t, err)
				b.do(t,
					chromedp.EmulateViewport(size.w, size.h),
					chromedp.Navigate(srv.URL+p.path),
					chromedp.WaitVisible(chromedp.CSS(p.ready)),
					chromedp.Sleep(200*time.Millisecond),
				)
				png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
				require.NoError(t, err)
				name := filepath.Join(dir, fmt.Sprintf("view-%s-%d-%s.png", p.name, size.w, theme))
				require.NoError(t, os.WriteFile(name, png, 0o644))
				t.Logf("wrote %s", name)
			}
		}
	}
}
