package detect

// The lexer turns source text into the few kinds of token the analysis
// needs. Comments are skipped and strings become one token each, so that a
// mention of the history in prose or in a log line is never code. It works
// on the input string without copying: token texts are slices of it.

type tokKind uint8

const (
	tEOF     tokKind = iota
	tIdent           // identifier or keyword (Ruby's may end in ? or !)
	tString          // a string literal; val is its content when it has no escapes or interpolation
	tSymbol          // Ruby :name; val is the name
	tNumber          // a number
	tPunct           // an operator or bracket; text holds it
	tNewline         // the end of a line outside brackets, for statement ends
)

type token struct {
	kind tokKind
	text string // as written
	val  string // string or symbol content
	line int
}

// interp is a string suspended while the code of one of its
// interpolations ("#{...}", "${...}", f"{...}") is lexed.
type interp struct {
	quote  byte   // the string's quote
	triple bool   // Python triple quotes
	depth  int    // brace depth at which the interpolation closes
	opener string // "#{", "${" or "{"
}

type lexer struct {
	src     string
	pos     int
	line    int
	lang    Language
	braces  int // open { of code, for interpolation ends
	stack   [8]interp
	n       int
	heredoc string // Ruby: a heredoc terminator pending for the next line
	prev    tokKind
	prevTxt string
	// wasted counts bytes read ahead and then given back (a '/' that was
	// not a regex after all); with pos, it bounds the lexer's work, which
	// the tests check is linear.
	wasted int
	// noRegex is a line on which a regex scan failed: no more are tried
	// there, or a line of '/[' would be read once per '/'.
	noRegex int

	// For skim: the bracket depth, and where the current statement began.
	depth    int
	stmt     int
	stmtLine int
}

func newLexer(src string, lang Language) lexer {
	return lexer{src: src, line: 1, lang: lang, prev: tNewline, stmtLine: 1}
}

var identStart, identChar [256]bool

// plainPunct holds the bytes that are an operator or a bracket and
// nothing else, in every language: token reads them with punct at once.
// multiStart holds those that may begin an operator of more than one byte.
var plainPunct, multiStart [256]bool

// strStop holds the bytes that may matter inside a string: an escape, a
// line end, a quote, an interpolation's opener. strBody passes the others
// without looking further.
var strStop [256]bool

func init() {
	for c := 0; c < 256; c++ {
		identStart[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
		identChar[c] = identStart[c] || c >= '0' && c <= '9'
	}
	for _, c := range "\\\n\"'`#${" {
		strStop[c] = true
	}
	for _, c := range "()[],.;=!&*+->?^|~\\" {
		plainPunct[c] = true
	}
	for _, c := range "&?:=-!<>." {
		multiStart[c] = true
	}
}

func isIdentStart(c byte) bool { return identStart[c] }

func isIdentChar(c byte) bool { return identChar[c] }

// next reads the next token into t, which the caller owns: tokens are
// filled in place rather than returned, which measurably speeds lexing.
func (l *lexer) next(t *token) {
	l.scan(t)
	if t.kind != tNewline || l.prev != tNewline {
		l.prev, l.prevTxt = t.kind, t.text
	}
}

func (l *lexer) scan(t *token) {
	if l.pos == 0 && l.lang == Ruby && len(l.src) >= 6 && l.src[:6] == "=begin" {
		l.skipRubyBlockComment()
	}
	for {
		if l.pos >= len(l.src) {
			*t = token{kind: tEOF, line: l.line}
			return
		}
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.pos++
			l.line++
			if l.heredoc != "" {
				l.skipHeredoc()
			}
			if l.lang == Ruby && l.pos+6 <= len(l.src) && l.src[l.pos:l.pos+6] == "=begin" {
				l.skipRubyBlockComment()
			}
			if l.prev == tNewline {
				continue
			}
			*t = token{kind: tNewline, text: "\n", line: l.line - 1}
			return
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			// Indentation comes in runs.
			p := l.pos + 1
			for p < len(l.src) && (l.src[p] == ' ' || l.src[p] == '\t') {
				p++
			}
			l.pos = p
		case c == '\\' && l.pos+1 < len(l.src) && (l.src[l.pos+1] == '\n' || l.src[l.pos+1] == '\r'):
			l.pos++ // a line continuation
		case c == '#' && (l.lang == Ruby || l.lang == Python):
			l.skipLine()
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '/' && (l.lang == JavaScript || l.lang == Go || l.lang == Unknown):
			l.skipLine()
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '*' && (l.lang == JavaScript || l.lang == Go || l.lang == Unknown):
			l.skipBlockComment()
		default:
			l.token(t, c)
			return
		}
	}
}

