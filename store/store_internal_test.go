package store

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/migrations.golden (only for a new migration)")

func FuzzRefs(f *testing.F) {
	f.Add([]byte{}, int64(0))
	f.Add([]byte{2, 4, 1, 0x80}, int64(7))
	f.Add(appendRefs(nil, 100, []int64{101, 102, 90, 1 << 40}), int64(100))
	f.Fuzz(func(t *testing.T, b []byte, prev int64) {
		ids, err := decodeRefs(nil, prev, b) // never panics
		if err != nil {
			return
		}
		// What decodes encodes to bytes that decode the same (not always
		// the same bytes: a varint may be written longer than it needs).
		again, err := decodeRefs(nil, prev, appendRefs([]byte{}, prev, ids))
		require.NoError(t, err)
		assert.Equal(t, ids, again)
	})
}

func TestRefsRoundTrip(t *testing.T) {
	for _, ids := range [][]int64{nil, {1}, {5, 6, 7, 8}, {9, 3, 1 << 50, 2}} {
		for _, prev := range []int64{0, 4, 1 << 40} {
			got, err := decodeRefs(nil, prev, appendRefs(nil, prev, ids))
			require.NoError(t, err)
			assert.Equal(t, ids, got)
		}
	}
	_, err := decodeRefs(nil, 0, []byte{0x80})
	assert.ErrorIs(t, err, errBadRefs)
	// Consecutive IDs, as a conversation's are, take a byte each.
	assert.Len(t, appendRefs(nil, 1000, []int64{1001, 1002, 1003}), 3)
}

func FuzzCursor(f *testing.F) {
	f.Add("")
	f.Add(cursor{1732356000000000, 42}.String())
	f.Add("not a cursor")
	f.Add("MTIzLjQ1Ng")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			assert.ErrorIs(t, err, ErrBadCursor)
			return
		}
		back, err := parseCursor(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, back)
	})
}

func TestSearchWords(t *testing.T) {
	assert.Equal(t, []string{"Where", "is", "order", "4471"}, words(`Where is "order" #4471?`))
	assert.Equal(t, `"naïve" "café"`, ftsQuery("naïve café!"))
	assert.Equal(t, "", ftsQuery(`"*" ( ) - ^`), "no words: no query")
	assert.Equal(t, `"AND" "NEAR"`, ftsQuery("AND NEAR"), "operators are words, quoted")
}

func TestPlaceholders(t *testing.T) {
	s := &Store{d: dialectOf(SQLite)}
	assert.Equal(t, "a = ? AND b IN (?,?)", s.q("a = $1 AND b IN ($2,$3)"), "in order, once each: plain ?")
	assert.Equal(t, "a < ?1 OR (a = ?1 AND b < ?2)", s.q("a < $1 OR (a = $1 AND b < $2)"), "used twice: numbered")
	assert.Equal(t, "x = ?2 AND y = ?1", s.q("x = $2 AND y = $1"))
	pg := &Store{d: dialectOf(PostgreSQL)}
	assert.Equal(t, "a = $1", pg.q("a = $1"))
	assert.Equal(t, "(?,?,?)", s.tuple(4, 3))
	assert.Equal(t, "($4,$5,$6)", pg.tuple(4, 3))
}

// A page's cursor condition, in each of its three senses.
func TestCursorConditions(t *testing.T) {
	var args []any
	c := cursor{ts: 100, seq: 7}
	assert.Equal(t, "(r.ts < $1 OR (r.ts = $1 AND r.seq < $2))", c.before(&args))
	assert.Equal(t, "(r.ts > $3 OR (r.ts = $3 AND r.seq >= $4))", c.atOrNewer(&args))
	assert.Equal(t, "(r.ts > $5 OR (r.ts = $5 AND r.seq > $6))", c.newer(&args))
	assert.Equal(t, []any{int64(100), int64(7), int64(100), int64(7), int64(100), int64(7)}, args)
}

func TestRedactURL(t *testing.T) {
	assert.Equal(t, "postgres://llm:xxxxx@db:5432/h", redactURL("postgres://llm:s3cret@db:5432/h"))
	assert.Equal(t, "postgres://llm@db/h", redactURL("postgres://llm@db/h"))
	assert.Equal(t, "sqlite:history.db", redactURL("sqlite:history.db"))
}

func TestSchemaErrorNamesBothVersions(t *testing.T) {
	err := &SchemaError{Found: 3, Known: 1}
	assert.Equal(t, "store: schema version 3 was written by a newer llmhistory; this one knows versions up to 1: upgrade llmhistory to read it", err.Error())
	err = &SchemaError{Found: 1, Known: 2, ReadOnly: true}
	assert.Contains(t, err.Error(), "schema version 1 is older than this llmhistory's 2")
}

