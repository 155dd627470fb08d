package redact_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/redact"
)

var update = flag.Bool("update", false, "write the corpus's figures into docs/privacy.md")

// The corpus (testdata/pii) is lines of real-looking text: planted.txt
// with personal data planted in it, each value marked ⟦KIND:value⟧, and
// lookalike.txt with none, only what looks like it (order numbers, dates,
// versions, UUIDs, tracking numbers, timestamps, hashes). A line is a
// document; "\n" in it stands for a line break. The detectors were tuned
// on those two; heldout_planted.txt and heldout_lookalike.txt, written
// afterwards in other shapes (CSV rows, signatures, stack traces, tool
// results, ARNs, digests, MAC addresses...), measure them on text they
// were not tuned on.
//
// Secrets are not written in the files, so that no scanner of secrets
// takes the repository for a leak: ⟦SECRET:ghp_*36a⟧ is ghp_ and 36
// random characters of the alphabet a (letters and digits; u: upper case
// and digits; k: those and - and _; b: base64), drawn from a fixed seed;
// ⟦SECRET:jwt⟧ is a JSON Web Token.

// doc is a corpus document, its planted values and their kinds.
type doc struct {
	file, text string
	line       int
	lookalike  bool
	planted    []planted
}

type planted struct {
	kind       redact.Kind
	start, end int
}

// corpus is a pair of files: planted values, and look-alikes.
type corpus struct{ name, planted, lookalike string }

var corpora = []corpus{
	{"tuning", "planted.txt", "lookalike.txt"},
	{"held out", "heldout_planted.txt", "heldout_lookalike.txt"},
}

func readCorpus(t testing.TB, c corpus) []doc {
	t.Helper()
	rng := rand.New(rand.NewPCG(39, 39))
	var docs []doc
	for _, file := range []string{c.planted, c.lookalike} {
		f, err := os.Open(filepath.Join("..", "testdata", "pii", file))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		n := 0
		for sc.Scan() {
			n++
			d, err := parseDoc(sc.Text(), rng)
			require.NoError(t, err, "%s:%d", file, n)
			d.file, d.line, d.lookalike = file, n, file == c.lookalike
			docs = append(docs, d)
		}
		require.NoError(t, sc.Err())
		f.Close()
	}
	return docs
}

var kindByName = map[string]redact.Kind{}

func init() {
	for _, k := range redact.Kinds() {
		kindByName[k.String()] = k
	}
}

func parseDoc(line string, rng *rand.Rand) (doc, error) {
	var d doc
	var b strings.Builder
	line = strings.ReplaceAll(line, `\n`, "\n")
	for {
		i := strings.Index(line, "⟦")
		if i < 0 {
			b.WriteString(line)
			break
		}
		b.WriteString(line[:i])
		line = line[i+len("⟦"):]
		j := strings.Index(line, "⟧")
		if j < 0 {
			return d, fmt.Errorf("an unclosed ⟦")
		}
		name, value, ok := strings.Cut(line[:j], ":")
		kind := kindByName[name]
		if !ok || kind == 0 {
			return d, fmt.Errorf("bad mark ⟦%s⟧", line[:j])
		}
		line = line[j+len("⟧"):]
		if kind == redact.Secret {
			value = makeSecret(value, rng)
		}
		d.planted = append(d.planted, planted{kind, b.Len(), b.Len() + len(value)})
		b.WriteString(value)
	}
	d.text = b.String()
	return d, nil
}

func makeSecret(spec string, rng *rand.Rand) string {
	const (
		letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		digits  = "0123456789"
	)
	draw := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	if spec == "jwt" {
		return "eyJhbGciOiJIUzI1NiJ9.eyJ" + draw(40, letters+digits) + "." + draw(43, letters+digits+"-_")
	}
	prefix, gen, ok := strings.Cut(spec, "*")
	if !ok {
		return spec
	}
	n, _ := strconv.Atoi(gen[:len(gen)-1])
	alphabet := map[byte]string{
		'a': letters + digits,
		'u': "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + digits,
		'k': letters + digits + "-_",
		'b': letters + digits + "+/",
	}[gen[len(gen)-1]]
	return prefix + draw(n, alphabet)
}

// score is a detector's figures on the corpus.
type score struct {
	planted, found int // values planted; found whole by a match of their kind
	matches, right int // matches of the kind; those on a value of the kind
	readable       int // planted values some byte of which no match covers
	lookalikeHits  int // matches in lookalike.txt
}

