package redact

import (
	"bytes"
	"slices"
	"strings"
)

// find appends to out the values of the kinds r looks for in t, in
// order, overlapping ones merged. key is the JSON key of the value t is
// in, or nil, and value says t is that whole value, a JSON string: some
// detectors take them into account ("phone": bare digits are a phone
// number; "password": the whole value is a secret).
func (r *Redactor) find(t []byte, key []byte, value bool, out []Match) []Match {
	if len(t) < minFinding {
		return out
	}
	n := len(out)
	k := &r.cfg.kinds
	c := takeCensus(t)
	if k[Email] && c.at > 0 {
		out = findEmails(t, out)
	}
	if k[Phone] && c.digits >= 8 {
		out = findPhones(t, key, out)
	}
	if k[Card] && c.digits >= 13 {
		out = findCards(t, out)
	}
	if k[IBAN] && c.digits >= 2 && c.upper+c.lower >= 2 {
		out = findIBANs(t, out)
	}
	if k[IP] && c.digits >= 4 && c.dots >= 3 {
		out = findIPv4s(t, out)
	}
	if k[IP] && c.colons >= 2 {
		out = findIPv6s(t, out)
	}
	if k[Secret] {
		out = findKeys(t, key, value, &c, out)
	}
	out = merge(out, n)
	if len(out) > n && bytes.IndexByte(t, '[') >= 0 {
		out = dropMarked(t, out, n)
	}
	return out
}

// dropMarked drops from out[n:] the matches that touch a mark already in
// t ("[EMAIL]", "[SECRET:3f9a1c]", "[REDACTED]"): text redacted once is
// left as it is ("secret: value" is what a mark looks like to the finder
// of passwords).
func dropMarked(t []byte, out []Match, n int) []Match {
	kept := out[:n]
	for _, m := range out[n:] {
		if !nearMark(t, m) {
			kept = append(kept, m)
		}
	}
	return kept
}

// nearMark reports whether m overlaps a mark in t, or is the whole of
// one's inside, or touches one, directly or glued as a number is to the
// next (by '.', '-', '/' or ':'), the mark quoted or not. A mark stands
// where a value was, and what touches it touched that value: one token,
// which the first pass did not find ("+1000000000:[CARD]" was
// "+1000000000:4111111111111111", no phone number; "10::[CARD]" was
// "10::4111111111111111", no IPv6 address). A second pass leaves it so.
func nearMark(t []byte, m Match) bool {
	if at := m.End; at < len(t) {
		if numberGlue(t[at]) && at+1 < len(t) {
			at++
		}
		if t[at] == '"' { // a number replaced in JSON becomes a string
			at++
		}
		if at < len(t) && t[at] == '[' && markEnd(t, at) > 0 {
			return true
		}
	}
	if end := m.Start; end > 0 { // end: just past the mark, if one is there
		if numberGlue(t[end-1]) && end > 1 {
			end--
		}
		if t[end-1] == '"' && end > 1 {
			end--
		}
		for i := end - 1; t[end-1] == ']' && i >= 0 && end-1-i <= len("[SECRET:123456]"); i-- {
			if t[i] == '[' && markEnd(t, i) == end {
				return true
			}
		}
	}
	from := max(0, m.Start-len("[SECRET:"))
	for i := from; i < m.End && i < len(t); i++ {
		if t[i] != '[' {
			continue
		}
		if end := markEnd(t, i); end > 0 && m.Start < end {
			return true
		}
	}
	return false
}

// numberGlue reports whether c joins two numbers into one token ("1.5",
// "2026-11", "1/2", "10:30"), as endsWord reads them.
func numberGlue(c byte) bool { return c == '.' || c == '-' || c == '/' || c == ':' }

// markEnd returns the end of the mark at t[i], or 0 when there is none.
func markEnd(t []byte, i int) int {
	j := i + 1
	for j < len(t) && isUpper(t[j]) {
		j++
	}
	name := string(t[i+1 : j])
	if name != "REDACTED" && !slices.ContainsFunc(precedence[:], func(k Kind) bool { return k.String() == name }) {
		return 0
	}
	if j < len(t) && t[j] == ':' {
		k := j + 1
		for k < len(t) && isHex(t[k]) && k-j <= 6 {
			k++
		}
		if k-j-1 != 6 {
			return 0
		}
		j = k
	}
	if j >= len(t) || t[j] != ']' {
		return 0
	}
	return j + 1
}

// census counts what the detectors need in a text: one pass, so that a
// detector whose values cannot be there (a phone number in text of fewer
// than eight digits) does not read it.
type census struct {
	digits, upper, lower, at, dots, colons, equals int
}

