package detect

// The analysis is one forward pass over the tokens with a bracket stack.
// A history reference is the name as a variable or a field, a key literal
// naming it inside a subscript or a lookup call (emitted when that bracket
// closes, so that the whole of context[:conversation_history] is the
// reference), or an alias. After a reference, the chain of operations
// applied to it is followed: .method, call arguments and blocks (skipped,
// then the chain goes on), subscripts, across lines. Function calls around
// a reference (len(h), sorted(h)), loops over it and comprehensions add
// their own tags.

// frame is an open bracket, or a Ruby keyword block closed by end.
type frame struct {
	open      byte   // '(', '[', '{', or 'k' for a Ruby keyword block
	call      string // the function called, for '('
	qual      string // its qualifier: itertools in itertools.groupby
	subscript bool   // '[' indexing an expression, not a list literal
	lookup    bool   // a call whose first argument may be the history's key
	key       bool   // the history's key is this bracket's first token
	start     int    // token index where the expression before the bracket began
	ntok      int    // tokens seen directly inside
	first     string // the first token, when an identifier
	hasRef    bool   // a history reference is a direct argument

	resume bool  // a chain waits for this bracket to close
	chain  chain // the chain that waits
	slice  bool  // the bracket subscripts the chain's value

	comp       bool   // Python: a comprehension's for was seen here
	compSimple bool   // its element is a lone identifier
	compVar    string // the loop variable
	compHist   bool   // it iterates the history
	compIf     bool   // it has an if
	rangeBody  bool   // Go: the body of a range loop over the history
}

// chain follows the operations applied to one reference.
type chain struct {
	active      bool
	line        int    // where the history was named
	tags        TagSet // what the chain did so far
	alias       string // the variable it is assigned to, if any
	expectName  bool   // after '.': a method name comes next
	afterMethod bool   // after a method name or a bracket: arguments or a block may follow
	newline     bool   // a newline came: only a leading '.' continues
}

const maxDepth = 64
const maxAliases = 16

type analyzer struct {
	d    *Detector
	lang Language
	off  int // line offset of the scanned text in the whole
	res  Result

	stack [maxDepth]frame
	depth int // frames in use; deeper brackets are counted, not kept
	over  int // brackets opened past maxDepth

	idx       int      // index of the current token
	primStart int      // index where the current primary expression began
	ring      [4]token // the current token and the three before it
	ri        int      // ring[ri&3] is the current token

	tg targets // the names and the aliases

	ch chain

	// The findings, copied into the result at the end: one allocation
	// of the right size rather than a slice grown finding by finding.
	findings [maxFindings]Finding
	nfind    int

	pending     bool // a name was read; the next token says whether it is a reference
	pendingIdx  int
	pendingLine int
	loopHead    bool // Ruby: a for/while/until on this line; its do opens no block

	assignName  string // a simple assignment's target, waiting for its right side
	assignDepth int
	assignStart int
	annotName   string // Python, TypeScript: h: list[dict] = ..., const h: T[] = ...
	annotDepth  int

	forPending    bool // a for loop's head: in/of/range comes next
	iterPending   bool // the loop's iterable is being read
	iterDepth     int
	compInPending bool // Python comprehension: its in comes next
	memberAt      int  // token index where x in <history> would start
	rangePending  bool // Go: the next { opens a range body over the history
}

func (d *Detector) scan(code string, lang Language, lineOffset int) Result {
	return d.scanWith(code, lang, lineOffset, nil, nil)
}

