package docs

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allowedCopies are the groups of byte-identical testdata files kept on
// purpose, each group exactly. AWS's eventstream vectors are kept whole,
// as AWS ships them; two pairs of the damaged ones decode to the same
// error message.
var allowedCopies = [][]string{
	{
		"providers/bedrock/testdata/eventstream/decoded/negative/corrupted_header_len",
		"providers/bedrock/testdata/eventstream/decoded/negative/corrupted_length",
	},
	{
		"providers/bedrock/testdata/eventstream/decoded/negative/corrupted_headers",
		"providers/bedrock/testdata/eventstream/decoded/negative/corrupted_payload",
	},
}

// testdataFiles lists, relative to top and slash-separated, every file
// under a testdata directory below top: the shared corpus at the top and
// every package's own. Fuzz corpora (testdata/fuzz/) are left out: Go
// wants each package's there, and a seed may well recur.
func testdataFiles(top string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != top && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.Name() == "fuzz" && filepath.Base(filepath.Dir(path)) == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(top, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if slices.Contains(strings.Split(rel, "/"), "testdata") && d.Type().IsRegular() {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// copies groups the testdata files below top by their bytes and returns
// the groups of more than one file, each sorted.
func copies(top string) ([][]string, error) {
	files, err := testdataFiles(top)
	if err != nil {
		return nil, err
	}
	byHash := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		byHash[string(sum[:])] = append(byHash[string(sum[:])], f)
	}
	var out [][]string
	for _, group := range byHash {
		if len(group) > 1 {
			slices.Sort(group)
			out = append(out, group)
		}
	}
	return out, nil
}

// No file under any testdata/ of the repository is a copy of another: a
// payload several packages read lives once, in testdata/ at the top, and
// they read it there.
func TestNoTestdataFileIsACopy(t *testing.T) {
	top := root(t)
	files, err := testdataFiles(top)
	require.NoError(t, err)
	for _, f := range []string{
		"testdata/providers/openai/openai_chat_response.json",                 // the corpus at the top
		"providers/bedrock/testdata/eventstream/encoded/positive/all_headers", // a package's own
	} {
		assert.True(t, slices.Contains(files, f), "the walk reaches %s", f)
	}
	for _, f := range files {
		assert.NotContains(t, f, "/fuzz/", "fuzz corpora are left out")
	}

	groups, err := copies(top)
	require.NoError(t, err)
	for _, g := range groups {
		if slices.ContainsFunc(allowedCopies, func(a []string) bool { return slices.Equal(a, g) }) {
			continue
		}
		t.Errorf("these testdata files are the same bytes; keep one (shared payloads in testdata/ at the top) and read it there:\n\t%s",
			strings.Join(g, "\n\t"))
	}
	for _, a := range allowedCopies {
		assert.Contains(t, groups, a, "allowedCopies names a group that is no longer one: drop it")
	}
}

// The check finds a copy wherever it is, and leaves fuzz corpora alone.
func TestCopiesFindsACopy(t *testing.T) {
	top := t.TempDir()
	write := func(rel, body string) {
		path := filepath.Join(top, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	write("testdata/providers/openai/a.json", `{"a":1}`)
	write("replay/testdata/a.json", `{"a":1}`)
	write("replay/testdata/b.json", `{"b":1}`)
	write("replay/testdata/fuzz/FuzzRead/seed", `{"b":1}`)
	write("record/testdata/fuzz/FuzzDecode/seed", `{"b":1}`)
	write("replay/notdata/c.json", `{"a":1}`)
	write(".git/testdata/a.json", `{"a":1}`)

	groups, err := copies(top)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"replay/testdata/a.json", "testdata/providers/openai/a.json"}}, groups)
}

var (
	// "## OpenAI ... (`providers/openai/`)": the files of the table below
	// are in that directory of testdata/.
	corpusSection = regexp.MustCompile("^## .*\\(`([^`]+/)`\\)\\s*$")
	// "<sha256>  <path under testdata/>", as sha256sum writes it.
	corpusHash = regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
)

// corpusREADME reads testdata/README.md: the files its tables list (the
// first cell of a row, names separated by commas, under a heading that
// names their directory; a name ending in / stands for a directory), and
// the sha256 lines, each path relative to testdata/.
func corpusREADME(t *testing.T, path string) (listed []string, hashes map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	hashes = map[string]string{}
	dir := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			dir = ""
			if m := corpusSection.FindStringSubmatch(line); m != nil {
				dir = m[1]
			}
			continue
		}
		if m := corpusHash.FindStringSubmatch(line); m != nil {
			_, dup := hashes[m[2]]
			assert.False(t, dup, "testdata/README.md gives %s two hashes", m[2])
			hashes[m[2]] = m[1]
			continue
		}
		if dir == "" || !strings.HasPrefix(line, "|") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		first = strings.TrimSpace(strings.ReplaceAll(first, "`", ""))
		if first == "file" || strings.Trim(first, "-:") == "" {
			continue // the header row and the rule under it
		}
		for name := range strings.SplitSeq(first, ",") {
			listed = append(listed, dir+strings.TrimSpace(name))
		}
	}
	require.NoError(t, sc.Err())
	return listed, hashes
}

// testdata/README.md and testdata/ agree: every file listed is there,
// every file there is listed (or its directory is), once.
func TestCorpusREADMEListsEveryFile(t *testing.T) {
	corpus := filepath.Join(root(t), "testdata")
	listed, _ := corpusREADME(t, filepath.Join(corpus, "README.md"))
	require.NotEmpty(t, listed, "testdata/README.md lists files in tables under headings naming their directory")

	var present []string
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(corpus, path)
		if rel != "README.md" {
			present = append(present, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)

	seen := map[string]bool{}
	for _, name := range listed {
		assert.False(t, seen[name], "testdata/README.md lists %s twice", name)
		seen[name] = true
		_, err := os.Stat(filepath.Join(corpus, filepath.FromSlash(name)))
		assert.NoError(t, err, "testdata/README.md lists %s, which is not there", name)
	}
	for _, file := range present {
		covered := slices.ContainsFunc(listed, func(name string) bool {
			return name == file || strings.HasSuffix(name, "/") && strings.HasPrefix(file, name)
		})
		assert.True(t, covered, "testdata/%s is not in testdata/README.md: add its row (where it came from)", file)
	}
}

// Every provider payload has its sha256 in testdata/README.md, and still
// has it: a capture is kept byte for byte.
func TestCorpusPayloadsKeepTheirBytes(t *testing.T) {
	corpus := filepath.Join(root(t), "testdata")
	_, hashes := corpusREADME(t, filepath.Join(corpus, "README.md"))
	for name, want := range hashes {
		b, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(name)))
		if !assert.NoError(t, err, "testdata/README.md gives a hash for %s", name) {
			continue
		}
		sum := sha256.Sum256(b)
		assert.Equal(t, want, hex.EncodeToString(sum[:]), "testdata/%s is not the bytes its hash in testdata/README.md says", name)
	}
	payloads, err := filepath.Glob(filepath.Join(corpus, "providers", "*", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, payloads)
	for _, p := range payloads {
		rel, _ := filepath.Rel(corpus, p)
		_, ok := hashes[filepath.ToSlash(rel)]
		assert.True(t, ok, "testdata/%s has no sha256 line in testdata/README.md", filepath.ToSlash(rel))
	}
}
