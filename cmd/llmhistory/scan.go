package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmhistory/llmhistory/detect"
)

func init() {
	register("scan", "find history queries in generated code", runScan)
}

// maxScanBytes bounds what scan reads from one input: generated code is
// small, and a wrong argument (a disk image, /dev/zero) must not eat memory.
const maxScanBytes = 64 << 20

const scanAbout = `Scan runs the history-query detector over each FILE (- or none: standard
input) and prints whether the code reads the history, how (the pattern
tags), and where, one finding per line as FILE:LINE.

The language comes from -lang, else from the file's extension (.rb, .py,
.js, .ts, .go, ...); other files are read as a model's output, where fenced
code blocks are scanned in their own language. -name adds a name the
history goes by; -json prints one object per input with the record's keys
(history_access_detected, history_query_patterns), the languages and the
findings. An input over 64 MiB is refused.

  $ llmhistory scan tool.rb
  tool.rb: history access, tags filter,slice, language ruby
    tool.rb:1-2  filter  .select { |r| r[:speaker] == "user" }
    tool.rb:1-3  slice   .last(3)`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runScan(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("scan", "[flags] [FILE...]", scanAbout, io)
	lang := fs.String("lang", "", "language of every input (ruby, python, javascript, typescript, go); default: from the extension")
	asJSON := fs.Bool("json", false, "print one JSON object per input instead of text")
	var names stringList
	fs.Var(&names, "name", "another name the history goes by, besides "+detect.DefaultName+" (repeatable)")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	forced := detect.Unknown
	if *lang != "" {
		if forced = detect.ParseLanguage(*lang); forced == detect.Unknown {
			fmt.Fprintf(io.err, "llmhistory scan: unknown language %q\n", *lang)
			return exitUsage
		}
	}
	d := detect.New(names...)
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := exitOK
	for _, name := range files {
		if ctx.Err() != nil {
			return exitFailure
		}
		code, err := readInput(name, io.in)
		if err != nil {
			fmt.Fprintf(io.err, "llmhistory scan: %v\n", err)
			status = exitFailure
			continue
		}
		res := scanOne(d, name, code, forced)
		if *asJSON {
			err = writeScanJSON(io.out, name, res)
		} else {
			err = writeScanText(io.out, name, code, res)
		}
		if err != nil {
			fmt.Fprintf(io.err, "llmhistory scan: %v\n", err)
			return exitFailure
		}
	}
	return status
}

// readInput reads a whole file, or stdin for "-", refusing more than
// maxScanBytes.
func readInput(name string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	display := "standard input"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return "", fmt.Errorf("%s: is a directory; scan reads files", name)
		}
		r, display = f, name
	}
	b, err := io.ReadAll(io.LimitReader(r, maxScanBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", display, bare(err))
	}
	if len(b) > maxScanBytes {
		return "", fmt.Errorf("%s: larger than %d MiB; scan generated code, not whole logs", display, maxScanBytes>>20)
	}
	return string(b), nil
}

func scanOne(d *detect.Detector, name, code string, forced detect.Language) detect.Result {
	lang := forced
	if lang == detect.Unknown && name != "-" {
		lang = detect.ParseLanguage(strings.TrimPrefix(filepath.Ext(name), "."))
	}
	if lang == detect.Unknown {
		return d.ScanOutput(code)
	}
	return d.Scan(code, lang)
}

func writeScanText(w io.Writer, name, code string, res detect.Result) error {
	if name == "-" {
		name = "<stdin>"
	}
	if !res.Access {
		_, err := fmt.Fprintf(w, "%s: no history access\n", name)
		return err
	}
	langs := make([]string, len(res.Languages))
	for i, l := range res.Languages {
		langs[i] = l.String()
	}
	tags := strings.Join(res.Tags.Names(), ",")
	if res.Tags.Len() == 0 {
		tags = "(none)"
	}
	if _, err := fmt.Fprintf(w, "%s: history access, tags %s, language %s\n", name, tags, strings.Join(langs, ",")); err != nil {
		return err
	}
	lines := strings.Split(code, "\n")
	for _, f := range res.Findings {
		text := ""
		if f.EndLine >= 1 && f.EndLine <= len(lines) {
			text = clip(lines[f.EndLine-1], 100)
		}
		where := fmt.Sprintf("%s:%d", name, f.Line)
		if f.EndLine != f.Line {
			where += fmt.Sprintf("-%d", f.EndLine)
		}
		if _, err := fmt.Fprintf(w, "  %s\t%s\t%s\n", where, f.Tag, text); err != nil {
			return err
		}
	}
	return nil
}

// scanJSON is the -json shape: stable keys, tags as in records.
type scanJSON struct {
	File      string        `json:"file"`
	Access    bool          `json:"history_access_detected"`
	Tags      []string      `json:"history_query_patterns"`
	Languages []string      `json:"languages"`
	Findings  []findingJSON `json:"findings"`
}

type findingJSON struct {
	Tag      string `json:"tag"`
	Language string `json:"language"`
	Line     int    `json:"line"`
	EndLine  int    `json:"end_line"`
}

func writeScanJSON(w io.Writer, name string, res detect.Result) error {
	out := scanJSON{File: name, Access: res.Access, Tags: res.Tags.Names(), Languages: []string{}, Findings: []findingJSON{}}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	for _, l := range res.Languages {
		out.Languages = append(out.Languages, l.String())
	}
	for _, f := range res.Findings {
		out.Findings = append(out.Findings, findingJSON{Tag: f.Tag.String(), Language: f.Language.String(), Line: f.Line, EndLine: f.EndLine})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

var _ flag.Value = (*stringList)(nil)