// scanWith scans with the aliases an earlier block of the same output
// made, and stores the aliases known at its end in known, if not nil
// (a copy: only an output's later blocks need it).
//
// Most of a snippet does not touch the history. A skimmer moves over the
// code without making tokens until a name or an alias appears in code;
// only then is the statement around it (from its start to its end, with
// any chain, block or loop body it opens) tokenized and analyzed. Text
// with no mention at all was turned away before this by the prefilter.
func (d *Detector) scanWith(code string, lang Language, lineOffset int, aliases []string, known *[]string) Result {
	a := analyzer{d: d, lang: lang, off: lineOffset, memberAt: -1}
	a.tg.init(d.names)
	for _, n := range aliases {
		a.addAlias(n)
	}
	sk := newLexer(code, lang)
	for sk.skim(&a.tg) {
		target := sk.pos
		lw := newLexer(code, lang)
		lw.pos, lw.line = sk.stmt, sk.stmtLine
		a.startStatement()
		for {
			t := &a.ring[a.ri&3]
			lw.next(t)
			if t.kind == tEOF {
				break
			}
			a.token(t)
			if lw.pos > target && t.kind == tNewline && a.idle() {
				break
			}
		}
		a.finishStatement()
		// Go on skimming after the window, at the start of a statement.
		sk.pos, sk.line, sk.heredoc = lw.pos, lw.line, lw.heredoc
		sk.depth, sk.stmt, sk.stmtLine = 0, lw.pos, lw.line
		sk.prev, sk.n, sk.braces = tNewline, 0, 0
	}
	if a.nfind > 0 {
		a.res.Findings = append([]Finding(nil), a.findings[:a.nfind]...)
	}
	if a.res.Access {
		a.res.addLanguage(lang)
	}
	if known != nil {
		*known = a.tg.aliases()
	}
	return a.res
}

// startStatement clears what belongs to one statement before a window.
func (a *analyzer) startStatement() {
	a.depth, a.over = 0, 0
	a.ch = chain{}
	a.pending = false
	a.assignName, a.annotName = "", ""
	a.forPending, a.iterPending, a.compInPending, a.rangePending, a.loopHead = false, false, false, false, false
	a.memberAt = -1
	a.ring = [4]token{{kind: tNewline}, {kind: tNewline}, {kind: tNewline}, {kind: tNewline}}
}

// idle reports whether the analysis is between statements: nothing open,
// no chain that a leading '.' on the next line could continue.
func (a *analyzer) idle() bool {
	return a.depth == 0 && a.over == 0 && !a.ch.active && !a.pending
}

// finishStatement ends a window, at a statement's end or at the end of
// the code. Code cut off in the middle leaves brackets open: they are
// closed, so that what was read of a comprehension or a chain counts.
func (a *analyzer) finishStatement() {
	if a.pending {
		a.resolve(&token{kind: tEOF})
	}
	for a.over > 0 || a.depth > 0 {
		if a.over > 0 {
			a.over--
			continue
		}
		closer := a.stack[a.depth-1].open
		switch closer {
		case '(':
			closer = ')'
		case '[':
			closer = ']'
		case '{':
			closer = '}'
		}
		a.closeFrame(closer)
	}
	a.endChain()
}

func (a *analyzer) top() *frame {
	if a.depth == 0 || a.over > 0 {
		return nil
	}
	return &a.stack[a.depth-1]
}

func (a *analyzer) prev() *token  { return &a.ring[(a.ri-1)&3] }
func (a *analyzer) prev2() *token { return &a.ring[(a.ri-2)&3] }
func (a *analyzer) prev3() *token { return &a.ring[(a.ri-3)&3] }
func isDot(t *token) bool {
	return t.kind == tPunct && (t.text == "." || t.text == "&." || t.text == "?." || t.text == "::")
}

func (a *analyzer) token(t *token) {
	if a.pending {
		a.resolve(t)
	}
	if t.kind == tNewline {
		a.newline()
		return
	}
	if a.ch.active && !a.chainStep(t) {
		a.endChain()
	}
	a.idx++
	if f := a.top(); f != nil {
		if f.ntok == 0 && t.kind == tIdent {
			f.first = t.text
		}
		f.ntok++
	}
	switch t.kind {
	case tIdent:
		a.ident(t)
	case tString, tSymbol:
		a.literal(t)
	case tNumber:
		if !isDot(a.prev()) {
			a.primStart = a.idx
		}
	case tPunct:
		a.punct(t)
	}
	a.ri++
}