func (l *lexer) skipLine() {
	for l.pos < len(l.src) && l.src[l.pos] != '\n' {
		l.pos++
	}
}

func (l *lexer) skipBlockComment() {
	l.pos += 2
	for l.pos < len(l.src) {
		if l.src[l.pos] == '\n' {
			l.line++
		} else if l.src[l.pos] == '*' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '/' {
			l.pos += 2
			return
		}
		l.pos++
	}
}

// skipRubyBlockComment skips from "=begin" at a line start to "=end".
func (l *lexer) skipRubyBlockComment() {
	for l.pos < len(l.src) {
		start := l.pos
		l.skipLine()
		line := l.src[start:l.pos]
		if l.pos < len(l.src) {
			l.pos++
			l.line++
		}
		if len(line) >= 4 && line[:4] == "=end" {
			return
		}
	}
}

// skipHeredoc skips the body of a Ruby heredoc up to its terminator line.
func (l *lexer) skipHeredoc() {
	term := l.heredoc
	l.heredoc = ""
	for l.pos < len(l.src) {
		start := l.pos
		l.skipLine()
		line := trimSpace(l.src[start:l.pos])
		if l.pos < len(l.src) {
			l.pos++
			l.line++
		}
		if line == term {
			return
		}
	}
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// operandBefore reports whether the previous token ends an operand, after
// which '/' divides and '%' is a remainder rather than starting a literal.
func (l *lexer) operandBefore() bool {
	switch l.prev {
	case tIdent:
		switch l.prevTxt {
		case "return", "if", "unless", "when", "and", "or", "not", "typeof", "case", "in", "of", "yield":
			return false
		}
		return true
	case tNumber, tString, tSymbol:
		return true
	case tPunct:
		return l.prevTxt == ")" || l.prevTxt == "]" || l.prevTxt == "}"
	}
	return false
}

func (l *lexer) token(t *token, c byte) {
	if plainPunct[c] {
		l.punct(t, l.pos) // most tokens of code are brackets and such
		return
	}
	src := l.src
	start := l.pos
	switch {
	case isIdentStart(c) || c == '@' && l.lang == Ruby && l.pos+1 < len(src) && (isIdentStart(src[l.pos+1]) || src[l.pos+1] == '@'):
		p := l.pos + 1 // @ivar and @@cvar are one identifier
		for p < len(src) && src[p] == '@' {
			p++
		}
		for p < len(src) && identChar[src[p]] {
			p++
		}
		l.pos = p
		if l.lang == Ruby && l.pos < len(src) && (src[l.pos] == '?' || src[l.pos] == '!') &&
			(l.pos+1 >= len(src) || src[l.pos+1] != '=' && src[l.pos+1] != ':') {
			l.pos++ // any?, empty?, map!
		}
		word := src[start:l.pos]
		if l.pos < len(src) && (src[l.pos] == '"' || src[l.pos] == '\'') && l.lang == Python && isStringPrefix(word) {
			l.str(t, src[l.pos], start, hasF(word))
			return
		}
		*t = token{kind: tIdent, text: word, line: l.line}
		return
	case c >= '0' && c <= '9':
		l.pos++
		for l.pos < len(src) && (isIdentChar(src[l.pos]) || src[l.pos] == '.' && l.pos+1 < len(src) && src[l.pos+1] >= '0' && src[l.pos+1] <= '9') {
			l.pos++
		}
		*t = token{kind: tNumber, text: src[start:l.pos], line: l.line}
		return
	case c == '"' || c == '\'':
		if c == '\'' && l.lang == Go {
			*t = l.quoted(c, start) // a rune
			return
		}
		interpolates := c == '"' && l.lang == Ruby
		l.str(t, c, start, interpolates)
		return
	case c == '`':
		switch l.lang {
		case Go:
			*t = l.raw(start)
			return
		case JavaScript, Ruby, Unknown:
			l.str(t, '`', start, true)
			return
		}
	case c == ':' && l.lang == Ruby && l.pos+1 < len(src) && (isIdentStart(src[l.pos+1]) || src[l.pos+1] == '"') &&
		(l.pos == 0 || src[l.pos-1] != ':' && !isIdentChar(src[l.pos-1]) || l.prev == tPunct || l.prev == tNewline):
		// A symbol, :name or :"name".
		l.pos++
		if src[l.pos] == '"' {
			l.str(t, '"', l.pos, false)
			t.kind, t.text = tSymbol, src[start:l.pos]
			return
		}
		s := l.pos
		for l.pos < len(src) && isIdentChar(src[l.pos]) {
			l.pos++
		}
		if l.pos < len(src) && (src[l.pos] == '?' || src[l.pos] == '!') {
			l.pos++
		}
		*t = token{kind: tSymbol, text: src[start:l.pos], val: src[s:l.pos], line: l.line}
		return
	case c == '%' && l.lang == Ruby && !l.operandBefore():
		if pt, ok := l.percentLiteral(start); ok {
			*t = pt
			return
		}
	case c == '/' && (l.lang == JavaScript || l.lang == Ruby) && l.noRegex != l.line && !l.operandBefore():
		if rt, ok := l.regex(start); ok {
			*t = rt
			return
		}
	case c == '<' && l.lang == Ruby && l.pos+2 < len(src) && src[l.pos+1] == '<' && (src[l.pos+2] == '~' || src[l.pos+2] == '-' || src[l.pos+2] >= 'A' && src[l.pos+2] <= 'Z'):
		// A heredoc: <<~EOS, <<-EOS, <<EOS; its body starts on the next line.
		p := l.pos + 2
		if src[p] == '~' || src[p] == '-' {
			p++
		}
		q := p
		if q < len(src) && (src[q] == '\'' || src[q] == '"') {
			q++
		}
		s := q
		for q < len(src) && (src[q] >= 'A' && src[q] <= 'Z' || src[q] == '_' || src[q] >= '0' && src[q] <= '9') {
			q++
		}
		if q > s {
			l.heredoc = src[s:q]
			if q < len(src) && (src[q] == '\'' || src[q] == '"') {
				q++
			}
			l.pos = q
			*t = token{kind: tString, text: src[start:q], line: l.line}
			return
		}
	case c == '{':
		l.braces++
	case c == '}':
		if l.n > 0 && l.stack[l.n-1].depth == l.braces {
			// The end of an interpolation: back into its string.
			l.n--
			in := l.stack[l.n]
			l.pos++
			l.strBody(t, in, start, true, l.pos) // the rest of the string
			return
		}
		l.braces--
	}
	l.punct(t, start)
}

// punct reads an operator: the multi-byte ones the analysis cares about,
// else one byte.
func (l *lexer) punct(t *token, start int) {
	l.pos = start + punctLen(l.src, start)
	*t = token{kind: tPunct, text: l.src[start:l.pos], line: l.line}
}

// punctLen is the length of the operator at start.
func punctLen(src string, start int) int {
	if !multiStart[src[start]] {
		return 1
	}
	if start+1 < len(src) {
		c, d := src[start], src[start+1]
		switch {
		case c == '&' && d == '.', c == '?' && d == '.', c == ':' && d == ':', c == ':' && d == '=',
			c == '=' && (d == '=' || d == '>'), c == '-' && d == '>', c == '!' && d == '=',
			c == '<' && (d == '=' || d == '<'), c == '>' && d == '=':
			return 2
		case c == '.' && d == '.' && start+2 < len(src) && src[start+2] == '.':
			return 3
		}
	}
	return 1
}

func isStringPrefix(w string) bool {
	if len(w) > 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		switch w[i] | 0x20 {
		case 'r', 'b', 'f', 'u':
		default:
			return false
		}
	}
	return true
}

