package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"

	"github.com/llmhistory/llmhistory/record"
)

// ANSI colours (tint.Attr takes the 8-bit palette index).
const (
	colorRed     = 9
	colorYellow  = 11
	colorMagenta = 13
	colorCyan    = 14
)

// console prints records for people, one tint line each: the record's own
// time, its method as the message, errors at level ERROR (red), and the
// facts worth a glance highlighted: retries folded into the record in
// yellow, a detected history read in magenta.
type console struct {
	h slog.Handler
}

func newConsole(w io.Writer, color bool) *console {
	return &console{h: tint.NewTextHandler(w, &tint.Options{
		NoColor:    !color,
		TimeFormat: "15:04:05.000",
	})}
}

// print writes one line for r. Like the slog sink, it never shows args,
// kwargs, output or program source: transcripts do not belong on a screen
// someone may be sharing.
func (c *console) print(r record.Record) {
	t, err := record.ParseTime(r.Timestamp)
	if err != nil {
		t = time.Time{}
	}
	level := slog.LevelInfo
	if r.Outcome.Status == record.StatusError {
		level = slog.LevelError
	} else if r.Outcome.Status == record.StatusCanceled {
		level = slog.LevelWarn
	}
	msg := r.MethodName
	if msg == "" {
		msg = "(no method)"
	}
	lr := slog.NewRecord(t.Local(), level, msg, 0)
	lr.AddAttrs(slog.String("call", shortID(r.CallID)))
	if r.TraceID != "" {
		lr.AddAttrs(slog.String("trace", r.TraceID))
	}
	if r.ParentCallID != "" {
		lr.AddAttrs(slog.String("parent", shortID(r.ParentCallID)))
	}
	if r.Depth != nil && *r.Depth > 0 {
		lr.AddAttrs(slog.Int("depth", *r.Depth))
	}
	lr.AddAttrs(slog.String("speaker", r.Speaker))
	if r.Model != "" {
		lr.AddAttrs(slog.String("model", r.Model))
	}
	if r.Outcome.OK {
		lr.AddAttrs(slog.String("outcome", nonEmpty(r.Outcome.ValueClass, r.Outcome.Status)))
	} else {
		et := nonEmpty(r.Outcome.ErrorType, r.ErrorType)
		lr.AddAttrs(tint.Attr(colorRed, slog.String("error", nonEmpty(et, r.Outcome.Status))))
		if r.Outcome.HTTPStatus != 0 {
			lr.AddAttrs(tint.Attr(colorRed, slog.Int("http", r.Outcome.HTTPStatus)))
		}
		if r.ErrorMessage != "" {
			lr.AddAttrs(tint.Attr(colorRed, slog.String("message", clip(r.ErrorMessage, 120))))
		}
	}
	if r.DurationMS > 0 {
		lr.AddAttrs(slog.Duration("took", time.Duration(r.DurationMS*float64(time.Millisecond)).Round(100*time.Microsecond)))
	}
	if r.Attempts > 1 {
		lr.AddAttrs(tint.Attr(colorYellow, slog.Int("attempts", r.Attempts)))
	}
	if r.Usage != nil {
		lr.AddAttrs(slog.String("tokens", fmt.Sprintf("%d→%d", r.Usage.InputTokens, r.Usage.OutputTokens)))
	}
	if r.HistoryGuidance {
		lr.AddAttrs(tint.Attr(colorCyan, slog.Bool("guidance", true)))
	}
	lr.AddAttrs(slog.Int("history_size", r.ConversationHistorySize))
	if r.HistoryAccessDetected {
		lr.AddAttrs(tint.Attr(colorMagenta, slog.String("history_read", strings.Join(r.HistoryQueryPatterns, ","))))
	}
	if !r.HistoryRecordAppended {
		lr.AddAttrs(tint.Attr(colorYellow, slog.Bool("appended", false)))
	}
	_ = c.h.Handle(context.Background(), lr)
}

// shortID keeps the end of a ULID call ID, the part that differs between
// calls made in the same millisecond.
func shortID(id string) string {
	if len(id) > 10 {
		return "…" + id[len(id)-8:]
	}
	return id
}

func nonEmpty(s, fallback string) string {
	if s != "" {
		return s
	}
	return fallback
}

// clip cuts s to at most n bytes on a rune boundary, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// isTerminal reports whether w is a character device, the cheap test for a
// terminal that needs no dependency. NO_COLOR (https://no-color.org) wins.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// useColor decides colour from a -color flag value: auto, always or never.
func useColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "auto", "":
		return isTerminal(w) && os.Getenv("NO_COLOR") == "", nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, fmt.Errorf("-color must be auto, always or never, not %q", mode)
}