func (a *analyzer) newline() {
	if a.ch.active && !a.ch.expectName { // after a trailing '.', the chain goes on
		a.ch.newline = true
	}
	if a.depth == a.assignDepth {
		a.assignName = ""
	}
	if a.depth <= a.iterDepth {
		a.iterPending = false
		a.forPending = false
	}
	a.rangePending = false
	a.loopHead = false
	if a.depth == a.annotDepth {
		a.annotName = ""
	}
	a.ri++
}

// chainStep applies t to the active chain and reports whether the chain
// goes on. Brackets that suspend the chain are handled by punct.
func (a *analyzer) chainStep(t *token) bool {
	c := &a.ch
	if c.newline {
		c.newline = false
		if !isDot(t) {
			return false
		}
	}
	switch {
	case isDot(t):
		c.expectName, c.afterMethod = true, false
		return true
	case c.expectName && t.kind == tIdent:
		c.expectName, c.afterMethod = false, true
		if tag, ok := methodTag(a.lang, t.text); ok {
			a.tag(tag, t.line)
			if a.lang == Ruby && t.text == "filter_map" {
				a.tag(Map, t.line)
			}
		}
		return true
	case t.kind == tPunct && (t.text == "(" && (c.afterMethod || c.expectName) || t.text == "["):
		return true // punct suspends the chain into the bracket
	case t.kind == tPunct && t.text == "{" && c.afterMethod && a.lang == Ruby:
		return true // a block
	case t.kind == tIdent && t.text == "do" && c.afterMethod && a.lang == Ruby:
		return true // a do ... end block
	}
	return false
}

// tag records one query of the history by the active chain.
func (a *analyzer) tag(t Tag, line int) {
	a.ch.tags = a.ch.tags.With(t)
	a.record(t, a.ch.line, line)
}

func (a *analyzer) record(t Tag, from, to int) {
	a.res.Tags = a.res.Tags.With(t)
	if a.nfind < maxFindings {
		a.findings[a.nfind] = Finding{Tag: t, Language: a.lang, Line: from + a.off, EndLine: to + a.off}
		a.nfind++
	}
}

// endChain closes the active chain; an assignment whose value stayed a
// collection makes its target an alias.
func (a *analyzer) endChain() {
	c := a.ch
	a.ch = chain{}
	if !c.active || c.alias == "" {
		return
	}
	const scalar = 1<<Count | 1<<Reduce | 1<<Search
	if c.tags&scalar != 0 {
		return
	}
	a.addAlias(c.alias)
}

func (a *analyzer) addAlias(name string) { a.tg.addAlias(name) }

func (a *analyzer) isAlias(name string) bool { return a.tg.isAlias(name) }

// targets is what the skimmer stops at: the detector's names and the
// aliases known so far. It is asked about every word of the code.
type targets struct {
	names  []string
	alias  [maxAliases]string
	nalias int
	lens   uint64    // bit min(len, 63) of each name's and alias's length
	firsts [4]uint64 // bit c of each one's first byte
}

func (tg *targets) init(names []string) {
	tg.names = names
	for _, n := range names {
		tg.note(n)
	}
}

// note adds s to the quick filter that has applies before comparing.
func (tg *targets) note(s string) {
	tg.lens |= 1 << min(len(s), 63)
	if s != "" {
		tg.firsts[s[0]>>6] |= 1 << (s[0] & 63)
	}
}

// has reports whether s is a name or an alias. Most words differ from
// all of them in length or first byte, which two bit tests tell.
func (tg *targets) has(s string) bool {
	if tg.lens&(1<<min(len(s), 63)) == 0 || s == "" || tg.firsts[s[0]>>6]&(1<<(s[0]&63)) == 0 {
		return false
	}
	for _, n := range tg.names {
		if s == n {
			return true
		}
	}
	return tg.isAlias(s)
}

func (tg *targets) isAlias(name string) bool {
	for _, n := range tg.alias[:tg.nalias] {
		if n == name {
			return true
		}
	}
	return false
}

func (tg *targets) addAlias(name string) {
	if tg.isAlias(name) {
		return
	}
	if tg.nalias < maxAliases {
		tg.alias[tg.nalias] = name
		tg.nalias++
		tg.note(name)
	}
}