// A released migration is never edited: a change to the schema is a new
// migration at the end, so that a store of every released version can be
// brought up to this one. Each migration's SQL is pinned by its hash; run
// with -update only after adding a migration.
func TestMigrationsAreAppendOnly(t *testing.T) {
	var got strings.Builder
	for i, m := range migrations {
		require.Equal(t, i+1, m.version, "versions count up from 1")
		// A migration may change one backend only (version 4: SQLite's
		// index of a user's rollups), never neither.
		require.NotEmpty(t, append(slices.Clone(m.sqlite), m.postgres...), "version %d changes nothing", m.version)
		fmt.Fprintf(&got, "%d sqlite %x\n", m.version, sha256.Sum256([]byte(strings.Join(m.sqlite, ";\n"))))
		fmt.Fprintf(&got, "%d postgres %x\n", m.version, sha256.Sum256([]byte(strings.Join(m.postgres, ";\n"))))
	}
	assert.Equal(t, SchemaVersion, migrations[len(migrations)-1].version)
	path := filepath.Join("testdata", "migrations.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	// Every pinned line must still be there, unchanged; new ones may follow.
	gotLines := strings.Split(got.String(), "\n")
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		assert.True(t, slices.Contains(gotLines, line), "released migration changed: %s (add a new migration instead)", line)
	}
	assert.Equal(t, string(want), got.String(), "a new migration: run go test ./store -run Migrations -update")
}

// The store links no database driver: a program links the backends it
// imports, and nothing else. Beside the standard library it links one
// module, the DEFLATE writer its documents are compressed with
// (doc_codec.go says why).
func TestStoreLinksNoDriver(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, pkg := range strings.Fields(string(out)) {
		ours := strings.HasPrefix(pkg, "github.com/llmhistory/llmhistory/")
		assert.True(t, ours || strings.HasPrefix(pkg, "github.com/klauspost/compress/"), "package store links %s", pkg)
	}
}

// The dictionary stored documents are compressed with is fixed once
// released: a new one takes a new first byte.
func TestDocDictPinned(t *testing.T) {
	assert.Equal(t, "7700d14b", fmt.Sprintf("%x", sha256.Sum256([]byte(docDict1)))[:8], "docDict1 changed: stored records would not read; add docDict2 and a new first byte instead")
	for _, doc := range []string{`{"call_id":"x"}`, `{"call_id":"01JD2Q8Z3XKQ4M9R7T5V6W8Y0A","timestamp":"2026-11-23T10:00:00.000000Z","speaker":"user","method_name":"openai.chat.completions.create","args":[],"kwargs":{},"outcome_summary":{"status":"ok","ok":true,"retriable":false},"history_record_appended":true,"conversation_history_size":0,"history_access_detected":false,"history_query_patterns":[],"version":1}`} {
		enc := encodeDoc([]byte(doc))
		dec, err := decodeDoc(enc)
		require.NoError(t, err)
		assert.Equal(t, doc, string(dec))
	}
	_, err := decodeDoc([]byte{0x7f, 1, 2})
	assert.ErrorContains(t, err, "unknown form")
}

// Whatever a record's document holds, what is stored reads back as it
// was, through the standard library's DEFLATE reader.
func FuzzDocRoundTrip(f *testing.F) {
	f.Add([]byte(docDict1))
	f.Add([]byte(`{"call_id":"x"}`))
	f.Add(bytes.Repeat([]byte(`{"a":"\u00e9\u00e9"}`), 4000))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) == 0 || doc[0] != '{' {
			return // a document is a JSON object
		}
		got, err := decodeDoc(encodeDoc(doc))
		require.NoError(t, err)
		require.Equal(t, doc, got)
	})
}

func FuzzDecodeDoc(f *testing.F) {
	f.Add(encodeDoc([]byte(docDict1)))
	f.Add([]byte{docFlate1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeDoc(b) // never panics
	})
}

// countRefs counts IDs whatever their varints' lengths: near, far, back.
func TestCountRefs(t *testing.T) {
	ids := []int64{5, 6, 70, 1 << 20, 3, 1 << 40, 1<<40 + 1}
	refs := appendRefs(nil, 0, ids)
	require.Greater(t, len(refs), len(ids), "some IDs take several bytes")
	assert.Equal(t, len(ids), countRefs(refs))
	back, err := decodeRefs(nil, 0, refs)
	require.NoError(t, err)
	assert.Equal(t, ids, back)
	assert.Zero(t, countRefs(nil))
}