func hasF(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i]|0x20 == 'f' {
			return true
		}
	}
	return false
}

// str reads a string starting at the quote at l.pos; start is where its
// token begins (a Python prefix included). With interpolates, "#{", "${"
// or "{" (by language) suspends the string and returns to code.
func (l *lexer) str(t *token, q byte, start int, interpolates bool) {
	triple := l.lang == Python && l.pos+2 < len(l.src) && l.src[l.pos+1] == q && l.src[l.pos+2] == q
	if triple {
		l.pos += 3
	} else {
		l.pos++
	}
	l.strBody(t, interp{quote: q, triple: triple}, start, interpolates, l.pos)
}

// strBody reads a string's body from l.pos (its content begins at body)
// into t. With interpolates, an interpolation's opener ends the token
// there and suspends the string on the lexer's stack.
func (l *lexer) strBody(t *token, in interp, start int, interpolates bool, body int) {
	src := l.src
	clean := true // no escapes or interpolation: the content is the value
	p := l.pos
	for p < len(src) {
		// Most bytes of a string are none that could end it, escape or
		// interpolate: pass them in a tight loop.
		for p < len(src) && !strStop[src[p]] {
			p++
		}
		if p >= len(src) {
			break
		}
		c := src[p]
		switch {
		case c == '\\':
			clean = false
			p = min(p+2, len(src))
			continue
		case c == '\n':
			if !in.triple && in.quote != '`' && l.lang != Ruby {
				// An unterminated string ends at the line's end.
				l.pos = p
				*t = token{kind: tString, text: src[start:p], line: l.line}
				return
			}
			l.line++
		case c == in.quote:
			if in.triple {
				if p+2 < len(src) && src[p+1] == c && src[p+2] == c {
					val := ""
					if clean {
						val = src[body:p]
					}
					l.pos = p + 3
					*t = token{kind: tString, text: src[start:l.pos], val: val, line: l.line}
					return
				}
				break
			}
			val := ""
			if clean {
				val = src[body:p]
			}
			l.pos = p + 1
			*t = token{kind: tString, text: src[start:l.pos], val: val, line: l.line}
			return
		case interpolates && l.n < len(l.stack):
			opener := ""
			switch {
			case l.lang == Ruby && c == '#' && p+1 < len(src) && src[p+1] == '{':
				opener = "#{"
			case (l.lang == JavaScript || l.lang == Unknown) && in.quote == '`' && c == '$' && p+1 < len(src) && src[p+1] == '{':
				opener = "${"
			case l.lang == Python && c == '{':
				if p+1 < len(src) && src[p+1] == '{' {
					p += 2 // {{ is a literal brace
					continue
				}
				opener = "{"
			}
			if opener != "" {
				l.pos = p + len(opener)
				l.braces++
				in.depth, in.opener = l.braces, opener
				l.stack[l.n] = in
				l.n++
				*t = token{kind: tString, text: src[start:l.pos], line: l.line}
				return
			}
		}
		p++
	}
	l.pos = p
	*t = token{kind: tString, text: src[start:p], line: l.line} // unterminated
}