// aliases returns a copy of the aliases, or nil for none.
func (tg *targets) aliases() []string {
	if tg.nalias == 0 {
		return nil
	}
	return append([]string(nil), tg.alias[:tg.nalias]...)
}

// reference notes that the history is named here, by an expression that
// began at token index start, and starts following its chain.
func (a *analyzer) reference(start, line int) {
	a.res.Access = true
	if a.ch.active {
		a.endChain()
	}
	a.ch = chain{active: true, line: line, afterMethod: true}
	if a.assignName != "" && start == a.assignStart && a.depth == a.assignDepth {
		a.ch.alias = a.assignName
		a.assignName = ""
	}
	// An argument of a call: len(h), sorted(h), filter(f, h).
	a.argOf(line)
	switch {
	case a.compInPending:
		a.compInPending = false
		for i := a.depth - 1; i >= 0 && a.over == 0; i-- {
			if f := &a.stack[i]; f.comp {
				f.compHist = true // in reversed(h) counts as in h
				break
			}
		}
	case a.iterPending:
		a.iterPending = false
		a.record(Iterate, line, line)
		if a.lang == Go {
			a.rangePending = true
		}
	case start == a.memberAt:
		a.record(Search, line, line)
	}
}

func (a *analyzer) ident(t *token) {
	p := a.prev()
	if isDot(p) {
		// A field or method: context.conversation_history.
		if a.d.isName(t.text) && !a.ch.active {
			a.reference(a.primStart, t.line)
		}
		return
	}
	a.primStart = a.idx
	switch t.text {
	case "for":
		a.forKeyword()
		a.rubyBlock(t)
		return
	case "in", "of":
		a.inKeyword(t)
		return
	case "range":
		if a.lang == Go {
			a.iterPending, a.iterDepth = true, a.depth
		}
		return
	case "if", "unless", "while", "until":
		a.ifKeyword(t)
		a.rubyBlock(t)
		return
	case "def", "class", "module", "begin", "case", "do":
		a.rubyBlock(t)
		return
	case "end":
		if a.lang == Ruby {
			a.closeFrame('k')
		}
		return
	}
	if a.d.isName(t.text) || a.isAlias(t.text) {
		// Whether it is a reference depends on what follows.
		a.pending, a.pendingIdx, a.pendingLine = true, a.idx, t.line
	}
}

// resolve decides whether the name read before t refers to the history,
// or only names a key or a parameter: {conversation_history: []},
// f(conversation_history: h), f(conversation_history=h).
func (a *analyzer) resolve(t *token) {
	a.pending = false
	if t.kind == tPunct {
		f := a.top()
		inside := f != nil && (f.open == '{' || f.open == '(')
		switch {
		case t.text == ":" && inside && a.lang != Python && a.lang != Go:
			return
		case t.text == "=" && f != nil && f.open == '(' && (a.lang == Python || a.lang == Ruby):
			return
		}
	}
	a.reference(a.pendingIdx, a.pendingLine)
}

func (a *analyzer) forKeyword() {
	if a.lang == Python {
		if f := a.top(); f != nil && f.ntok > 1 {
			// A comprehension: [expr for x in ...].
			f.comp = true
			f.compSimple = f.ntok == 2 && f.first != ""
			a.compInPending = false
			return
		}
	}
	a.forPending, a.iterDepth = true, a.depth
}

func (a *analyzer) inKeyword(t *token) {
	if f := a.top(); f != nil && f.comp && !f.compHist && f.compVar == "" && a.lang == Python {
		// The comprehension's for target is what came just before in.
		if p := a.prev(); p.kind == tIdent {
			f.compVar = p.text
		}
		a.compInPending = true
		return
	}
	if a.forPending {
		a.forPending = false
		a.iterPending = true
		return
	}
	if t.text == "in" && a.lang == Python {
		a.memberAt = a.idx + 1
	}
}

