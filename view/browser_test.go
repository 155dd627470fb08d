package view_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The viewer is tested in a real browser: headless Chromium, driven with
// chromedp. Without Chromium the tests skip, unless
// LLMHISTORY_REQUIRE_CHROMIUM is set (CI sets it): then they fail, so
// that a CI machine that lost Chromium cannot pass without them.

// chromium returns the browser's path, or skips (or fails) the test.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{os.Getenv("LLMHISTORY_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LLMHISTORY_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not installed, and LLMHISTORY_REQUIRE_CHROMIUM is set")
	}
	t.Skip("chromium not installed (set LLMHISTORY_CHROMIUM to its path)")
	return ""
}

// browser is a headless Chromium tab and what it reported.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	dialogs  []string // JavaScript dialogs opened (alert, confirm, prompt)
	problems []string // errors the page logged: CSP violations, exceptions
}

// newBrowser starts Chromium with a fresh profile and returns a tab that
// records every dialog (and dismisses it) and every error the page logs.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	path := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), // containers often have a tiny /dev/shm
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout
		t.Fatalf("chromium: %v", err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	entries := chromedp.Events(ctx, log.EntryAdded)
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.note(&b.dialogs, string(ev.Type)+": "+ev.Message)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if ev.Entry != nil && ev.Entry.Level == log.EntryLevelError {
				b.note(&b.problems, ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			if d := ev.ExceptionDetails; d != nil {
				b.note(&b.problems, "exception: "+d.Text)
			}
		}
	}()
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return b
}

func (b *browser) note(list *[]string, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*list = append(*list, s)
}

// do runs actions, each step bounded so that a page that never shows what
// is waited for fails the test instead of hanging it.
func (b *browser) do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// eval returns the value of a JavaScript expression in the page.
func eval[T any](t testing.TB, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("chromium: %s: %v", expr, err)
	}
	return v
}

func (b *browser) reported() (dialogs, problems []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...), append([]string(nil), b.problems...)
}
