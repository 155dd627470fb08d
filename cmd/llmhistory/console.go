package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lmittmann/tint"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// ANSI colours (tint.Attr takes the 8-bit palette index).
const (
	colorRed     uint8 = 9
	colorYellow  uint8 = 11
	colorMagenta uint8 = 13
	colorCyan    uint8 = 14
)

// console prints records for people, one tint line each: the record's own
// time, its method as the message, errors at level ERROR (red), and the
// facts worth a glance highlighted: retries folded into the record in
// yellow, a detected history read in magenta.
//
// On a terminal a line fits its width (width > 0): the least telling
// attributes are left out, and an error message shortened, rather than the
// line wrapped.
type console struct {
	w       io.Writer
	color   bool
	width   int  // columns a line may take; 0: no limit
	noTrace bool // leave the trace out: the demo names each under its heading
}

func newConsole(w io.Writer, color bool, width int) *console {
	return &console{w: w, color: color, width: width}
}

func (c *console) handler(w io.Writer, color bool) slog.Handler {
	return tint.NewTextHandler(w, &tint.Options{NoColor: !color, TimeFormat: "15:04:05.000"})
}

// item is an attribute of a console line: its colour (0 for none), and
// how soon it is left out when the line is too long (higher first).
type item struct {
	attr  slog.Attr
	color uint8
	drop  int
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
	var items []item
	add := func(drop int, color uint8, a slog.Attr) {
		items = append(items, item{attr: a, color: color, drop: drop})
	}
	add(6, 0, slog.String("call", shortID(r.CallID)))
	if r.TraceID != "" && !c.noTrace {
		add(9, 0, slog.String("trace", r.TraceID))
	}
	if r.ParentCallID != "" {
		add(5, 0, slog.String("parent", shortID(r.ParentCallID)))
	}
	if r.Depth != nil && *r.Depth > 0 {
		add(4, 0, slog.Int("depth", *r.Depth))
	}
	add(2, 0, slog.String("speaker", r.Speaker))
	if r.Model != "" {
		add(7, 0, slog.String("model", r.Model))
	}
	if r.Outcome.OK {
		add(1, 0, slog.String("outcome", nonEmpty(r.Outcome.ValueClass, r.Outcome.Status)))
	} else {
		add(0, colorRed, slog.String("error", nonEmpty(r.FailureType(), r.Outcome.Status)))
		if r.Outcome.HTTPStatus != 0 {
			add(3, colorRed, slog.Int("http", r.Outcome.HTTPStatus))
		}
		if r.ErrorMessage != "" {
			add(1, colorRed, slog.String("message", clip(r.ErrorMessage, 120)))
		}
	}
	if r.DurationMS > 0 {
		add(1, 0, slog.Duration("took", time.Duration(r.DurationMS*float64(time.Millisecond)).Round(100*time.Microsecond)))
	}
	if r.Attempts > 1 {
		add(0, colorYellow, slog.Int("attempts", r.Attempts))
	}
	if r.Usage != nil {
		add(3, 0, slog.String("tokens", fmt.Sprintf("%d→%d", r.Usage.InputTokens, r.Usage.OutputTokens)))
	}
	if r.HistoryGuidance {
		add(9, colorCyan, slog.Bool("guidance", true))
	}
	add(8, 0, slog.Int("history_size", r.ConversationHistorySize))
	if r.HistoryAccessDetected {
		add(0, colorMagenta, slog.String("history_read", strings.Join(r.HistoryQueryPatterns, ",")))
	}
	if !r.HistoryRecordAppended {
		add(0, colorYellow, slog.Bool("appended", false))
	}
	if c.width > 0 {
		items = c.fit(t, level, msg, items)
	}
	lr := slog.NewRecord(t.Local(), level, msg, 0)
	for _, it := range items {
		if it.color != 0 {
			lr.AddAttrs(tint.Attr(it.color, it.attr))
		} else {
			lr.AddAttrs(it.attr)
		}
	}
	_ = c.handler(c.w, c.color).Handle(context.Background(), lr)
}