func (a *analyzer) ifKeyword(t *token) {
	if t.text != "if" {
		return
	}
	if f := a.top(); f != nil && f.comp && a.lang == Python {
		f.compIf = true
		return
	}
	if a.lang == Go {
		for i := a.depth - 1; i >= 0; i-- {
			if a.stack[i].rangeBody {
				if !a.stack[i].compIf { // once per loop
					a.stack[i].compIf = true
					a.record(Filter, t.line, t.line)
				}
				return
			}
		}
	}
}

// rubyBlock opens a frame for a Ruby keyword that end closes: def, class,
// module, begin, case, do, and if/unless/while/until/for at the start of a
// statement (not as modifiers).
func (a *analyzer) rubyBlock(t *token) {
	if a.lang != Ruby {
		return
	}
	switch t.text {
	case "if", "unless", "while", "until", "for":
		p := a.prev()
		atStart := p.kind == tNewline || p.kind == tEOF && p.text == "" ||
			p.kind == tPunct && (p.text == ";" || p.text == "=" || p.text == "(" || p.text == "||=") ||
			p.kind == tIdent && (p.text == "then" || p.text == "else" || p.text == "do" || p.text == "return")
		if !atStart {
			return
		}
		a.loopHead = t.text != "if" && t.text != "unless"
	case "do":
		if a.loopHead {
			a.loopHead = false // for x in y do: the for's own block
			return
		}
		if a.ch.active {
			a.push(frame{open: 'k', resume: true, chain: a.ch})
			a.ch = chain{}
			return
		}
	}
	a.push(frame{open: 'k'})
}

func (a *analyzer) literal(t *token) {
	if !isDot(a.prev()) {
		a.primStart = a.idx
	}
	f := a.top()
	if f == nil || f.ntok != 1 || t.val == "" || !a.d.isName(t.val) {
		return
	}
	if f.open == '[' && f.subscript || f.open == '(' && f.lookup {
		f.key = true // context[:conversation_history], context.get("conversation_history")
	}
}

// isLookupCall reports whether a method's first argument may be the
// history's key: fetch, dig, get... (not getattr: its key is its second).
func isLookupCall(name string) bool {
	switch name {
	case "fetch", "dig", "get", "get_in", "[]", "fetch_values":
		return true
	}
	return false
}

func (a *analyzer) punct(t *token) {
	switch t.text {
	case "(", "[", "{":
		a.open(t)
	case ")", "]", "}":
		a.closeFrame(t.text[0])
	case "=", ":=":
		a.assignment()
	case ":":
		if a.depth <= a.iterDepth {
			a.iterPending = false
		}
		// An annotated assignment's target: h: list[dict] = ...
		if p := a.prev(); p.kind == tIdent && (a.lang == Python || a.lang == JavaScript) {
			before := a.prev2()
			if before.kind == tNewline || before.kind == tEOF || before.kind == tIdent && (before.text == "const" || before.text == "let" || before.text == "var") {
				a.annotName, a.annotDepth = p.text, a.depth
			}
		}
	case ",":
		// Only the first argument of a lookup can be the key.
	}
}

func (a *analyzer) open(t *token) {
	p := a.prev()
	f := frame{open: t.text[0], start: a.primStart}
	operand := p.kind == tIdent || p.kind == tString || p.kind == tNumber || p.kind == tSymbol ||
		p.kind == tPunct && (p.text == ")" || p.text == "]" || p.text == "}" || p.text == "?.")
	switch f.open {
	case '(':
		if p.kind == tIdent && !isKeyword(p.text) {
			f.call = p.text
			if isDot(a.prev2()) && a.prev3().kind == tIdent {
				f.qual = a.prev3().text
			}
			f.lookup = isLookupCall(p.text) && isDot(a.prev2())
		}
	case '[':
		f.subscript = operand && !(p.kind == tIdent && isKeyword(p.text))
	case '{':
		if a.rangePending && a.lang == Go {
			f.rangeBody = true
		}
	}
	a.rangePending = false
	if a.ch.active {
		// A subscript slices the history, unless it is empty: a Go type,
		// conversation_history []Record. Decided when it closes.
		f.slice = f.open == '[' && f.subscript
		f.resume, f.chain = true, a.ch
		a.ch = chain{}
	}
	a.push(f)
}