func takeCensus(t []byte) census {
	var n [8]int
	for _, b := range t {
		n[censusClass[b]]++
	}
	return census{digits: n[1], upper: n[2], lower: n[3], at: n[4], dots: n[5], colons: n[6], equals: n[7]}
}

// censusClass sorts bytes for takeCensus: 0 for the bytes it does not
// count.
var censusClass = func() (c [256]uint8) {
	for b := '0'; b <= '9'; b++ {
		c[b] = 1
	}
	for b := 'A'; b <= 'Z'; b++ {
		c[b], c[b+'a'-'A'] = 2, 3
	}
	c['@'], c['.'], c[':'], c['='] = 4, 5, 6, 7
	return c
}()

// merge sorts out[n:] and merges the matches that overlap: the bytes any
// detector found are all replaced, under the kind of the longest match
// among them (of two as long, the kind that comes first in [Kinds]).
func merge(out []Match, n int) []Match {
	found := out[n:]
	if len(found) < 2 {
		return out
	}
	slices.SortFunc(found, func(x, y Match) int {
		if x.Start != y.Start {
			return x.Start - y.Start
		}
		if lx, ly := x.End-x.Start, y.End-y.Start; lx != ly {
			return ly - lx
		}
		return x.Kind.rank() - y.Kind.rank()
	})
	kept := found[:1]
	for _, m := range found[1:] {
		cur := &kept[len(kept)-1]
		if m.Start >= cur.End {
			kept = append(kept, m)
			continue
		}
		if m.End-m.Start > cur.End-cur.Start {
			cur.Kind = m.Kind
		}
		cur.End = max(cur.End, m.End)
	}
	return out[:n+len(kept)]
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return isUpper(c) || isLower(c) }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// glued reports whether a value cannot start after c: c is a letter or a
// digit (the value would be inside a word), or the end of a mark (so
// that a value glued to one found before is judged the same in a second
// pass as in the first: redacting twice changes nothing).
func glued(c byte) bool { return isAlnum(c) || c == ']' }

func upper(c byte) byte {
	if isLower(c) {
		return c - 'a' + 'A'
	}
	return c
}

func lower(c byte) byte {
	if isUpper(c) {
		return c - 'A' + 'a'
	}
	return c
}

// wordBefore reports whether a word within the window bytes before t[i]
// starts with one of words (lower case), in any case; not the name of a
// mark ("[PHONE]"), nor a word the window cuts.
func wordBefore(t []byte, i, window int, words []string) bool {
	from := max(0, i-window)
	for j := i; j > from; {
		for j > from && !isLetter(t[j-1]) {
			j--
		}
		end := j
		for j > from && isLetter(t[j-1]) {
			j--
		}
		switch {
		case j == end:
			return false
		case j == from && from > 0 && isLetter(t[from-1]):
			return false // cut by the window
		case j > 0 && t[j-1] == '[':
			continue
		}
		for _, w := range words {
			if hasPrefixFold(t[j:end], w) {
				return true
			}
		}
	}
	return false
}

// Email addresses: local@domain.tld, the top-level domain letters only.

func findEmails(t []byte, out []Match) []Match {
	for i := 0; i < len(t); {
		j := bytes.IndexByte(t[i:], '@')
		if j < 0 {
			break
		}
		at := i + j
		i = at + 1
		s := at
		for s > 0 && emailLocal(t[s-1]) {
			s--
		}
		for s < at && (t[s] == '.' || t[s] == '-' || t[s] == '+') {
			s++
		}
		if s == at || t[at-1] == '.' {
			continue
		}
		end, ok := domainEnd(t, at+1)
		if !ok || scpPath(t, end) {
			continue
		}
		out = append(out, Match{Email, s, end})
		i = end
	}
	return out
}

// emailLocal reports whether c may be in the local part of an address:
// letters (of any script: a byte of UTF-8 past ASCII), digits, and the
// signs people use.
func emailLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' || c >= 0x80
}

// scpPath reports whether t[i] starts the path of an SSH address
// (git@github.com:org/repo.git): what came before is a login on a host,
// not an address.
func scpPath(t []byte, i int) bool {
	return i+1 < len(t) && t[i] == ':' && (isLetter(t[i+1]) || t[i+1] == '/' || t[i+1] == '~')
}