// quoted reads a Go rune literal.
func (l *lexer) quoted(q byte, start int) token {
	l.pos++
	for l.pos < len(l.src) && l.src[l.pos] != q && l.src[l.pos] != '\n' {
		if l.src[l.pos] == '\\' {
			l.pos++
		}
		l.pos = min(l.pos+1, len(l.src))
	}
	if l.pos < len(l.src) && l.src[l.pos] == q {
		l.pos++
	}
	return token{kind: tString, text: l.src[start:l.pos], line: l.line}
}

// raw reads a Go raw string.
func (l *lexer) raw(start int) token {
	l.pos++
	body := l.pos
	for l.pos < len(l.src) && l.src[l.pos] != '`' {
		if l.src[l.pos] == '\n' {
			l.line++
		}
		l.pos++
	}
	val := l.src[body:l.pos]
	if l.pos < len(l.src) {
		l.pos++
	}
	return token{kind: tString, text: l.src[start:l.pos], val: val, line: l.line}
}

// percentLiteral reads Ruby's %w[...], %i(...), %q{...} and the like.
func (l *lexer) percentLiteral(start int) (token, bool) {
	src := l.src
	p := l.pos + 1
	if p < len(src) && (src[p] == 'w' || src[p] == 'W' || src[p] == 'i' || src[p] == 'I' || src[p] == 'q' || src[p] == 'Q' || src[p] == 'r') {
		p++
	}
	if p >= len(src) {
		return token{}, false
	}
	open := src[p]
	var close byte
	switch open {
	case '(':
		close = ')'
	case '[':
		close = ']'
	case '{':
		close = '}'
	case '<':
		close = '>'
	case '|', '!', '/':
		close = open
	default:
		return token{}, false
	}
	depth := 0
	for p++; p < len(src); p++ {
		switch c := src[p]; {
		case c == '\\':
			p++
		case c == '\n':
			l.line++
		case c == open && open != close:
			depth++
		case c == close:
			if depth == 0 {
				l.pos = p + 1
				return token{kind: tString, text: src[start:l.pos], line: l.line}, true
			}
			depth--
		}
	}
	l.pos = len(src)
	return token{kind: tString, text: src[start:], line: l.line}, true
}