func (s score) precision() float64 { return ratio(s.right, s.matches) }
func (s score) recall() float64    { return ratio(s.found, s.planted) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func measure(docs []doc, r *redact.Redactor) map[redact.Kind]*score {
	scores := map[redact.Kind]*score{}
	for _, k := range redact.Kinds() {
		scores[k] = &score{}
	}
	for _, d := range docs {
		ms := r.Find([]byte(d.text))
		for _, p := range d.planted {
			s := scores[p.kind]
			s.planted++
			for _, m := range ms {
				if m.Kind == p.kind && m.Start <= p.start && m.End >= p.end {
					s.found++
					break
				}
			}
			covered := p.start
			for _, m := range ms {
				if m.Start <= covered && m.End > covered {
					covered = m.End
				}
			}
			if covered < p.end {
				s.readable++
			}
		}
		for _, m := range ms {
			s := scores[m.Kind]
			s.matches++
			if d.lookalike {
				s.lookalikeHits++
			}
			for _, p := range d.planted {
				if p.kind == m.Kind && m.Start < p.end && p.start < m.End {
					s.right++
					break
				}
			}
		}
	}
	return scores
}

// logMistakes lists the values missed and the matches that are wrong.
func logMistakes(t *testing.T, docs []doc, r *redact.Redactor) {
	for _, d := range docs {
		ms := r.Find([]byte(d.text))
		for _, p := range d.planted {
			found := false
			for _, m := range ms {
				found = found || m.Kind == p.kind && m.Start <= p.start && m.End >= p.end
			}
			if !found {
				t.Logf("missed %s %q in %s:%d", p.kind, d.text[p.start:p.end], d.file, d.line)
			}
		}
		for _, m := range ms {
			right := false
			for _, p := range d.planted {
				right = right || p.kind == m.Kind && m.Start < p.end && p.start < m.End
			}
			if !right {
				t.Logf("wrong %s %q in %s:%d", m.Kind, d.text[m.Start:m.End], d.file, d.line)
			}
		}
	}
}

// table is a corpus's figures as docs/privacy.md shows them.
func table(c corpus, docs []doc, scores map[redact.Kind]*score) string {
	var b strings.Builder
	lookalike := 0
	for _, d := range docs {
		if d.lookalike {
			lookalike++
		}
	}
	fmt.Fprintf(&b, "The %s corpus: %d documents with %d planted values (testdata/pii/%s), %d documents of look-alikes (testdata/pii/%s).\n\n",
		c.name, len(docs)-lookalike, total(scores, func(s *score) int { return s.planted }), c.planted, lookalike, c.lookalike)
	b.WriteString("| detector | planted | found | recall | matches | right | precision | false positives in look-alikes | planted values left partly readable |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range redact.Kinds() {
		s := scores[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %d | %d | %.3f | %d | %d |\n", k, s.planted, s.found, s.recall(), s.matches, s.right, s.precision(), s.lookalikeHits, s.readable)
	}
	return b.String()
}

func total(scores map[redact.Kind]*score, f func(*score) int) int {
	n := 0
	for _, s := range scores {
		n += f(s)
	}
	return n
}

// floors are the least precision and recall each detector keeps on each
// corpus: a change that costs more fails.
var floors = map[string]struct{ precision, recall float64 }{
	"tuning":   {0.95, 0.95},
	"held out": {0.95, 0.95},
}

const (
	tableStart = "<!-- corpus figures: go test ./redact -run TestCorpus -update -->\n"
	tableEnd   = "<!-- end of corpus figures -->\n"
)

// TestCorpus measures each detector's precision and recall on the
// corpus, holds them to floors, and checks that docs/privacy.md shows
// them (-update writes them there).
func TestCorpus(t *testing.T) {
	r := redact.New()
	var tables []string
	for _, c := range corpora {
		docs := readCorpus(t, c)
		scores := measure(docs, r)
		tables = append(tables, table(c, docs, scores))
		if testing.Verbose() {
			logMistakes(t, docs, r)
		}
		floor := floors[c.name]
		for _, k := range redact.Kinds() {
			s := scores[k]
			assert.GreaterOrEqual(t, s.precision(), floor.precision, "%s: %s precision", c.name, k)
			assert.GreaterOrEqual(t, s.recall(), floor.recall, "%s: %s recall", c.name, k)
			assert.GreaterOrEqual(t, s.planted, 25, "%s: %s: enough planted values to measure", c.name, k)
		}
	}
	got := strings.Join(tables, "\n")
	t.Log("\n" + got)

	path := filepath.Join("..", "docs", "privacy.md")
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	i, j := bytes.Index(page, []byte(tableStart)), bytes.Index(page, []byte(tableEnd))
	require.True(t, i >= 0 && j > i, "docs/privacy.md holds the corpus figures between %q and %q", tableStart, tableEnd)
	shown := string(page[i+len(tableStart) : j])
	if *update {
		page = append(page[:i+len(tableStart)], append([]byte(got), page[j:]...)...)
		require.NoError(t, os.WriteFile(path, page, 0o644))
		return
	}
	assert.Equal(t, got, shown, "docs/privacy.md shows other figures: go test ./redact -run TestCorpus -update")
}

// Every corpus document, sent as a JSON string (escaped as encoding/json
// escapes it), comes out valid JSON whose text is the document redacted
// as plain text: reading escapes finds what reading the text does.
func TestCorpusAsJSON(t *testing.T) {
	r := redact.New(redact.WithKey([]byte("corpus")))
	for _, d := range append(readCorpus(t, corpora[0]), readCorpus(t, corpora[1])...) {
		in, err := json.Marshal(map[string]string{"content": d.text})
		require.NoError(t, err)
		out := r.Bytes(in)
		var got map[string]string
		require.NoError(t, json.Unmarshal(out, &got), "%s:%d: %s", d.file, d.line, out)
		assert.Equal(t, r.String(d.text), got["content"], "%s:%d", d.file, d.line)
	}
}
