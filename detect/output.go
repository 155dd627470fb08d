package detect

import (
	"encoding/json"
	"strings"
)

// ScanOutput scans a model's whole output: each fenced code block (``` or
// ~~~, with or without a language tag; untagged blocks have their language
// guessed), or, when there are no fences, the whole output if it reads as
// code. Prose is not code: a mention of the history in a sentence, even in
// backticks, is not an access. Lines count from the start of output.
func (d *Detector) ScanOutput(output string) Result {
	if !d.mentioned(output) {
		return Result{}
	}
	var res Result
	fenced := false
	aliases := map[Language][]string{} // a reply's blocks are one program
	for b := range fencedBlocks(output) {
		fenced = true
		lang := ParseLanguage(b.lang)
		if lang == Unknown {
			if b.lang != "" {
				continue // bash, json, sql...: not a language read here
			}
			lang = Guess(b.code)
		}
		if !d.mentioned(b.code) && len(aliases[lang]) == 0 {
			continue
		}
		var known []string
		r := d.scanWith(b.code, lang, b.line-1, aliases[lang], &known)
		aliases[lang] = known
		res.merge(r)
	}
	if !fenced && looksLikeCode(output) {
		res.merge(d.scan(output, Guess(output), 0))
	}
	return res
}

// codeKeys are the argument names under which tools take code.
var codeKeys = map[string]bool{
	"code": true, "source": true, "source_code": true, "script": true, "program": true, "snippet": true,
	"ruby": true, "python": true, "javascript": true, "js": true, "go": true, "body": true, "content": true, "input": true,
}

// ScanToolArguments scans the JSON arguments of a tool call for code: the
// string fields named like code ("code", "source", "script"...) or that
// read as code, in the language a "language" or "lang" field names, or a
// guessed one. Fields that are not code, and arguments that are not JSON,
// are scanned as a model's output would be.
func (d *Detector) ScanToolArguments(args string) Result {
	if !d.mentioned(args) {
		return Result{}
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return d.ScanOutput(args)
	}
	var res Result
	d.walkArgs(v, Unknown, "", &res)
	return res
}

func (d *Detector) walkArgs(v any, lang Language, key string, res *Result) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"language", "lang", "runtime"} {
			if s, ok := x[k].(string); ok && ParseLanguage(s) != Unknown {
				lang = ParseLanguage(s)
			}
		}
		for k, e := range x {
			d.walkArgs(e, lang, strings.ToLower(k), res)
		}
	case []any:
		for _, e := range x {
			d.walkArgs(e, lang, key, res)
		}
	case string:
		if !d.mentioned(x) {
			return
		}
		switch {
		case codeKeys[key] && !strings.Contains(x, "```") && !strings.Contains(x, "~~~"):
			if lang == Unknown {
				lang = Guess(x)
			}
			res.merge(d.scan(x, lang, 0))
		default:
			res.merge(d.ScanOutput(x))
		}
	}
}

type block struct {
	lang string // the fence's language tag, if any
	code string
	line int // the line of the block's first code line, 1-based
}

// fencedBlocks yields the fenced code blocks of a Markdown text. A block
// that is never closed runs to the end of the text, as half-finished
// output often does.
func fencedBlocks(text string) func(yield func(block) bool) {
	return func(yield func(block) bool) {
		line := 0
		var open string // the fence that opened the current block
		var cur block
		start := -1
		for pos := 0; pos < len(text); {
			end := strings.IndexByte(text[pos:], '\n')
			next := len(text)
			if end >= 0 {
				next = pos + end + 1
			} else {
				end = len(text) - pos
			}
			l := text[pos : pos+end]
			line++
			fence, info, ok := fenceLine(l)
			switch {
			case open == "" && ok:
				open = fence
				cur = block{lang: firstWord(info), line: line + 1}
				start = next
			case open != "" && ok && fence[0] == open[0] && len(fence) >= len(open) && strings.TrimSpace(info) == "":
				cur.code = text[start:pos]
				if !yield(cur) {
					return
				}
				open, start = "", -1
			}
			pos = next
		}
		if open != "" && start >= 0 && start <= len(text) {
			cur.code = text[start:]
			yield(cur)
		}
	}
}

// fenceLine reads a fence: up to three spaces, then three or more ` or ~.
func fenceLine(l string) (fence, info string, ok bool) {
	i := 0
	for i < len(l) && i < 3 && l[i] == ' ' {
		i++
	}
	if i >= len(l) || l[i] != '`' && l[i] != '~' {
		return "", "", false
	}
	c := l[i]
	j := i
	for j < len(l) && l[j] == c {
		j++
	}
	if j-i < 3 {
		return "", "", false
	}
	info = l[j:]
	if c == '`' && strings.IndexByte(info, '`') >= 0 {
		return "", "", false // inline code, not a fence
	}
	return l[i:j], strings.TrimSpace(info), true
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t{,"); i >= 0 {
		return s[:i]
	}
	return s
}

// looksLikeCode reports whether unfenced text is code rather than prose:
// most of its non-blank lines end or start like code, not like sentences.
func looksLikeCode(s string) bool {
	code, prose := 0, 0
	for l := range strings.Lines(s) {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		switch {
		case codeLine(l):
			code++
		default:
			prose++
		}
	}
	return code > 0 && code >= 2*prose
}

func codeLine(l string) bool {
	last := l[len(l)-1]
	switch last {
	case '{', '}', '(', ')', '[', ']', ';', ',', ':', '|':
		return true
	}
	for _, p := range []string{"end", "def ", "return", "import ", "func ", "const ", "let ", "var ", "for ", "if ", "#", "//", "puts ", "print(", "}", "@"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	if strings.Contains(l, " = ") || strings.Contains(l, ":= ") || strings.Contains(l, "=>") || strings.Contains(l, ".each") || strings.Contains(l, "do |") {
		return true
	}
	// A sentence: words, ending with a period, no brackets.
	return false
}

// Guess tells the language of a piece of code from the marks each leaves.
// It falls back on Ruby, the language of the runtime the history
// structure comes from.
func Guess(code string) Language {
	if len(code) > 1024 {
		code = code[:1024] // a language shows itself early; keeps guessing cheap
	}
	var score [5]int
	add := func(l Language, n int, marks ...string) {
		for _, m := range marks {
			if strings.Contains(code, m) {
				score[l] += n
			}
		}
	}
	add(Ruby, 3, "context[:", " do |", "{ |", ".each do", "\nend", "puts ", "&.", ".fetch(:", ".dig(:", "nil", ".empty?", "elsif ")
	add(Ruby, 1, "def ", "=> ", ":", "@")
	add(Python, 3, "def ", "elif ", "import ", "print(", "self.", "None", "True", "False", "lambda ", " for ", "len(", ".get(\"")
	add(Python, 1, "context[\"", "context['", ":\n")
	add(JavaScript, 3, "const ", "let ", "=>", "function ", "console.log", "===", "!==", "interface ", ".forEach(", ".length", "?.")
	add(JavaScript, 1, ";", "context.conversation_history")
	add(Go, 4, "package ", "func ", ":= ", "fmt.", "range ", "[]map[string]", "slices.", "err != nil")
	best := Ruby
	for l := Python; l <= Go; l++ {
		if score[l] > score[best] {
			best = l
		}
	}
	return best
}