func (a *analyzer) push(f frame) {
	if a.depth >= maxDepth || a.over > 0 {
		a.over++
		return
	}
	a.stack[a.depth] = f
	a.depth++
}

// closeFrame closes the innermost bracket, if it is of the kind that
// closer closes; mismatched closers in broken code are ignored.
func (a *analyzer) closeFrame(closer byte) {
	if a.over > 0 {
		a.over--
		return
	}
	if a.depth == 0 {
		return
	}
	f := a.stack[a.depth-1]
	var want byte
	switch closer {
	case ')':
		want = '('
	case ']':
		want = '['
	case '}':
		want = '{'
	case 'k':
		want = 'k'
	}
	if f.open != want {
		return
	}
	a.depth--
	if a.iterDepth > a.depth {
		a.iterPending, a.forPending = false, false
	}
	if a.assignDepth > a.depth {
		a.assignName = ""
	}
	line := a.prev().line
	a.primStart = f.start
	switch {
	case f.key:
		// The whole subscript or lookup is the history.
		a.reference(f.start, line)
		return
	case f.resume:
		a.ch = f.chain
		a.ch.afterMethod = a.lang == Ruby // a block may follow call arguments
		a.ch.expectName, a.ch.newline = false, false
		if f.slice && f.ntok > 1 { // more than its own ']'
			a.tag(Slice, line)
		}
	}
	if f.compHist {
		if f.compIf {
			a.record(Filter, line, line)
		}
		if f.open != '(' && !(f.compSimple && f.first == f.compVar) {
			a.record(Map, line, line)
		}
	}
	// What a comprehension or a collection-preserving call makes of the
	// history is the history too: len(list(filter(f, h))) and
	// len([r for r in h if ...]) count.
	if f.compHist || f.hasRef && f.open == '(' && preserves(a.lang, f.qual, f.call) {
		a.argOf(line)
		if !a.ch.active {
			// sorted(h)[:5]: a chain on what was made of the history. It
			// makes no alias: the value is not the history itself.
			a.ch = chain{active: true, line: line, afterMethod: true}
		}
	}
}

// argOf notes that the history (or what a call made of it) is an argument
// of the innermost call, looking through bare parentheses: sorted(h),
// next((r for r in h), None).
func (a *analyzer) argOf(line int) {
	if a.over > 0 {
		return
	}
	for i := a.depth - 1; i >= 0; i-- {
		f := &a.stack[i]
		if f.open != '(' {
			return
		}
		if f.call == "" {
			continue // a parenthesized expression or a generator
		}
		f.hasRef = true
		if tag, ok := funcTag(a.lang, f.qual, f.call); ok {
			a.record(tag, line, line)
		}
		return
	}
}

// assignment notes "name =" or "name :=" at the start of a statement (also
// after const/let/var, and "a, b :=" in Go), whose right side may make
// name an alias.
func (a *analyzer) assignment() {
	if a.annotName != "" && a.depth == a.annotDepth {
		a.assignName, a.assignDepth, a.assignStart = a.annotName, a.depth, a.idx+1
		a.annotName = ""
		return
	}
	p := a.prev()
	if p.kind != tIdent || isKeyword(p.text) {
		return
	}
	before := a.prev2()
	switch {
	case before.kind == tNewline || before.kind == tEOF,
		before.kind == tPunct && (before.text == ";" || before.text == "{" || before.text == "("),
		before.kind == tIdent && (before.text == "const" || before.text == "let" || before.text == "var"):
	case before.kind == tPunct && before.text == "," && a.prev3().kind == tIdent:
		p = a.prev3() // Go: history, ok := ...
	default:
		return
	}
	a.assignName, a.assignDepth, a.assignStart = p.text, a.depth, a.idx+1
}

func isKeyword(s string) bool {
	switch s {
	case "if", "elif", "else", "for", "while", "return", "in", "of", "not", "and", "or", "unless", "until",
		"do", "then", "when", "case", "switch", "yield", "await", "typeof", "new", "range", "go", "defer",
		"func", "function", "def", "lambda", "print", "puts":
		return true
	}
	return false
}
