package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return err
	}
	_, err := b.WriteTo(w)
	return err
}

// WriteMarkdown writes the comparison as Markdown: the summary (wins,
// losses and ties per score), the totals per run, then each item with
// each run's output, scores, tokens and cost, and its diff from the
// baseline.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Experiment comparison\n\n")
	fmt.Fprintf(&b, "Baseline: **%s**", c.Runs[0].Label)
	if len(c.Runs) > 1 {
		b.WriteString("; compared: ")
		for i, r := range c.Runs[1:] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "**%s**", r.Label)
		}
	}
	fmt.Fprintf(&b, ". %d items.\n\n", len(c.Items))

	if len(c.Scores) > 0 {
		b.WriteString("## Scores\n\n| score | run | mean | wins | losses | ties |\n|---|---|---:|---:|---:|---:|\n")
		for i, s := range c.Summary {
			base := i%len(c.Runs) == 0
			wlt := [3]string{fmt.Sprint(s.Wins), fmt.Sprint(s.Losses), fmt.Sprint(s.Ties)}
			if base {
				wlt = [3]string{"–", "–", "–"}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(s.Score), mdCell(s.Run), meanText(s.Mean), wlt[0], wlt[1], wlt[2])
		}
		b.WriteString("\n")
	}
	b.WriteString("## Totals\n\n| run | trials | errors | input tokens | output tokens | cost |")
	if !c.Options.NoLatency {
		b.WriteString(" latency |")
	}
	b.WriteString("\n|---|---:|---:|---:|---:|---:|")
	if !c.Options.NoLatency {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, t := range c.Totals {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s |", mdCell(t.Run), t.Trials, t.Errors, t.InputTokens, t.OutputTokens, costText(t.CostUSD, t.Unpriced))
		if !c.Options.NoLatency {
			fmt.Fprintf(&b, " %s |", msText(t.LatencyMS))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Items\n")
	for _, it := range c.Items {
		fmt.Fprintf(&b, "\n### %s\n\n> %s\n\nReference: %s\n\n", it.Item, mdQuote(it.Asked), mdQuote(it.Reference))
		b.WriteString("| run | output |")
		for _, s := range c.Scores {
			fmt.Fprintf(&b, " %s |", mdCell(s))
		}
		b.WriteString(" tokens in/out | cost |\n|---|---|")
		b.WriteString(strings.Repeat("---:|", len(c.Scores)+2))
		b.WriteString("\n")
		for ri, cell := range it.Cells {
			out := cell.Output
			switch {
			case cell.Missing:
				out = "(no trial)"
			case cell.Error != "":
				out = "error: " + cell.Error
			}
			fmt.Fprintf(&b, "| %s | %s |", mdCell(c.Runs[ri].Label), mdCell(out))
			for _, s := range cell.Scores {
				fmt.Fprintf(&b, " %s |", scoreText(s))
			}
			fmt.Fprintf(&b, " %d/%d | %s |\n", cell.InputTokens, cell.OutputTokens, costText(cell.CostUSD, 0))
		}
		for ri, cell := range it.Cells {
			if cell.Diff != "" {
				fmt.Fprintf(&b, "\n<details><summary>diff %s → %s</summary>\n\n```diff\n%s```\n\n</details>\n", mdCell(c.Runs[0].Label), mdCell(c.Runs[ri].Label), cell.Diff)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func mdQuote(s string) string {
	if s == "" {
		return "(none)"
	}
	return mdCell(s)
}

func meanText(m *float64) string {
	if m == nil {
		return "–"
	}
	return fmt.Sprintf("%.3f", *m)
}

func costText(usd float64, unpriced int) string {
	s := fmt.Sprintf("$%.6f", usd)
	if unpriced > 0 {
		s += fmt.Sprintf(" (%d unpriced)", unpriced)
	}
	return s
}

func msText(ms float64) string { return fmt.Sprintf("%.0f ms", ms) }

func scoreText(s ComparedScore) string {
	if s.Value == nil {
		return "–"
	}
	t := s.Value.String()
	if s.Delta != nil && *s.Delta != 0 {
		t += fmt.Sprintf(" (%+g)", *s.Delta)
	}
	switch s.Outcome {
	case "win":
		t += " ▲"
	case "loss":
		t += " ▼"
	}
	return t
}

//go:embed compare.html
var compareHTML string

var compareTemplate = template.Must(template.New("compare").Funcs(template.FuncMap{
	"mean":  meanText,
	"cost":  costText,
	"ms":    msText,
	"score": scoreText,
	"run": func(c *Comparison, i int) string {
		return c.Runs[i].Label
	},
	"difflines": func(d string) []diffLine {
		var out []diffLine
		for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
			k := ""
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				k = "file"
			case strings.HasPrefix(l, "+"):
				k = "add"
			case strings.HasPrefix(l, "-"):
				k = "del"
			case strings.HasPrefix(l, "@@"):
				k = "hunk"
			}
			out = append(out, diffLine{k, l})
		}
		return out
	},
	"notbase": func(i int, c *Comparison) bool { return i%len(c.Runs) != 0 },
}).Parse(compareHTML))

type diffLine struct{ Kind, Text string }

// WriteHTML writes the comparison as one HTML page, with no script and
// its style inline: the report's format, readable from 390 px up.
func (c *Comparison) WriteHTML(w io.Writer) error {
	var b bytes.Buffer
	if err := c.ExecuteHTMLBody(&b); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Experiment comparison</title>"+
		"<style>%s</style></head><body>%s</body></html>\n", CompareCSS, b.String())
	return err
}

// ExecuteHTMLBody writes the comparison's HTML without a page around it,
// for a page of one's own (the viewer's): its classes are CompareCSS's.
func (c *Comparison) ExecuteHTMLBody(w io.Writer) error {
	return compareTemplate.Execute(w, c)
}

// CompareCSS is the style of the comparison's HTML. Its colours are the
// viewer's (--text, --muted, --border ...) where it is in the viewer, dark
// theme included, and its own elsewhere.
const CompareCSS = `
.cmp{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--text,#1d2330);max-width:1200px;margin:0 auto;padding:16px}
.cmp h1{font-size:22px;margin:0 0 4px}.cmp h2{font-size:17px;margin:24px 0 8px}
.cmp .c-sub{color:var(--muted,#5b6475);margin:0 0 12px}
.cmp .c-scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
.cmp table{border-collapse:collapse;width:100%}
.cmp th,.cmp td{border-bottom:1px solid var(--border,#e3e6ec);padding:6px 8px;text-align:left;vertical-align:top}
.cmp th{font-weight:600;color:var(--text,#3a4254);background:var(--code,#f6f7f9);white-space:nowrap}
.cmp td.c-n,.cmp th.c-n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.cmp .c-win{color:var(--ok,#0a7d32);font-weight:600}.cmp .c-loss{color:var(--err,#b42318);font-weight:600}.cmp .c-tie{color:var(--muted,#5b6475)}
.cmp .c-item{border:1px solid var(--border,#e3e6ec);border-radius:8px;padding:12px;margin:14px 0}
.cmp .c-item h3{font:600 13px ui-monospace,SFMono-Regular,Menlo,monospace;margin:0 0 6px;color:var(--muted,#5b6475)}
.cmp .c-asked{margin:0 0 6px}.cmp .c-ref{margin:0 0 10px;color:var(--text,#3a4254)}
.cmp .c-out{white-space:pre-wrap;overflow-wrap:anywhere}
.cmp th.c-wide{min-width:220px}
.cmp .c-err{color:var(--err,#b42318)}
.cmp pre.c-diff{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code,#f6f7f9);padding:8px;margin:6px 0 0;white-space:pre-wrap;overflow-wrap:anywhere;border-radius:6px}
.cmp .c-add{color:var(--ok,#0a7d32)}.cmp .c-del{color:var(--err,#b42318)}.cmp .c-hunk,.cmp .c-file{color:var(--muted,#5b6475)}
.cmp details summary{cursor:pointer;color:var(--text,#3a4254);font-size:13px;margin-top:6px}
@media (max-width:600px){.cmp{padding:10px;font-size:14px}.cmp th,.cmp td{padding:5px 6px}
.cmp table.c-cards tr:first-child{display:none}
.cmp table.c-cards tr{display:block;border-bottom:1px solid var(--border,#e3e6ec);padding:4px 0}
.cmp table.c-cards td{display:inline-block;border:none;padding:2px 10px 2px 0;text-align:left}
.cmp table.c-cards td.c-head{display:block;font-weight:600}.cmp table.c-cards td.c-out{display:block}
.cmp table.c-cards td[data-label]::before{content:attr(data-label) " ";color:var(--muted,#5b6475);font-weight:400}}
`