// domainEnd returns the end of the domain name that starts at t[i]: two
// labels or more, the last of at least two letters.
func domainEnd(t []byte, i int) (int, bool) {
	labels, last, end := 0, i, i
	for {
		start := i
		for i < len(t) && (isAlnum(t[i]) || t[i] == '-') {
			i++
		}
		if i == start || t[start] == '-' || t[i-1] == '-' || i-start > 63 {
			break
		}
		labels, last, end = labels+1, start, i
		if i+1 < len(t) && t[i] == '.' && isAlnum(t[i+1]) {
			i++
			continue
		}
		break
	}
	if labels < 2 || end-last < 2 {
		return 0, false
	}
	for _, c := range t[last:end] {
		if !isLetter(c) {
			return 0, false
		}
	}
	return end, true
}

// Runs of digit groups: what phone and card numbers are written as.

// groups is a run of digit groups, as read by readGroups.
type groups struct {
	n      int
	digits [maxGroups]int  // digits in group k
	starts [maxGroups]int  // where group k's digits start
	ends   [maxGroups]int  // where group k ends (past its closing parenthesis)
	seps   [maxGroups]byte // the separator before group k: 0 for the first, ')' for none after a parenthesis
	paren  int             // the group in parentheses, or -1: (415) 555-2671
	plus   bool            // a + before the first group
}

const maxGroups = 8

// readGroups reads the digit groups that start at t[i] (a digit, or '+'
// or '(' when parens), separated by one of seps, and, when parens, one
// group in parentheses; at most maxGroups.
func readGroups(t []byte, i int, seps string, parens bool) (g groups, ok bool) {
	g.paren = -1
	if parens && t[i] == '+' {
		g.plus = true
		i++
	}
	var sep byte
	for g.n < maxGroups && i < len(t) {
		open := parens && g.paren < 0 && t[i] == '('
		if open {
			i++
		}
		start := i
		for i < len(t) && isDigit(t[i]) {
			i++
		}
		if i == start || open && (i >= len(t) || t[i] != ')') {
			break // no group here (an unclosed parenthesis is none)
		}
		g.digits[g.n], g.starts[g.n], g.seps[g.n] = i-start, start, sep
		if open {
			g.paren = g.n
			i++
		}
		g.ends[g.n] = i
		g.n++
		if i >= len(t) {
			break
		}
		switch c := t[i]; {
		case open && isDigit(c):
			sep = ')'
		case strings.IndexByte(seps, c) >= 0 && i+1 < len(t) && (isDigit(t[i+1]) || parens && g.paren < 0 && t[i+1] == '('):
			sep = c
			i++
		default:
			return g, true
		}
	}
	return g, g.n > 0
}

// total is the digits of the first k groups.
func (g *groups) total(k int) int {
	n := 0
	for _, d := range g.digits[:k] {
		n += d
	}
	return n
}

// sameSeps reports whether the first k groups are separated by one kind
// of separator, whatever follows a parenthesis.
func (g *groups) sameSeps(k int) bool {
	var s byte
	for j := 1; j < k; j++ {
		if j == g.paren+1 && g.paren >= 0 {
			continue
		}
		if c := g.seps[j]; s == 0 {
			s = c
		} else if c != s {
			return false
		}
	}
	return true
}

// endsWord reports whether t[i] may follow a number: not a letter or a
// digit, nor a decimal point or a separator with more digits after it.
func endsWord(t []byte, i int) bool {
	if i >= len(t) {
		return true
	}
	c := t[i]
	if isAlnum(c) || c == '_' || c == '@' {
		return false
	}
	if (c == '.' || c == '-' || c == '/' || c == ':') && i+1 < len(t) && isDigit(t[i+1]) {
		return false
	}
	return true
}

// Phone numbers.

// phoneWords said before a bare run of digits make it a phone number.
var phoneWords = []string{"phone", "tel", "mobile", "cell", "call", "whatsapp", "sms", "fax", "contact", "text", "reach", "handy", "telefon", "portable"}

// notPhoneWords said before digits make them a reference of some other
// kind, however much they look like a phone number ("ref 963 812 3953").
var notPhoneWords = []string{"ref", "order", "invoice", "account", "acct", "tracking", "ticket", "case", "id", "sku", "po", "serial", "isbn", "batch"}

// phoneMayFollow reports whether a phone number may start at t[i], after
// what comes before it: not inside a word or a number (a comma parts the
// fields of a CSV row, not the thousands of a number).
func phoneMayFollow(t []byte, i int) bool {
	switch c := t[i-1]; {
	case glued(c):
		return false
	case c == ',':
		return i < 2 || !isDigit(t[i-2])
	}
	switch t[i-1] {
	case '.', '-', '_', '#', '+', '/', '$', '%', '&', '@', '\\', '*', '^', '~':
		return false
	}
	return true
}