// regex reads a regular expression literal on one line; a lone '/' with no
// closing one on its line is an operator after all.
func (l *lexer) regex(start int) (token, bool) {
	src := l.src
	class := false
	for p := l.pos + 1; p < len(src); p++ {
		switch src[p] {
		case '\\':
			p++
		case '\n':
			l.wasted += p - l.pos
			l.noRegex = l.line
			return token{}, false
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				p++
				for p < len(src) && isIdentChar(src[p]) {
					p++ // flags
				}
				l.pos = p
				return token{kind: tString, text: src[start:p], line: l.line}, true
			}
		}
	}
	l.wasted += len(src) - l.pos
	l.noRegex = l.line
	return token{}, false
}

// skim moves over code quickly, producing no tokens, until an identifier,
// string or symbol that tg holds (a history name or an alias, or a string
// or symbol equal to a name): it then returns true with pos at its start.
// Along the way it keeps the bracket depth and where the current statement
// began (stmt, stmtLine: the last line start, or the last ';', at depth
// 0), where the analysis of a window starts. Comments and strings are read
// exactly as next reads them, with the same helpers, so that skimming and
// tokenizing never disagree on what is code.
func (l *lexer) skim(tg *targets) bool {
	src := l.src
	if l.pos == 0 && l.lang == Ruby && len(src) >= 6 && src[:6] == "=begin" {
		l.skipRubyBlockComment()
		l.stmt, l.stmtLine = l.pos, l.line
	}
	// In a skimmed Ruby word, '@' is one more word byte.
	wordChar := &identChar
	if l.lang == Ruby {
		wordChar = &rubyWordChar
	}
	for l.pos < len(src) {
		c := src[l.pos]
		start := l.pos
		// A switch on the byte's class is a jump table; the bytes that
		// need the tokenizer's judgement go to skimToken.
		switch skimClass[c] {
		case skNewline:
			l.pos++
			l.line++
			if l.heredoc != "" {
				l.skipHeredoc()
			}
			if l.lang == Ruby && l.pos+6 <= len(src) && src[l.pos:l.pos+6] == "=begin" {
				l.skipRubyBlockComment()
			}
			l.prev = tNewline
			if l.depth == 0 {
				l.stmt, l.stmtLine = l.pos, l.line
			}
		case skSpace:
			// Indentation comes in runs.
			p := l.pos + 1
			for p < len(src) && (src[p] == ' ' || src[p] == '\t') {
				p++
			}
			l.pos = p
		case skAt:
			if l.lang != Ruby {
				if l.skimToken(tg) {
					return true
				}
				continue
			}
			if l.pos+1 >= len(src) || !isIdentStart(src[l.pos+1]) && src[l.pos+1] != '@' {
				l.pos++
				l.prev, l.prevTxt = tPunct, "@"
				continue
			}
			fallthrough
		case skIdent:
			p := l.pos + 1
			for p < len(src) && wordChar[src[p]] {
				p++
			}
			if l.lang == Ruby && p < len(src) && (src[p] == '?' || src[p] == '!') &&
				(p+1 >= len(src) || src[p+1] != '=' && src[p+1] != ':') {
				p++
			}
			l.pos = p
			word := src[start:p]
			if p < len(src) && (src[p] == '"' || src[p] == '\'') && l.lang == Python && isStringPrefix(word) {
				l.pos = start
				if l.skimToken(tg) {
					return true
				}
				continue
			}
			if tg.has(word) {
				l.pos = start
				return true
			}
			l.prev, l.prevTxt = tIdent, word
		case skDigit:
			p := l.pos + 1
			for p < len(src) && identChar[src[p]] {
				p++
			}
			l.pos = p
			l.prev = tNumber
		case skOpen: // ( [ {
			l.depth++
			if c == '{' {
				l.braces++
			}
			l.pos++
			l.prev, l.prevTxt = tPunct, src[start:l.pos]
		case skClose: // ) ]
			if l.depth > 0 {
				l.depth--
			}
			l.pos++
			l.prev, l.prevTxt = tPunct, src[start:l.pos]
		case skBrace: // }
			if l.n > 0 && l.stack[l.n-1].depth == l.braces {
				// The end of an interpolation: back into its string.
				if l.skimToken(tg) {
					return true
				}
				continue
			}
			l.braces--
			if l.depth > 0 {
				l.depth--
			}
			l.pos++
			l.prev, l.prevTxt = tPunct, "}"
		case skSemi:
			l.pos++
			if l.depth == 0 {
				l.stmt, l.stmtLine = l.pos, l.line
			}
			l.prev, l.prevTxt = tPunct, ";"
		case skEq:
			if l.pos+1 < len(src) && src[l.pos+1] == '>' {
				l.skimOp() // =>
				continue
			}
			fallthrough
		case skSep: // , .
			l.pos++
			l.prev, l.prevTxt = tPunct, src[start:l.pos]
		case skOp:
			l.skimOp()
		case skHash:
			if l.lang == Ruby || l.lang == Python {
				l.skipLine()
				continue
			}
			if l.skimToken(tg) {
				return true
			}
		case skSlash:
			if l.pos+1 < len(src) && (l.lang == JavaScript || l.lang == Go || l.lang == Unknown) {
				switch src[l.pos+1] {
				case '/':
					l.skipLine()
					continue
				case '*':
					l.skipBlockComment()
					continue
				}
			}
			if l.skimToken(tg) {
				return true
			}
		case skBackslash:
			if l.pos+1 < len(src) && (src[l.pos+1] == '\n' || src[l.pos+1] == '\r') {
				l.pos++ // a line continuation
				continue
			}
			l.skimOp()
		default:
			if l.skimToken(tg) {
				return true
			}
		}
	}
	return false
}

