package docs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's top, two directories up.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	require.NoError(t, err, "the repository's top")
	return dir
}

// markdownFiles lists the repository's Markdown files, testdata and
// hidden directories left out.
func markdownFiles(t *testing.T, top string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != top && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			out = append(out, path)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

var (
	// [text](target) and ![alt](target), target up to a space or ")".
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// <img src="target"> and <a href="target">
	htmlLink = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	fence    = regexp.MustCompile("^\\s*(```|~~~)")
)

// links returns the link targets of a Markdown file outside code blocks
// and code spans, with their line numbers.
func links(t *testing.T, path string) map[string][]int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	inCode := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		line = stripCodeSpans(line)
		for _, re := range []*regexp.Regexp{inlineLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out[m[1]] = append(out[m[1]], n)
			}
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchor is GitHub's id for a heading: lower case, spaces to hyphens,
// punctuation but hyphens and underscores dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading ids of a Markdown file, numbered as GitHub
// numbers repeats (-1, -2, ...).
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(b), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		a := anchor(strings.ReplaceAll(strings.TrimLeft(line, "#"), "`", ""))
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link of every Markdown file resolves: to a file or a
// directory of the repository, and to one of its headings when the link
// names one.
func TestRelativeLinksResolve(t *testing.T) {
	top := root(t)
	files := markdownFiles(t, top)
	require.NotEmpty(t, files)
	checked := 0
	for _, file := range files {
		rel, _ := filepath.Rel(top, file)
		for target, lines := range links(t, file) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue // not ours to check: no network here
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%v: link %q: no such file", rel, lines, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[frag] {
				t.Errorf("%s:%v: link %q: no heading #%s in %s", rel, lines, target, frag, filepath.Base(dest))
			}
		}
	}
	t.Logf("%d relative links in %d Markdown files", checked, len(files))
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Quick start":                         "quick-start",
		"`llmhistory report FILE...`":         "llmhistory-report-file",
		"Proof under load and faults":         "proof-under-load-and-faults",
		"Long conversations: `args_prefix`":   "long-conversations-args_prefix",
		"For teams: many services, one place": "for-teams-many-services-one-place",
	} {
		assert.Equal(t, want, anchor(strings.ReplaceAll(heading, "`", "")), heading)
	}
}