func findPhones(t []byte, key []byte, out []Match) []Match {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !isDigit(c) && c != '+' && c != '(' {
			continue
		}
		if i > 0 && !phoneMayFollow(t, i) || c != '+' && tailOfCode(t, i) {
			for i+1 < len(t) && isDigit(t[i+1]) {
				i++ // the rest of this number cannot start one either
			}
			continue
		}
		g, ok := readGroups(t, i, " -.", true)
		if !ok {
			continue
		}
		// The longest run of groups that is a phone number by its form,
		// else by what the text says of it. Fewer than 8 digits (9
		// without a +) are no phone number of any form.
		k := 0
		if all := g.total(g.n); all >= 9 || g.plus && all >= 8 {
			if k = g.phone(t, i, key, false); k == 0 {
				k = g.phone(t, i, key, true)
			}
		}
		if k > 0 {
			out = append(out, Match{Phone, i, g.ends[k-1]})
			i = g.ends[k-1] - 1
		} else {
			i = g.ends[0] - 1
		}
	}
	return out
}

// phone returns how many of g's groups, starting at t[i], make the
// longest phone number, or 0; with context, bare digits and uncommon
// layouts count when the text says they are a phone number. Groups are
// dropped from the end only where a space parts them: 415-555-2671-99 is
// no phone number.
func (g *groups) phone(t []byte, i int, key []byte, context bool) int {
	for k := g.n; k > 0; k-- {
		// No form has more than 17 digits (an access prefix and 15).
		if d := g.total(k); d >= 8 && d <= 17 && endsWord(t, g.ends[k-1]) && isPhone(t, i, g, k, key, context) {
			return k
		}
		if k < g.n && !endsWord(t, g.ends[k-1]) || g.seps[k-1] != ' ' {
			return 0
		}
	}
	return 0
}

// isPhone reports whether the first k groups of g, starting at t[i], are
// a phone number.
func isPhone(t []byte, i int, g *groups, k int, key []byte, context bool) bool {
	digits := g.total(k)
	first := g.starts[0]
	d0, d1 := t[first], byte(0)
	if first+1 < len(t) {
		d1 = t[first+1]
	}
	if g.plus {
		// International: +44 20 7946 0958, +14155552671.
		return digits >= 8 && digits <= 15 && d0 != '0' && (k > 1 || digits >= 10)
	}
	var form bool
	switch {
	case d0 == '0' && d1 == '0':
		// An international access prefix: 0044 20 7946 0958.
		form = k > 1 && digits >= 11 && digits <= 17 && first+2 < len(t) && t[first+2] != '0'
	case isNANP(t, g, k, digits):
		form = true
	case d0 == '0' && k > 1 && digits >= 10 && digits <= 11 && g.sameSeps(k) && trunkGroups(g, k):
		// A national number with its trunk prefix: 020 7946 0958, 06 12 34 56 78.
		form = true
	case !context:
	case k == 1:
		// Bare digits are a phone number only when the text says so.
		form = (digits == 10 && (d0 == '0' || d0 >= '2') || digits == 11 && (d0 == '0' || d0 == '1')) && said(t, i, key)
	case digits >= 9 && digits <= 11:
		form = said(t, i, key)
	}
	return form && !wordBefore(t, i, 16, notPhoneWords)
}

// said reports whether the text before t[i], or the JSON key of its
// value, says a phone number follows.
func said(t []byte, i int, key []byte) bool {
	return wordBefore(t, i, 40, phoneWords) || len(key) > 0 && wordBefore(key, len(key), len(key), phoneWords)
}

// isNANP reports whether the first k groups are a North American number:
// (415) 555-2671, 415-555-2671, 415.555.2671, 1 415 555 2671. The area
// code and the exchange start with 2 to 9.
func isNANP(t []byte, g *groups, k, digits int) bool {
	j := 0 // the area code's group
	switch {
	case k == 3 && digits == 10:
	case k == 4 && digits == 11 && g.digits[0] == 1 && t[g.starts[0]] == '1':
		j = 1
	default:
		return false
	}
	if g.paren >= 0 && g.paren != j {
		return false
	}
	return g.digits[j] == 3 && g.digits[j+1] == 3 && g.digits[j+2] == 4 && g.sameSeps(k) &&
		t[g.starts[j]] >= '2' && t[g.starts[j+1]] >= '2'
}

// trunkGroups reports whether the first k groups are laid out as
// national numbers are: groups of 2 to 5 digits, one of them up to 8.
func trunkGroups(g *groups, k int) bool {
	long := 0
	for _, d := range g.digits[:k] {
		switch {
		case d < 2:
			return false
		case d > 5:
			if d > 8 {
				return false
			}
			long++
		}
	}
	return long <= 1
}