// skimOp passes an operator that the tokenizer reads with punct alone, in
// every language, as skimToken would but without making its token.
func (l *lexer) skimOp() {
	start := l.pos
	l.pos += punctLen(l.src, start)
	l.prev, l.prevTxt = tPunct, l.src[start:l.pos]
}

// The byte classes of skim.
const (
	skOther     = iota // read by the tokenizer: strings, symbols, the rest
	skNewline          // \n
	skSpace            // ' ', \t, \r
	skIdent            // a byte that starts an identifier
	skAt               // @: a Ruby instance variable
	skDigit            // 0-9
	skOpen             // ( [ {
	skClose            // ) ]
	skBrace            // }
	skSemi             // ;
	skEq               // =
	skSep              // , .
	skOp               // ! & * + - > ? ^ | ~: operators and nothing else in every language
	skHash             // #
	skSlash            // /
	skBackslash        // \\
)

var skimClass [256]uint8

// rubyWordChar is identChar with '@', for skimming Ruby words.
var rubyWordChar [256]bool

func init() {
	for c := range 256 {
		switch {
		case identStart[c]:
			skimClass[c] = skIdent
		case c >= '0' && c <= '9':
			skimClass[c] = skDigit
		}
		rubyWordChar[c] = identChar[c] || c == '@'
	}
	for _, x := range []struct {
		class uint8
		bytes string
	}{
		{skNewline, "\n"}, {skSpace, " \t\r"}, {skAt, "@"}, {skOpen, "([{"}, {skClose, ")]"}, {skBrace, "}"},
		{skSemi, ";"}, {skEq, "="}, {skSep, ",."}, {skOp, "!&*+->?^|~"}, {skHash, "#"}, {skSlash, "/"}, {skBackslash, "\\"},
	} {
		for i := 0; i < len(x.bytes); i++ {
			skimClass[x.bytes[i]] = x.class
		}
	}
}

// skimToken reads one token with the tokenizer (a string, a symbol, an
// interpolation's end, an operator) for skim, keeping its depth.
func (l *lexer) skimToken(tg *targets) bool {
	start, n := l.pos, l.n
	var tk token
	t := &tk
	l.token(t, l.src[l.pos])
	l.prev, l.prevTxt = t.kind, t.text
	switch {
	case l.n > n:
		l.depth++ // into an interpolation: "#{", "${", f"{"
	case l.n < n && l.depth > 0:
		l.depth-- // out of one
	case t.kind == tPunct && t.text == "{":
		l.depth++
	case t.kind == tPunct && t.text == "}" && l.depth > 0:
		l.depth--
	}
	if (t.kind == tString || t.kind == tSymbol) && t.val != "" && tg.has(t.val) {
		l.pos = start
		l.n = n
		return true
	}
	return false
}