// fit makes the line fit c.width columns: it leaves out the most
// expendable attributes first (drop 4 and up), then shortens an error
// message (while 20 characters of it are left, else leaves it out), then
// leaves out the rest (drop 1 to 3). What has drop 0 stays.
func (c *console) fit(t time.Time, level slog.Level, msg string, items []item) []item {
	var buf bytes.Buffer
	plain := c.handler(&buf, false)
	worst := func(least int) int {
		w := -1
		for i, it := range items {
			if it.drop >= least && (w < 0 || it.drop > items[w].drop) {
				w = i
			}
		}
		return w
	}
	for {
		buf.Reset()
		lr := slog.NewRecord(t.Local(), level, msg, 0)
		for _, it := range items {
			lr.AddAttrs(it.attr)
		}
		_ = plain.Handle(context.Background(), lr)
		over := utf8.RuneCount(bytes.TrimRight(buf.Bytes(), "\n")) - c.width
		if over <= 0 {
			return items
		}
		if w := worst(4); w >= 0 {
			items = slices.Delete(items, w, w+1)
			continue
		}
		if i := slices.IndexFunc(items, func(it item) bool { return it.attr.Key == "message" }); i >= 0 {
			if m := []rune(items[i].attr.Value.String()); len(m)-over-1 >= 20 {
				items[i].attr = slog.String("message", strings.TrimRight(string(m[:len(m)-over-1]), " ")+"…")
			} else {
				items = slices.Delete(items, i, i+1) // too short to say anything: the rest stays
			}
			continue
		}
		w := worst(1)
		if w < 0 {
			return items // nothing left to leave out: the terminal wraps it
		}
		items = slices.Delete(items, w, w+1)
	}
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

// A conversation on the console: its turns, one speaker a line, wrapped to
// the screen, the records that go with them (print) after each.

// turnLines is how many lines one turn of a conversation may take on a
// terminal: a long answer from a real model is cut, not scrolled.
const turnLines = 3

// heading opens a conversation: who is talking, and under which trace.
func (c *console) heading(text string) {
	fmt.Fprintf(c.w, "── %s\n", text)
}

// line shows one turn of a conversation, redacted like a record: the
// screen may be shared or its output kept in a file.
func (c *console) line(who, text string) { c.lineIn(turnLines, who, text) }

// lineIn is line in at most maxLines lines on a terminal.
func (c *console) lineIn(maxLines int, who, text string) {
	w := c.turn(who)
	w.maxLines = maxLines
	w.WriteString(strings.TrimSpace(text))
	w.end("")
}

// turn starts a turn of a conversation; what is written to it is wrapped
// to the screen's width.
func (c *console) turn(who string) *wrapper {
	fmt.Fprintf(c.w, "%14s ▸ ", who)
	return &wrapper{w: c.w, width: c.width, indent: 17, col: 17, maxLines: turnLines}
}

// note explains what the next call shows.
func (c *console) note(text string) {
	fmt.Fprintf(c.w, "  # %s\n", text)
}

// summary writes one line of a closing summary, wrapped to the screen
// under its own indent.
func (c *console) summary(text string) {
	indent := len(text) - len(strings.TrimLeft(text, " "))
	w := &wrapper{w: c.w, width: c.width, indent: indent + 2, col: indent, maxLines: 1 << 20}
	io.WriteString(c.w, text[:indent])
	w.WriteString(text[indent:])
	w.end("")
}

// wrapper writes the text of a turn, redacted, wrapped at word boundaries
// to width columns with a hanging indent, and cut after maxLines lines.
// Without a width (not a terminal) it writes the text on one line.
type wrapper struct {
	w             io.Writer
	width, indent int
	col, lines    int
	maxLines      int
	word          strings.Builder
	space         bool // a space is due before the next word
	started       bool // the current line has a word
	cut           bool
}

func (w *wrapper) WriteString(s string) {
	for _, c := range s {
		if c == '\n' || c == '\r' || c == '\t' {
			c = ' '
		}
		if c == ' ' {
			w.flushWord()
			w.space = true
			continue
		}
		w.word.WriteRune(c)
	}
}

func (w *wrapper) flushWord() {
	if w.word.Len() == 0 {
		return
	}
	word := redact.Secrets(w.word.String())
	w.word.Reset()
	n := len([]rune(word))
	if w.space && w.started {
		n++
	}
	if w.width > 0 && w.col+n > w.width && w.started {
		if w.lines+1 >= w.maxLines {
			if !w.cut {
				io.WriteString(w.w, "…")
			}
			w.cut = true
			return
		}
		fmt.Fprintf(w.w, "\n%*s", w.indent, "")
		w.col, w.lines, w.space, w.started = w.indent, w.lines+1, false, false
	}
	if w.space && w.started {
		w.put(" ")
	}
	w.space, w.started = false, true
	w.put(word)
}

func (w *wrapper) put(s string) {
	if w.cut {
		return
	}
	io.WriteString(w.w, s)
	w.col += len([]rune(s))
}

// end finishes the turn with suffix, on the same line if it fits.
func (w *wrapper) end(suffix string) {
	w.flushWord()
	if !w.cut && suffix != "" {
		w.put(suffix)
	}
	io.WriteString(w.w, "\n")
}
