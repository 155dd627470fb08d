package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// tableHeader is the header row of the field table in
// docs/record-format.md, cell by cell, lower case.
var tableHeader = []string{"field", "type", "required", "meaning"}

// row is one row of the field table.
type row struct {
	Path     string // "call_id", "outcome_summary.status"
	Type     string // the JSON type in words: "string", "array of objects"
	Required bool
	Meaning  string // Markdown
	Line     int    // 1-based, in the Markdown file
}

// parseFieldTable reads the field table of the record format's page: the
// first Markdown table whose header is field | type | required | meaning.
// The field cell is a code span (`outcome_summary.status`); the required
// cell says yes or no. It fails on a table it cannot read, so that a page
// edited by hand never yields a schema with a field silently missing.
func parseFieldTable(md []byte) ([]row, error) {
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(nil, 1<<20)
	var (
		rows    []row
		line    int
		inTable bool
		sawRule bool
	)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if !inTable {
			if cells, ok := splitRow(text); ok && equalFold(cells, tableHeader) {
				inTable = true
			}
			continue
		}
		cells, ok := splitRow(text)
		if !ok {
			break // the table ends at the first line that is not a row
		}
		if !sawRule {
			if !isRule(cells) {
				return nil, fmt.Errorf("line %d: the field table's header is not followed by a |---| row", line)
			}
			sawRule = true
			continue
		}
		if len(cells) != len(tableHeader) {
			return nil, fmt.Errorf("line %d: %d cells, want %d (field, type, required, meaning)", line, len(cells), len(tableHeader))
		}
		path, ok := codeSpan(cells[0])
		if !ok || path == "" {
			return nil, fmt.Errorf("line %d: the field cell %q is not a code span such as `call_id`", line, cells[0])
		}
		var required bool
		switch strings.ToLower(cells[2]) {
		case "yes":
			required = true
		case "no":
		default:
			return nil, fmt.Errorf("line %d: field %s: required is %q, want yes or no", line, path, cells[2])
		}
		if cells[3] == "" {
			return nil, fmt.Errorf("line %d: field %s has no meaning", line, path)
		}
		rows = append(rows, row{Path: path, Type: cells[1], Required: required, Meaning: cells[3], Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !inTable {
		return nil, fmt.Errorf("no table headed | field | type | required | meaning |")
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("the field table has no rows")
	}
	return rows, nil
}

// splitRow splits a Markdown table row into its trimmed cells. A pipe
// escaped as \| is part of a cell (and stays escaped there, as in
// GitHub's tables, where it splits cells even inside a code span).
func splitRow(line string) ([]string, bool) {
	if len(line) < 2 || line[0] != '|' || line[len(line)-1] != '|' || strings.HasSuffix(line, `\|`) {
		return nil, false
	}
	inner := line[1 : len(line)-1]
	var cells []string
	start := 0
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '\\':
			i++ // the next byte is escaped
		case '|':
			cells = append(cells, strings.TrimSpace(inner[start:i]))
			start = i + 1
		}
	}
	cells = append(cells, strings.TrimSpace(inner[start:]))
	return cells, true
}

func isRule(cells []string) bool {
	for _, c := range cells {
		c = strings.Trim(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

func equalFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// codeSpan returns the text of a cell that is one code span, `like_this`.
func codeSpan(cell string) (string, bool) {
	if len(cell) < 2 || cell[0] != '`' || cell[len(cell)-1] != '`' {
		return "", false
	}
	inner := cell[1 : len(cell)-1]
	if strings.Contains(inner, "`") {
		return "", false
	}
	return inner, true
}

// plainText turns a cell's Markdown into the text of a schema
// description: links keep their text, and an escaped pipe is a pipe.
// Code spans keep their backticks, which editors that show descriptions
// read as code.
func plainText(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); i++ {
		c := md[i]
		switch {
		case c == '\\' && i+1 < len(md) && md[i+1] == '|':
			b.WriteByte('|')
			i++
		case c == '[':
			// [text](target): keep the text.
			end := strings.Index(md[i:], "](")
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			close := strings.IndexByte(md[i+end:], ')')
			if close < 0 || strings.ContainsAny(md[i+1:i+end], "[]") {
				b.WriteByte(c)
				continue
			}
			b.WriteString(md[i+1 : i+end])
			i += end + close
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