// Payment card numbers.

func findCards(t []byte, out []Match) []Match {
	for i := 0; i < len(t); i++ {
		if !isDigit(t[i]) {
			continue
		}
		if i > 0 && (glued(t[i-1]) || t[i-1] == '.' || t[i-1] == '_' || t[i-1] == '-' && i > 1 && isDigit(t[i-2])) || tailOfCode(t, i) {
			for i+1 < len(t) && isDigit(t[i+1]) {
				i++
			}
			continue
		}
		g, ok := readGroups(t, i, " -.", false)
		if !ok {
			continue
		}
		start := i
		i = g.ends[0] - 1 // no card here: the next may start after this group
		if g.total(g.n) < 13 {
			continue // too few digits for any card
		}
		for k := g.n; k > 0; k-- {
			end := g.ends[k-1]
			if endsWord(t, end) && cardGroups(&g, k) && isCard(t[start:end]) {
				out = append(out, Match{Card, start, end})
				i = end - 1
				break
			}
		}
	}
	return out
}

// tailOfCode reports whether t[i] starts a group of a longer grouped
// code ("GB37 WEST 6670 3410 5807 40"): two groups of four capitals or
// digits before it, one with a digit, each after a space or a dash.
func tailOfCode(t []byte, i int) bool {
	digit := false
	for g := 1; g <= 2; g++ {
		end := i - (g-1)*5 - 1 // the separator after group g, counting back
		if end < 4 || t[end] != ' ' && t[end] != '-' {
			return false
		}
		for _, c := range t[end-4 : end] {
			if !isUpper(c) && !isDigit(c) {
				return false
			}
			digit = digit || isDigit(c)
		}
	}
	return digit
}

// cardGroups reports whether the first k groups are laid out as card
// numbers are printed: all together, in fours (the last one shorter), or
// as American Express and Diners Club print theirs (4-6-5, 4-6-4).
func cardGroups(g *groups, k int) bool {
	d := g.digits[:k]
	n := g.total(k)
	if n < 13 || n > 19 || !g.sameSeps(k) {
		return false
	}
	switch {
	case k == 1:
		return true
	case k == 3 && d[0] == 4 && d[1] == 6 && (d[2] == 5 || d[2] == 4):
		return true
	case k >= 3:
		for _, x := range d[:k-1] {
			if x != 4 {
				return false
			}
		}
		return d[k-1] >= 1 && d[k-1] <= 4
	}
	return false
}

// isCard reports whether s (digits and separators) is a card number: a
// length and a prefix a card network issues, and a good Luhn check digit.
func isCard(s []byte) bool {
	var digits [19]byte
	n := 0
	for _, c := range s {
		if isDigit(c) {
			if n == len(digits) {
				return false
			}
			digits[n] = c - '0'
			n++
		}
	}
	return cardPrefix(digits[:n]) && luhn(digits[:n])
}

// cardPrefix reports whether d starts as a card network's numbers of its
// length start (the issuer identification number ranges of Visa,
// Mastercard, American Express, Discover, JCB, Diners Club, UnionPay,
// Maestro and Mir).
func cardPrefix(d []byte) bool {
	p := func(k int) int {
		v := 0
		for _, x := range d[:k] {
			v = v*10 + int(x)
		}
		return v
	}
	n := len(d)
	switch p2 := p(2); {
	case d[0] == 4:
		return n == 13 || n == 16 || n == 19 // Visa
	case p2 >= 51 && p2 <= 55, p(4) >= 2221 && p(4) <= 2720:
		return n == 16 // Mastercard
	case p2 == 34 || p2 == 37:
		return n == 15 // American Express
	case p(4) >= 2200 && p(4) <= 2204:
		return n == 16 // Mir
	case p(4) == 6011, p2 == 65, p(3) >= 644 && p(3) <= 649, p2 == 62:
		return n >= 16 // Discover, UnionPay
	case p(4) >= 3528 && p(4) <= 3589:
		return n >= 16 // JCB
	case p(3) >= 300 && p(3) <= 305, p2 == 36, p2 == 38, p2 == 39:
		return n >= 14 // Diners Club
	case p2 == 50, p2 >= 56 && p2 <= 69:
		return n >= 13 // Maestro
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for k := range d {
		x := int(d[len(d)-1-k])
		if k%2 == 1 {
			x *= 2
			if x > 9 {
				x -= 9
			}
		}
		sum += x
	}
	return sum%10 == 0
}
